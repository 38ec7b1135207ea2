//! The `ros2msg` schema encoding: a ROS 2 message definition with its
//! dependencies embedded, as rosbag2 writes it into MCAP Schema records.
//!
//! Owns the text grammar: the top-level type's `.msg` text first, then one
//! section per dependency, each after a separator line of `=` (rosbag2
//! writes exactly 80; any run of three or more is accepted, as
//! mcap-ros2-support does) and a `MSG: <type>` line. Type names are accepted
//! as `pkg/Type`, `pkg/msg/Type`, a bare `Type` (same package as the
//! referring type) and the ROS 1 spelling `Header` (= `std_msgs/Header`
//! when the package has no `Header` of its own). Field lines: `type name`,
//! `type name default` (the default is ignored: it is not on the wire),
//! `type NAME=value` (a constant: skipped), comments `# …`, builtin types
//! `bool byte char int8…int64 uint8…uint64 float32 float64 string wstring`,
//! bounded `string<=N`, arrays `T[]`, `T[N]`, `T[<=N]`.
//! `builtin_interfaces/Time` and `builtin_interfaces/Duration` are builtin
//! here (their wire form is fixed), whether or not the text embeds them;
//! ROS 1's `time` and `duration` are taken as the same.
//!
//! Must not: know about columns or CDR (that is `layout` and `cdr`).
//! Every error names the 1-based line of the schema text.

use std::collections::HashMap;

use super::{McapError, McapResult};

/// Deepest nesting of message types accepted (guards recursion in the
/// layout and decoder).
pub const MAX_NESTING: usize = 32;

/// A ROS 2 builtin numeric or boolean type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Primitive {
    Bool,
    /// Unsigned 8-bit (`byte` is `octet` in ROS 2's IDL).
    Byte,
    /// Unsigned 8-bit in ROS 2.
    Char,
    Int8,
    UInt8,
    Int16,
    UInt16,
    Int32,
    UInt32,
    Int64,
    UInt64,
    Float32,
    Float64,
}

impl Primitive {
    pub fn from_name(name: &str) -> Option<Primitive> {
        Some(match name {
            "bool" => Primitive::Bool,
            "byte" => Primitive::Byte,
            "char" => Primitive::Char,
            "int8" => Primitive::Int8,
            "uint8" => Primitive::UInt8,
            "int16" => Primitive::Int16,
            "uint16" => Primitive::UInt16,
            "int32" => Primitive::Int32,
            "uint32" => Primitive::UInt32,
            "int64" => Primitive::Int64,
            "uint64" => Primitive::UInt64,
            "float32" => Primitive::Float32,
            "float64" => Primitive::Float64,
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            Primitive::Bool => "bool",
            Primitive::Byte => "byte",
            Primitive::Char => "char",
            Primitive::Int8 => "int8",
            Primitive::UInt8 => "uint8",
            Primitive::Int16 => "int16",
            Primitive::UInt16 => "uint16",
            Primitive::Int32 => "int32",
            Primitive::UInt32 => "uint32",
            Primitive::Int64 => "int64",
            Primitive::UInt64 => "uint64",
            Primitive::Float32 => "float32",
            Primitive::Float64 => "float64",
        }
    }

    /// Bytes on the wire (also the CDR alignment).
    pub fn size(self) -> usize {
        match self {
            Primitive::Bool
            | Primitive::Byte
            | Primitive::Char
            | Primitive::Int8
            | Primitive::UInt8 => 1,
            Primitive::Int16 | Primitive::UInt16 => 2,
            Primitive::Int32 | Primitive::UInt32 | Primitive::Float32 => 4,
            Primitive::Int64 | Primitive::UInt64 | Primitive::Float64 => 8,
        }
    }
}

/// The element type of a field.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BaseType {
    Primitive(Primitive),
    /// `string` or `string<=N`.
    String {
        bound: Option<u32>,
    },
    /// `wstring` or `wstring<=N`.
    WString {
        bound: Option<u32>,
    },
    /// `builtin_interfaces/Time`: int32 sec, uint32 nanosec.
    Time,
    /// `builtin_interfaces/Duration`: int32 sec, uint32 nanosec.
    Duration,
    /// A message type: index into [`MessageSchema::types`].
    Message(usize),
}

/// Single value, fixed array or sequence.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Multiplicity {
    Single,
    /// `T[N]`: N elements, no count on the wire.
    Fixed(u32),
    /// `T[]` or `T[<=N]`: a u32 count, then the elements.
    Sequence {
        bound: Option<u32>,
    },
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldDef {
    pub name: String,
    pub base: BaseType,
    pub multiplicity: Multiplicity,
    /// The type as written (`float64[9]`, `std_msgs/Header`).
    pub type_text: String,
    /// 1-based line in the schema text.
    pub line: usize,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MessageDef {
    pub package: String,
    pub name: String,
    pub fields: Vec<FieldDef>,
}

impl MessageDef {
    /// `pkg/msg/Type`.
    pub fn full_name(&self) -> String {
        format!("{}/msg/{}", self.package, self.name)
    }
}

/// A parsed schema: the top-level type and every type it uses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MessageSchema {
    pub types: Vec<MessageDef>,
    /// Index of the top-level type in `types`.
    pub root: usize,
}

impl MessageSchema {
    pub fn root_type(&self) -> &MessageDef {
        &self.types[self.root]
    }
}

/// A field line before its type is resolved.
struct RawField {
    type_token: String,
    name: String,
    line: usize,
}

struct Section {
    package: String,
    name: String,
    fields: Vec<RawField>,
    /// Line of the `MSG:` header (or 1 for the top type).
    line: usize,
}

/// `(package, Type)` from `pkg/Type`, `pkg/msg/Type` or `Type`.
fn split_type_name<'a>(name: &'a str, package: &'a str) -> Option<(&'a str, &'a str)> {
    let parts: Vec<&str> = name.split('/').collect();
    let (pkg, ty) = match parts.as_slice() {
        [ty] => (package, *ty),
        [pkg, ty] => (*pkg, *ty),
        [pkg, _kind, ty] => (*pkg, *ty),
        _ => return None,
    };
    let ident =
        |s: &str| !s.is_empty() && s.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'_');
    (ident(ty) && (pkg.is_empty() || ident(pkg))).then_some((pkg, ty))
}

fn is_separator(line: &str) -> bool {
    let t = line.trim();
    t.len() >= 3 && t.bytes().all(|c| c == b'=')
}

/// Parses `ros2msg` text. `schema_name` is the Schema record's name
/// (`sensor_msgs/msg/Imu`), which names the top-level type.
pub fn parse_ros2msg(schema_name: &str, text: &str) -> McapResult<MessageSchema> {
    let err = |line: usize, detail: String| McapError::Schema {
        schema: schema_name.to_string(),
        line,
        detail,
    };
    let (root_pkg, root_name) = split_type_name(schema_name.trim(), "")
        .ok_or_else(|| err(0, format!("{schema_name:?} is not a message type name")))?;
    let mut sections = vec![Section {
        package: root_pkg.to_string(),
        name: root_name.to_string(),
        fields: Vec::new(),
        line: 1,
    }];
    let mut expect_msg_header = false;
    for (i, raw_line) in text.lines().enumerate() {
        let line_no = i + 1;
        if is_separator(raw_line) {
            expect_msg_header = true;
            continue;
        }
        let line = raw_line.trim();
        if expect_msg_header {
            if line.is_empty() {
                continue;
            }
            let Some(name) = line.strip_prefix("MSG:") else {
                return Err(err(
                    line_no,
                    format!("expected \"MSG: <type>\" after the separator line, found {line:?}"),
                ));
            };
            let name = name.trim();
            let (pkg, ty) = split_type_name(name, "")
                .filter(|(pkg, _)| !pkg.is_empty())
                .ok_or_else(|| err(line_no, format!("{name:?} is not a pkg/Type name")))?;
            sections.push(Section {
                package: pkg.to_string(),
                name: ty.to_string(),
                fields: Vec::new(),
                line: line_no,
            });
            expect_msg_header = false;
            continue;
        }
        if let Some(field) = parse_field_line(line, line_no).map_err(|d| err(line_no, d))? {
            if let Some(section) = sections.last_mut() {
                section.fields.push(field);
            }
        }
    }
    if expect_msg_header {
        return Err(err(
            text.lines().count(),
            "the text ends after a separator line, without \"MSG: <type>\"".to_string(),
        ));
    }

    // Type index: first definition wins (dependencies appear once; a
    // repeated identical section is harmless).
    let mut index: HashMap<(String, String), usize> = HashMap::new();
    let mut types: Vec<MessageDef> = Vec::new();
    let mut kept: Vec<&Section> = Vec::new();
    for s in &sections {
        let key = (s.package.clone(), s.name.clone());
        if index.contains_key(&key) {
            continue;
        }
        index.insert(key, types.len());
        types.push(MessageDef {
            package: s.package.clone(),
            name: s.name.clone(),
            fields: Vec::new(),
        });
        kept.push(s);
    }
    for (ti, s) in kept.iter().enumerate() {
        let mut fields = Vec::with_capacity(s.fields.len());
        for f in &s.fields {
            let (base, multiplicity) =
                resolve_type(&f.type_token, &s.package, &index).map_err(|d| err(f.line, d))?;
            if fields.iter().any(|g: &FieldDef| g.name == f.name) {
                return Err(err(
                    f.line,
                    format!(
                        "field {:?} is defined twice in {}/{}",
                        f.name, s.package, s.name
                    ),
                ));
            }
            fields.push(FieldDef {
                name: f.name.clone(),
                base,
                multiplicity,
                type_text: f.type_token.clone(),
                line: f.line,
            });
        }
        types[ti].fields = fields;
    }
    let schema = MessageSchema { types, root: 0 };
    check_nesting(&schema, &kept, schema_name)?;
    Ok(schema)
}

/// Rejects a type that contains itself and nesting deeper than
/// [`MAX_NESTING`].
fn check_nesting(
    schema: &MessageSchema,
    sections: &[&Section],
    schema_name: &str,
) -> McapResult<()> {
    // 0 = unvisited, 1 = on the stack, 2 = done (with its depth below).
    let mut state = vec![0u8; schema.types.len()];
    let mut depth_below = vec![0usize; schema.types.len()];
    fn visit(
        t: usize,
        schema: &MessageSchema,
        sections: &[&Section],
        state: &mut [u8],
        depth_below: &mut [usize],
        stack_depth: usize,
        schema_name: &str,
    ) -> McapResult<usize> {
        let err = |line: usize, detail: String| McapError::Schema {
            schema: schema_name.to_string(),
            line,
            detail,
        };
        if stack_depth > MAX_NESTING {
            return Err(err(
                sections[t].line,
                format!("message types nest deeper than {MAX_NESTING} levels"),
            ));
        }
        match state[t] {
            2 => return Ok(depth_below[t]),
            1 => {
                return Err(err(
                    sections[t].line,
                    format!(
                        "{}/{} contains itself",
                        schema.types[t].package, schema.types[t].name
                    ),
                ))
            }
            _ => {}
        }
        state[t] = 1;
        let mut deepest = 0;
        for f in &schema.types[t].fields {
            if let BaseType::Message(u) = f.base {
                let d = visit(
                    u,
                    schema,
                    sections,
                    state,
                    depth_below,
                    stack_depth + 1,
                    schema_name,
                )
                .map_err(|e| match e {
                    McapError::Schema {
                        schema,
                        line,
                        detail,
                    } if line == sections[u].line => McapError::Schema {
                        schema,
                        line: f.line,
                        detail,
                    },
                    other => other,
                })?;
                deepest = deepest.max(d + 1);
            }
        }
        if stack_depth + deepest > MAX_NESTING {
            return Err(err(
                sections[t].line,
                format!("message types nest deeper than {MAX_NESTING} levels"),
            ));
        }
        state[t] = 2;
        depth_below[t] = deepest;
        Ok(deepest)
    }
    visit(
        schema.root,
        schema,
        sections,
        &mut state,
        &mut depth_below,
        0,
        schema_name,
    )?;
    Ok(())
}

/// One line of a .msg text: `None` for blank lines, comments and constants.
fn parse_field_line(line: &str, line_no: usize) -> Result<Option<RawField>, String> {
    if line.is_empty() || line.starts_with('#') {
        return Ok(None);
    }
    let type_end = line
        .find(|c: char| c.is_whitespace())
        .ok_or_else(|| format!("{line:?} has a type but no field name"))?;
    let type_token = &line[..type_end];
    if let Some(bad) = type_token
        .chars()
        .find(|&c| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '/' | '<' | '=' | '[' | ']')))
    {
        return Err(format!(
            "unexpected character {bad:?} in type {type_token:?}"
        ));
    }
    let rest = line[type_end..].trim_start();
    let name_end = rest
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(rest.len());
    let name = &rest[..name_end];
    if name.is_empty() {
        return Err(format!(
            "expected a field name after the type {type_token:?}"
        ));
    }
    if name.as_bytes()[0].is_ascii_digit() {
        return Err(format!("field name {name:?} starts with a digit"));
    }
    let tail = &rest[name_end..];
    if let Some(c) = tail.chars().next() {
        if !(c.is_whitespace() || c == '=' || c == '#') {
            return Err(format!(
                "unexpected character {c:?} after field name {name:?}"
            ));
        }
    }
    let after = tail.trim_start();
    if after.starts_with('=') {
        // A constant: not serialized.
        return Ok(None);
    }
    // Anything else after the name is a default value or a comment: not
    // on the wire either.
    Ok(Some(RawField {
        type_token: type_token.to_string(),
        name: name.to_string(),
        line: line_no,
    }))
}

fn parse_bound(s: &str, what: &str) -> Result<u32, String> {
    s.parse::<u32>()
        .map_err(|_| format!("{what} {s:?} is not a whole number"))
}

/// Resolves a type token (`float64[9]`, `string<=8[<=3]`, `Header`).
fn resolve_type(
    token: &str,
    package: &str,
    index: &HashMap<(String, String), usize>,
) -> Result<(BaseType, Multiplicity), String> {
    let (base, multiplicity) = match token.find('[') {
        None => (token, Multiplicity::Single),
        Some(open) => {
            let suffix = &token[open..];
            let inner = suffix
                .strip_prefix('[')
                .and_then(|s| s.strip_suffix(']'))
                .filter(|s| !s.contains(['[', ']']))
                .ok_or_else(|| format!("malformed array type {token:?}"))?;
            let m = if inner.is_empty() {
                Multiplicity::Sequence { bound: None }
            } else if let Some(b) = inner.strip_prefix("<=") {
                Multiplicity::Sequence {
                    bound: Some(parse_bound(b, "sequence bound")?),
                }
            } else {
                Multiplicity::Fixed(parse_bound(inner, "array length")?)
            };
            (&token[..open], m)
        }
    };
    if base.is_empty() {
        return Err(format!("malformed type {token:?}"));
    }
    if let Some(p) = Primitive::from_name(base) {
        return Ok((BaseType::Primitive(p), multiplicity));
    }
    for (prefix, wide) in [("string", false), ("wstring", true)] {
        if let Some(rest) = base.strip_prefix(prefix) {
            let bound = if rest.is_empty() {
                None
            } else if let Some(b) = rest.strip_prefix("<=") {
                Some(parse_bound(b, "string bound")?)
            } else {
                continue;
            };
            let t = if wide {
                BaseType::WString { bound }
            } else {
                BaseType::String { bound }
            };
            return Ok((t, multiplicity));
        }
    }
    if base.contains('<') || base.contains('=') {
        return Err(format!("malformed type {token:?}"));
    }
    match base {
        "time" => return Ok((BaseType::Time, multiplicity)),
        "duration" => return Ok((BaseType::Duration, multiplicity)),
        _ => {}
    }
    let (pkg, ty) =
        split_type_name(base, package).ok_or_else(|| format!("malformed type name {base:?}"))?;
    if pkg == "builtin_interfaces" && ty == "Time" {
        return Ok((BaseType::Time, multiplicity));
    }
    if pkg == "builtin_interfaces" && ty == "Duration" {
        return Ok((BaseType::Duration, multiplicity));
    }
    if let Some(&i) = index.get(&(pkg.to_string(), ty.to_string())) {
        return Ok((BaseType::Message(i), multiplicity));
    }
    // ROS 1 habit: a bare `Header` means std_msgs/Header.
    if base == "Header" {
        if let Some(&i) = index.get(&("std_msgs".to_string(), "Header".to_string())) {
            return Ok((BaseType::Message(i), multiplicity));
        }
    }
    Err(format!(
        "unknown type {pkg}/{ty}: it is neither builtin nor defined by a MSG: section"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    const SEP: &str =
        "================================================================================";

    fn imu_text(msg_spelling: &str) -> String {
        let s = |pkg: &str, t: &str| {
            if msg_spelling == "msg" {
                format!("{pkg}/msg/{t}")
            } else {
                format!("{pkg}/{t}")
            }
        };
        format!(
            "# This is a message to hold data from an IMU\n\
             std_msgs/Header header\n\n\
             geometry_msgs/Quaternion orientation\n\
             float64[9] orientation_covariance # Row major about x, y, z axes\n\n\
             geometry_msgs/Vector3 angular_velocity\n\
             float64[9] angular_velocity_covariance\n\
             geometry_msgs/Vector3 linear_acceleration\n\
             float64[9] linear_acceleration_covariance\n\
             \n{SEP}\nMSG: {}\n\
             # Standard metadata\n\
             builtin_interfaces/Time stamp\n\
             string frame_id\n\
             \n{SEP}\nMSG: {}\n\
             float64 x 0\nfloat64 y 0\nfloat64 z 0\nfloat64 w 1\n\
             \n{SEP}\nMSG: {}\n\
             float64 x\nfloat64 y\nfloat64 z\n",
            s("std_msgs", "Header"),
            s("geometry_msgs", "Quaternion"),
            s("geometry_msgs", "Vector3"),
        )
    }

    #[test]
    fn imu_with_both_dependency_spellings() {
        for spelling in ["plain", "msg"] {
            let schema = parse_ros2msg("sensor_msgs/msg/Imu", &imu_text(spelling)).unwrap();
            let root = schema.root_type();
            assert_eq!(
                (root.package.as_str(), root.name.as_str()),
                ("sensor_msgs", "Imu")
            );
            let names: Vec<&str> = root.fields.iter().map(|f| f.name.as_str()).collect();
            assert_eq!(
                names,
                [
                    "header",
                    "orientation",
                    "orientation_covariance",
                    "angular_velocity",
                    "angular_velocity_covariance",
                    "linear_acceleration",
                    "linear_acceleration_covariance"
                ]
            );
            assert_eq!(root.fields[2].multiplicity, Multiplicity::Fixed(9));
            let BaseType::Message(h) = root.fields[0].base else {
                panic!()
            };
            assert_eq!(schema.types[h].fields[0].base, BaseType::Time);
            assert_eq!(
                schema.types[h].fields[1].base,
                BaseType::String { bound: None }
            );
            let BaseType::Message(q) = root.fields[1].base else {
                panic!()
            };
            assert_eq!(
                schema.types[q].fields.len(),
                4,
                "defaults parsed and ignored"
            );
        }
    }

    #[test]
    fn constants_comments_bounds_and_relative_names() {
        let text = format!(
            "uint8 POWER_SUPPLY_STATUS_UNKNOWN = 0\nuint8 OK=0 # comment\nstring S=\"a # b\"\n\
             byte level\nstring<=10 name\nstring<=4[<=3] tags\nint32[<=5] few\nKeyValue[] values\n\
             Header header\ntime t\nbuiltin_interfaces/msg/Duration d\n\
             {SEP}\nMSG: diagnostic_msgs/KeyValue\nstring key\nstring value\n\
             {SEP}\nMSG: std_msgs/Header\nbuiltin_interfaces/Time stamp\nstring frame_id\n"
        );
        let s = parse_ros2msg("diagnostic_msgs/msg/DiagnosticStatus", &text).unwrap();
        let f = &s.root_type().fields;
        assert_eq!(f.len(), 8);
        assert_eq!(f[0].base, BaseType::Primitive(Primitive::Byte));
        assert_eq!(f[1].base, BaseType::String { bound: Some(10) });
        assert_eq!(f[2].base, BaseType::String { bound: Some(4) });
        assert_eq!(f[2].multiplicity, Multiplicity::Sequence { bound: Some(3) });
        assert_eq!(f[3].multiplicity, Multiplicity::Sequence { bound: Some(5) });
        assert!(matches!(f[4].base, BaseType::Message(i) if s.types[i].name == "KeyValue"));
        assert!(matches!(f[5].base, BaseType::Message(i) if s.types[i].name == "Header"));
        assert_eq!(f[6].base, BaseType::Time);
        assert_eq!(f[7].base, BaseType::Duration);
        assert_eq!(f[4].line, 8);
    }

    #[test]
    fn errors_name_the_line() {
        let e = parse_ros2msg("a/msg/B", "int32 x\nfoo/Bar y\n").unwrap_err();
        assert!(
            matches!(&e, McapError::Schema { line: 2, detail, .. } if detail.contains("foo/Bar")),
            "{e}"
        );
        let e = parse_ros2msg("a/msg/B", "int32 x\nint32\n").unwrap_err();
        assert!(matches!(e, McapError::Schema { line: 2, .. }), "{e}");
        let e = parse_ros2msg("a/msg/B", "int32[3x] x\n").unwrap_err();
        assert!(matches!(e, McapError::Schema { line: 1, .. }), "{e}");
        let e = parse_ros2msg("a/msg/B", &format!("int32 x\n{SEP}\nint32 y\n")).unwrap_err();
        assert!(matches!(e, McapError::Schema { line: 3, .. }), "{e}");
        let e = parse_ros2msg("a/msg/B", "B inner\n").unwrap_err();
        assert!(e.to_string().contains("contains itself"), "{e}");
        let e = parse_ros2msg("a/msg/B", "int32 x\nint32 x\n").unwrap_err();
        assert!(matches!(e, McapError::Schema { line: 2, .. }), "{e}");
        let e = parse_ros2msg("a/msg/B", "int32 x;\n").unwrap_err();
        assert!(matches!(e, McapError::Schema { line: 1, .. }), "{e}");
    }

    #[test]
    fn nesting_is_bounded() {
        let mut text = String::from("T0 a\n");
        for i in 0..40 {
            text.push_str(&format!("{SEP}\nMSG: p/T{i}\nT{} a\n", i + 1));
        }
        text.push_str(&format!("{SEP}\nMSG: p/T40\nint32 x\n"));
        let e = parse_ros2msg("p/msg/Root", &text).unwrap_err();
        assert!(e.to_string().contains("nest deeper"), "{e}");
    }
}
