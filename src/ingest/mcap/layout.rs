//! The tables a topic becomes: names, columns and SQL types, derived once
//! per schema from a parsed ROS 2 message type (or a JSON schema, in
//! `json`), plus the wire-order skeleton the CDR compiler turns into its
//! decode program.
//!
//! Every topic table starts with `recording text, log_time timestamptz,
//! publish_time timestamptz, sequence bigint`, then one column per field in
//! wire order:
//! - nested structs are flattened with `_` (`pose_pose_position_x`); an
//!   empty struct has no column;
//! - `builtin_interfaces/Time` is one `timestamptz` (sec · 10⁹ + nanosec
//!   nanoseconds), `Duration` one `bigint` of nanoseconds;
//! - bool → boolean; byte, char, int8, uint8, int16 → smallint; uint16,
//!   int32 → integer; uint32, int64, uint64 → bigint (a uint64 above
//!   2⁶³−1 is a decode error naming the field); float32 → real; float64 →
//!   double precision; string, wstring → text;
//! - fixed arrays and sequences of those → PostgreSQL arrays (`real[]`,
//!   `text[]`, `timestamptz[]`, …), except byte/uint8 ones → bytea;
//! - fixed arrays and sequences of structs → a child table
//!   `<table>_<field>` whose rows carry `recording, log_time, sequence`,
//!   one `<field>_idx integer` (0-based) per enclosing sequence, outermost
//!   first, then the struct's own fields, flattened the same way.
//!
//! Names: topic → table by [`table_name_for_topic`]; column names are the
//! field names lowercased with anything but `[a-z0-9_]` replaced by `_`; a
//! name already taken in its table (a field called `sequence`, or `a_b`
//! beside a struct `a` with field `b`) gets `_2`, `_3`, … appended.
//!
//! Must not: read bytes or know how values are encoded (that is `cdr` and
//! `json`).

use std::collections::HashSet;

use crate::types::array::ArrayElem;
use crate::types::DataType;

use super::ros2msg::{BaseType, MessageSchema, Multiplicity, Primitive, MAX_NESTING};
use super::{McapError, McapResult};

/// What a column holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ColumnRole {
    /// The recording's name (`recording text`).
    Recording,
    /// Message.log_time (`log_time timestamptz`).
    LogTime,
    /// Message.publish_time (`publish_time timestamptz`), top-level tables only.
    PublishTime,
    /// Message.sequence (`sequence bigint`).
    Sequence,
    /// A 0-based position in the enclosing sequence at this depth (0 = the
    /// outermost), child tables only.
    Index { depth: usize },
    /// A message field.
    Field,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ColumnLayout {
    pub name: String,
    pub data_type: DataType,
    pub role: ColumnRole,
    /// The field's path in the message (`header.stamp`), empty for the
    /// leading columns.
    pub source: String,
    /// The field's type as the schema writes it (`float64[9]`).
    pub source_type: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableLayout {
    /// The table's name (after [`TopicLayout::for_table`]).
    pub name: String,
    /// The part after the topic table's name (`status_values`), empty for
    /// the topic table itself.
    pub suffix: String,
    /// The table whose rows these rows belong to (`None` for the topic table).
    pub parent: Option<usize>,
    /// The field path of the sequence (`status.values`).
    pub source: String,
    pub columns: Vec<ColumnLayout>,
}

impl TableLayout {
    pub fn column_types(&self) -> Vec<DataType> {
        self.columns.iter().map(|c| c.data_type).collect()
    }
    pub fn column_index(&self, name: &str) -> Option<usize> {
        self.columns.iter().position(|c| c.name == name)
    }
}

/// All tables of one topic: `tables[0]` is the topic's table, then the
/// child tables, each after its parent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TopicLayout {
    pub tables: Vec<TableLayout>,
}

impl TopicLayout {
    pub fn main(&self) -> &TableLayout {
        &self.tables[0]
    }

    /// The same layout with table names made from the topic table's name.
    pub fn for_table(&self, table: &str) -> TopicLayout {
        let mut out = self.clone();
        for t in &mut out.tables {
            t.name = if t.suffix.is_empty() {
                table.to_string()
            } else {
                format!("{table}_{}", t.suffix)
            };
        }
        out
    }
}

/// `/camera/image_raw` → `camera_image_raw`: leading `/` stripped, any
/// byte but an ASCII letter or digit → `_`, lowercased; `t_` before a
/// leading digit, `topic` for an empty name. Different topics can meet in
/// one name (`/a/b` and `/a_b`): the caller must check.
pub fn table_name_for_topic(topic: &str) -> String {
    let name = sql_identifier(topic.trim_start_matches('/'));
    if name.is_empty() {
        "topic".to_string()
    } else if name.as_bytes()[0].is_ascii_digit() {
        format!("t_{name}")
    } else {
        name
    }
}

/// Lowercase ASCII letters, digits and `_`; any other byte → `_`.
pub(crate) fn sql_identifier(s: &str) -> String {
    s.bytes()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase() as char
            } else {
                '_'
            }
        })
        .collect()
}

/// Most wire steps (≈ columns) one message type may flatten into: types
/// reused at several places multiply, and a hostile schema could otherwise
/// ask for billions of columns.
pub const MAX_FLATTENED_FIELDS: usize = 10_000;

/// A leaf value's wire type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum WireElem {
    Prim(Primitive),
    String,
    WString,
    Time,
    Duration,
}

/// One value, a fixed array or a sequence.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Shape {
    Single,
    Fixed(u32),
    Sequence,
}

/// The wire-order skeleton of a message: what `cdr` compiles.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum WireStep {
    /// A value into `column` of the current table.
    Value {
        column: usize,
        elem: WireElem,
        shape: Shape,
        path: String,
    },
    /// A struct with no fields: one padding byte on the wire.
    EmptyStruct {
        path: String,
    },
    /// A fixed array or sequence of structs: each element is a row of
    /// table `child`; the steps up to the matching `Exit` are its body.
    Enter {
        child: usize,
        shape: Shape,
        path: String,
    },
    Exit,
}

/// The SQL type of a single value.
pub(crate) fn scalar_type(elem: WireElem) -> DataType {
    match elem {
        WireElem::Prim(p) => match p {
            Primitive::Bool => DataType::Bool,
            Primitive::Byte
            | Primitive::Char
            | Primitive::Int8
            | Primitive::UInt8
            | Primitive::Int16 => DataType::Int16,
            Primitive::UInt16 | Primitive::Int32 => DataType::Int32,
            Primitive::UInt32 | Primitive::Int64 | Primitive::UInt64 => DataType::Int64,
            Primitive::Float32 => DataType::Float32,
            Primitive::Float64 => DataType::Float64,
        },
        WireElem::String | WireElem::WString => DataType::Text,
        WireElem::Time => DataType::TimestampTz,
        WireElem::Duration => DataType::Int64,
    }
}

/// Whether an array of `elem` is stored as bytea.
pub(crate) fn is_byte_array(elem: WireElem) -> bool {
    matches!(elem, WireElem::Prim(Primitive::Byte | Primitive::UInt8))
}

/// The SQL type of a value of this shape.
pub(crate) fn column_type(elem: WireElem, shape: Shape) -> DataType {
    let scalar = scalar_type(elem);
    match shape {
        Shape::Single => scalar,
        _ if is_byte_array(elem) => DataType::Bytea,
        _ => match ArrayElem::of(scalar) {
            Some(e) => DataType::Array(e),
            None => DataType::Bytea,
        },
    }
}

/// Builds tables with unique column names.
pub(crate) struct TableBuilder {
    pub table: TableLayout,
    taken: HashSet<String>,
}

impl TableBuilder {
    pub fn new(suffix: String, parent: Option<usize>, source: String) -> Self {
        TableBuilder {
            table: TableLayout {
                name: String::new(),
                suffix,
                parent,
                source,
                columns: Vec::new(),
            },
            taken: HashSet::new(),
        }
    }

    /// Adds a column, renaming it when the name is taken; returns its index.
    pub fn add(
        &mut self,
        name: &str,
        data_type: DataType,
        role: ColumnRole,
        source: &str,
        source_type: &str,
    ) -> usize {
        let base = sql_identifier(name);
        let base = if base.is_empty() {
            "column".to_string()
        } else {
            base
        };
        let mut unique = base.clone();
        let mut n = 2;
        while self.taken.contains(&unique) {
            unique = format!("{base}_{n}");
            n += 1;
        }
        self.taken.insert(unique.clone());
        self.table.columns.push(ColumnLayout {
            name: unique,
            data_type,
            role,
            source: source.to_string(),
            source_type: source_type.to_string(),
        });
        self.table.columns.len() - 1
    }

    /// The leading columns of a topic table.
    pub fn topic_table() -> Self {
        let mut t = TableBuilder::new(String::new(), None, String::new());
        t.add("recording", DataType::Text, ColumnRole::Recording, "", "");
        t.add(
            "log_time",
            DataType::TimestampTz,
            ColumnRole::LogTime,
            "",
            "",
        );
        t.add(
            "publish_time",
            DataType::TimestampTz,
            ColumnRole::PublishTime,
            "",
            "",
        );
        t.add("sequence", DataType::Int64, ColumnRole::Sequence, "", "");
        t
    }
}

struct Ros2LayoutBuilder<'a> {
    schema: &'a MessageSchema,
    tables: Vec<TableBuilder>,
    /// Per table, the names of its index columns (outermost first).
    index_names: Vec<Vec<String>>,
    steps: Vec<WireStep>,
}

/// The layout of a ROS 2 message type (table names relative: apply
/// [`TopicLayout::for_table`]) and its wire skeleton.
pub(crate) fn ros2_layout(schema: &MessageSchema) -> McapResult<(TopicLayout, Vec<WireStep>)> {
    let mut b = Ros2LayoutBuilder {
        schema,
        tables: vec![TableBuilder::topic_table()],
        index_names: vec![Vec::new()],
        steps: Vec::new(),
    };
    b.fields(schema.root, 0, "", "", 0)?;
    if b.steps.is_empty() {
        // A message with no fields still serializes one byte.
        b.steps.push(WireStep::EmptyStruct {
            path: schema.root_type().full_name(),
        });
    }
    Ok((
        TopicLayout {
            tables: b.tables.into_iter().map(|t| t.table).collect(),
        },
        b.steps,
    ))
}

impl Ros2LayoutBuilder<'_> {
    /// The fields of message type `ty` into table `table`, column names
    /// prefixed by `prefix`, paths by `path`.
    fn fields(
        &mut self,
        ty: usize,
        table: usize,
        prefix: &str,
        path: &str,
        depth: usize,
    ) -> McapResult<()> {
        if depth > MAX_NESTING {
            return Err(McapError::Schema {
                schema: self.schema.root_type().full_name(),
                line: 0,
                detail: format!("message types nest deeper than {MAX_NESTING} levels"),
            });
        }
        let def = &self.schema.types[ty];
        for f in &def.fields {
            if self.steps.len() >= MAX_FLATTENED_FIELDS {
                return Err(McapError::Schema {
                    schema: self.schema.root_type().full_name(),
                    line: f.line,
                    detail: format!(
                        "the message flattens into more than {MAX_FLATTENED_FIELDS} fields"
                    ),
                });
            }
            let name = format!("{prefix}{}", f.name);
            let fpath = if path.is_empty() {
                f.name.clone()
            } else {
                format!("{path}.{}", f.name)
            };
            let shape = match f.multiplicity {
                Multiplicity::Single => Shape::Single,
                Multiplicity::Fixed(n) => Shape::Fixed(n),
                Multiplicity::Sequence { .. } => Shape::Sequence,
            };
            let elem = match f.base {
                BaseType::Primitive(p) => WireElem::Prim(p),
                BaseType::String { .. } => WireElem::String,
                BaseType::WString { .. } => WireElem::WString,
                BaseType::Time => WireElem::Time,
                BaseType::Duration => WireElem::Duration,
                BaseType::Message(inner) => {
                    if shape == Shape::Single {
                        if self.schema.types[inner].fields.is_empty() {
                            self.steps.push(WireStep::EmptyStruct { path: fpath });
                        } else {
                            self.fields(inner, table, &format!("{name}_"), &fpath, depth + 1)?;
                        }
                    } else {
                        self.child_table(inner, table, &name, &fpath, shape, depth)?;
                    }
                    continue;
                }
            };
            let column = self.tables[table].add(
                &name,
                column_type(elem, shape),
                ColumnRole::Field,
                &fpath,
                &f.type_text,
            );
            self.steps.push(WireStep::Value {
                column,
                elem,
                shape,
                path: fpath,
            });
        }
        Ok(())
    }

    fn child_table(
        &mut self,
        inner: usize,
        parent: usize,
        name: &str,
        path: &str,
        shape: Shape,
        depth: usize,
    ) -> McapResult<()> {
        let field_name = sql_identifier(name);
        let parent_suffix = &self.tables[parent].table.suffix;
        let suffix = if parent_suffix.is_empty() {
            field_name.clone()
        } else {
            format!("{parent_suffix}_{field_name}")
        };
        let mut child = TableBuilder::new(suffix, Some(parent), path.to_string());
        child.add("recording", DataType::Text, ColumnRole::Recording, "", "");
        child.add(
            "log_time",
            DataType::TimestampTz,
            ColumnRole::LogTime,
            "",
            "",
        );
        child.add("sequence", DataType::Int64, ColumnRole::Sequence, "", "");
        let mut indexes = self.index_names[parent].clone();
        indexes.push(format!("{field_name}_idx"));
        for (d, idx) in indexes.iter().enumerate() {
            child.add(idx, DataType::Int32, ColumnRole::Index { depth: d }, "", "");
        }
        let child_index = self.tables.len();
        self.tables.push(child);
        self.index_names.push(indexes);
        self.steps.push(WireStep::Enter {
            child: child_index,
            shape,
            path: path.to_string(),
        });
        let before = self.steps.len();
        // Column names start afresh in the child; paths stay whole.
        self.fields(inner, child_index, "", path, depth + 1)?;
        if self.steps.len() == before {
            self.steps.push(WireStep::EmptyStruct {
                path: path.to_string(),
            });
        }
        self.steps.push(WireStep::Exit);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ingest::mcap::ros2msg::parse_ros2msg;

    const SEP: &str =
        "================================================================================";

    #[test]
    fn flattening_is_bounded() {
        // Ten fields of ten fields of … : 10⁶ leaves from a few lines.
        let mut text = String::new();
        for _ in 0..10 {
            text.push_str(&format!("A{} f{}\n", 0, text.len()));
        }
        for level in 0..6 {
            text.push_str(&format!("===\nMSG: p/A{level}\n"));
            for i in 0..10 {
                if level == 5 {
                    text.push_str(&format!("int32 x{i}\n"));
                } else {
                    text.push_str(&format!("A{} x{i}\n", level + 1));
                }
            }
        }
        let schema = parse_ros2msg("p/msg/Root", &text).unwrap();
        let e = ros2_layout(&schema).unwrap_err();
        assert!(e.to_string().contains("more than 10000 fields"), "{e}");
    }

    #[test]
    fn topic_names() {
        assert_eq!(
            table_name_for_topic("/camera/image_raw"),
            "camera_image_raw"
        );
        assert_eq!(table_name_for_topic("/joint_states"), "joint_states");
        assert_eq!(table_name_for_topic("/Robot-1/IMU"), "robot_1_imu");
        assert_eq!(table_name_for_topic("/3d/points"), "t_3d_points");
        assert_eq!(table_name_for_topic("/"), "topic");
        assert_eq!(table_name_for_topic("/caméra"), "cam__ra");
    }

    fn names(t: &TableLayout) -> Vec<(&str, DataType)> {
        t.columns
            .iter()
            .map(|c| (c.name.as_str(), c.data_type))
            .collect()
    }

    #[test]
    fn diagnostics_make_child_tables() {
        let text = format!(
            "std_msgs/Header header\nDiagnosticStatus[] status\n\
             {SEP}\nMSG: std_msgs/Header\nbuiltin_interfaces/Time stamp\nstring frame_id\n\
             {SEP}\nMSG: diagnostic_msgs/DiagnosticStatus\nbyte OK=0\nbyte level\nstring name\n\
             string message\nstring hardware_id\nKeyValue[] values\n\
             {SEP}\nMSG: diagnostic_msgs/KeyValue\nstring key\nstring value\n"
        );
        let schema = parse_ros2msg("diagnostic_msgs/msg/DiagnosticArray", &text).unwrap();
        let (layout, steps) = ros2_layout(&schema).unwrap();
        let layout = layout.for_table("diagnostics");
        assert_eq!(layout.tables.len(), 3);
        assert_eq!(
            names(&layout.tables[0]),
            [
                ("recording", DataType::Text),
                ("log_time", DataType::TimestampTz),
                ("publish_time", DataType::TimestampTz),
                ("sequence", DataType::Int64),
                ("header_stamp", DataType::TimestampTz),
                ("header_frame_id", DataType::Text),
            ]
        );
        assert_eq!(layout.tables[1].name, "diagnostics_status");
        assert_eq!(
            names(&layout.tables[1]),
            [
                ("recording", DataType::Text),
                ("log_time", DataType::TimestampTz),
                ("sequence", DataType::Int64),
                ("status_idx", DataType::Int32),
                ("level", DataType::Int16),
                ("name", DataType::Text),
                ("message", DataType::Text),
                ("hardware_id", DataType::Text),
            ]
        );
        assert_eq!(layout.tables[2].name, "diagnostics_status_values");
        assert_eq!(layout.tables[2].parent, Some(1));
        assert_eq!(
            names(&layout.tables[2]),
            [
                ("recording", DataType::Text),
                ("log_time", DataType::TimestampTz),
                ("sequence", DataType::Int64),
                ("status_idx", DataType::Int32),
                ("values_idx", DataType::Int32),
                ("key", DataType::Text),
                ("value", DataType::Text),
            ]
        );
        assert_eq!(
            steps
                .iter()
                .filter(|s| matches!(s, WireStep::Enter { .. }))
                .count(),
            2
        );
    }

    #[test]
    fn types_arrays_and_collisions() {
        let text = "bool b\nchar c\nuint16 u16\nuint32 u32\nuint64 u64\nfloat32[] f\n\
                    uint8[] data\nbyte[4] four\nint8[] small\nstring[] names\n\
                    builtin_interfaces/Time[] times\nbuiltin_interfaces/Duration d\n\
                    int64 sequence\nA a\nint32 a_x\nEmpty e\n\
                    ===\nMSG: p/A\nint32 x\n===\nMSG: p/Empty\n";
        let schema = parse_ros2msg("p/msg/T", text).unwrap();
        let (layout, steps) = ros2_layout(&schema).unwrap();
        let cols = names(layout.main());
        assert_eq!(
            &cols[4..],
            [
                ("b", DataType::Bool),
                ("c", DataType::Int16),
                ("u16", DataType::Int32),
                ("u32", DataType::Int64),
                ("u64", DataType::Int64),
                ("f", DataType::Array(ArrayElem::Float32)),
                ("data", DataType::Bytea),
                ("four", DataType::Bytea),
                ("small", DataType::Array(ArrayElem::Int16)),
                ("names", DataType::Array(ArrayElem::Text)),
                ("times", DataType::Array(ArrayElem::TimestampTz)),
                ("d", DataType::Int64),
                ("sequence_2", DataType::Int64),
                ("a_x", DataType::Int32),
                ("a_x_2", DataType::Int32),
            ]
        );
        assert!(matches!(steps.last(), Some(WireStep::EmptyStruct { .. })));
    }
}
