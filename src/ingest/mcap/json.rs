//! `json` channels: a `jsonschema` schema's top-level properties become
//! columns (number → double precision, integer → bigint, boolean →
//! boolean, string → text, an object with `properties` → its properties
//! flattened with `_`, anything else — arrays, unions, `$ref`s — → jsonb
//! holding the value); a `json` channel without a JSON schema becomes one
//! `data jsonb` column. A property missing from a message, or `null`, is
//! NULL; a value of another type than the schema says is an error naming
//! the property. Modest on purpose: each message is parsed into a
//! `serde_json::Value` (JSON channels are rare in ROS 2 recordings).
//!
//! Must not: know about CDR or container records.

use serde_json::Value;

use super::decode::{push_leading, MessageCtx, Store, TableColumns};
use super::layout::{ColumnRole, TableBuilder, TopicLayout};
use super::ros2msg::MAX_NESTING;
use super::{McapError, McapResult};
use crate::types::DataType;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Number,
    Integer,
    Boolean,
    String,
    Json,
}

#[derive(Debug, Clone)]
struct JsonColumn {
    /// Property names from the message root (empty = the whole message).
    path: Vec<String>,
    kind: Kind,
    column: usize,
}

/// A compiled JSON channel decoder.
#[derive(Debug, Clone)]
pub(crate) struct JsonProgram {
    columns: Vec<JsonColumn>,
}

/// Columns from a JSON schema.
pub(crate) fn compile(schema_name: &str, data: &[u8]) -> McapResult<(TopicLayout, JsonProgram)> {
    let schema: Value = serde_json::from_slice(data).map_err(|e| McapError::Schema {
        schema: schema_name.to_string(),
        line: e.line(),
        detail: format!("the JSON schema does not parse: {e}"),
    })?;
    let mut table = TableBuilder::topic_table();
    let mut columns = Vec::new();
    match schema.get("properties").and_then(Value::as_object) {
        Some(_) => properties(&schema, &mut Vec::new(), &mut table, &mut columns, 0),
        None => {
            // No properties to go by: the whole message.
            let column = table.add("data", DataType::Jsonb, ColumnRole::Field, "", "json");
            columns.push(JsonColumn {
                path: Vec::new(),
                kind: Kind::Json,
                column,
            });
        }
    }
    Ok((
        TopicLayout {
            tables: vec![table.table],
        },
        JsonProgram { columns },
    ))
}

/// One `data jsonb` column holding each message.
pub(crate) fn document() -> (TopicLayout, JsonProgram) {
    let mut table = TableBuilder::topic_table();
    let column = table.add("data", DataType::Jsonb, ColumnRole::Field, "", "json");
    (
        TopicLayout {
            tables: vec![table.table],
        },
        JsonProgram {
            columns: vec![JsonColumn {
                path: Vec::new(),
                kind: Kind::Json,
                column,
            }],
        },
    )
}

/// The single type a property schema names (`"integer"`, or
/// `["integer", "null"]`).
fn single_type(schema: &Value) -> Option<&str> {
    match schema.get("type")? {
        Value::String(s) => Some(s),
        Value::Array(types) => {
            let mut non_null = types
                .iter()
                .filter_map(Value::as_str)
                .filter(|t| *t != "null");
            let first = non_null.next()?;
            non_null.next().is_none().then_some(first)
        }
        _ => None,
    }
}

fn properties(
    schema: &Value,
    path: &mut Vec<String>,
    table: &mut TableBuilder,
    columns: &mut Vec<JsonColumn>,
    depth: usize,
) {
    let Some(props) = schema.get("properties").and_then(Value::as_object) else {
        return;
    };
    for (name, prop) in props {
        path.push(name.clone());
        let kind = match single_type(prop) {
            Some("number") => Some(Kind::Number),
            Some("integer") => Some(Kind::Integer),
            Some("boolean") => Some(Kind::Boolean),
            Some("string") => Some(Kind::String),
            Some("object")
                if depth < MAX_NESTING
                    && prop.get("properties").and_then(Value::as_object).is_some() =>
            {
                None
            }
            _ => Some(Kind::Json),
        };
        match kind {
            None => properties(prop, path, table, columns, depth + 1),
            Some(kind) => {
                let data_type = match kind {
                    Kind::Number => DataType::Float64,
                    Kind::Integer => DataType::Int64,
                    Kind::Boolean => DataType::Bool,
                    Kind::String => DataType::Text,
                    Kind::Json => DataType::Jsonb,
                };
                let column_name = path.join("_");
                let source = path.join(".");
                let source_type = single_type(prop).unwrap_or("json").to_string();
                let column = table.add(
                    &column_name,
                    data_type,
                    ColumnRole::Field,
                    &source,
                    &source_type,
                );
                columns.push(JsonColumn {
                    path: path.clone(),
                    kind,
                    column,
                });
            }
        }
        path.pop();
    }
}

impl JsonProgram {
    /// Decodes one JSON message into the topic table (leading columns
    /// included). On error the table holds a partial row: the caller
    /// truncates.
    pub fn decode(
        &self,
        payload: &[u8],
        ctx: &MessageCtx<'_>,
        t: &mut TableColumns,
        repaired_strings: &mut u64,
    ) -> McapResult<()> {
        let doc: Value = serde_json::from_slice(payload).map_err(|e| McapError::Message {
            field: "(message)".to_string(),
            offset: 0,
            detail: format!("not valid JSON: {e}"),
        })?;
        push_leading(t, ctx);
        for col in &self.columns {
            let value = col
                .path
                .iter()
                .try_fold(&doc, |v, key| v.get(key.as_str()))
                .filter(|v| !v.is_null());
            let (store, slot) = t.slot(col.column);
            let s = slot as usize;
            let mismatch = |want: &str| McapError::Message {
                field: col.path.join("."),
                offset: 0,
                detail: format!(
                    "expected {want}, found {}",
                    value.map_or_else(String::new, |v| v.to_string())
                ),
            };
            let Some(v) = value else {
                match store {
                    Store::Bool => t.bools[s].push(false),
                    Store::I16 => t.i16s[s].push(0),
                    Store::I32 => t.i32s[s].push(0),
                    Store::I64 => t.i64s[s].push(0),
                    Store::F32 => t.f32s[s].push(0.0),
                    Store::F64 => t.f64s[s].push(0.0),
                    Store::Bytes => t.bytes[s].push(&[]),
                }
                t.set_null(col.column);
                continue;
            };
            match col.kind {
                Kind::Number => {
                    let x = v.as_f64().ok_or_else(|| mismatch("a number"))?;
                    t.f64s[s].push(x);
                }
                Kind::Integer => {
                    let x = match (v.as_i64(), v.as_u64(), v.as_f64()) {
                        (Some(i), _, _) => i,
                        (None, Some(u), _) => {
                            return Err(McapError::Overflow {
                                field: col.path.join("."),
                                value: u,
                            })
                        }
                        (None, None, Some(f))
                            if f.fract() == 0.0 && f >= i64::MIN as f64 && f < i64::MAX as f64 =>
                        {
                            f as i64
                        }
                        _ => return Err(mismatch("an integer")),
                    };
                    t.i64s[s].push(x);
                }
                Kind::Boolean => {
                    let x = v.as_bool().ok_or_else(|| mismatch("a boolean"))?;
                    t.bools[s].push(x);
                }
                Kind::String => {
                    let x = v.as_str().ok_or_else(|| mismatch("a string"))?;
                    if x.contains('\0') {
                        *repaired_strings += 1;
                        t.bytes[s].push(x.replace('\0', "\u{FFFD}").as_bytes());
                    } else {
                        t.bytes[s].push(x.as_bytes());
                    }
                }
                Kind::Json => {
                    // jsonb holds PostgreSQL's canonical text.
                    let text = serde_json::to_string(v).map_err(|e| McapError::Message {
                        field: col.path.join("."),
                        offset: 0,
                        detail: e.to_string(),
                    })?;
                    let canonical =
                        crate::types::text::parse_jsonb(&text).map_err(|e| McapError::Message {
                            field: if col.path.is_empty() {
                                "(message)".to_string()
                            } else {
                                col.path.join(".")
                            },
                            offset: 0,
                            detail: e.into_message(),
                        })?;
                    t.bytes[s].push(canonical.as_bytes());
                }
            }
            t.set_valid(col.column);
        }
        t.rows += 1;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exec::vector::ColumnData;
    use crate::types::Datum;

    #[test]
    fn properties_become_columns() {
        let schema = br#"{"type":"object","properties":{
            "speed":{"type":"number"},"count":{"type":["integer","null"]},
            "ok":{"type":"boolean"},"name":{"type":"string"},
            "pose":{"type":"object","properties":{"x":{"type":"number"},"y":{"type":"number"}}},
            "tags":{"type":"array","items":{"type":"string"}}}}"#;
        let (layout, program) = compile("t", schema).unwrap();
        let names: Vec<(&str, DataType)> = layout.main().columns[4..]
            .iter()
            .map(|c| (c.name.as_str(), c.data_type))
            .collect();
        // serde_json orders object keys.
        assert_eq!(
            names,
            [
                ("count", DataType::Int64),
                ("name", DataType::Text),
                ("ok", DataType::Bool),
                ("pose_x", DataType::Float64),
                ("pose_y", DataType::Float64),
                ("speed", DataType::Float64),
                ("tags", DataType::Jsonb),
            ]
        );
        let mut t = TableColumns::new(layout.main());
        let ctx = MessageCtx {
            recording: b"r",
            log_time: 5,
            publish_time: 6,
            sequence: 7,
            payload_file_offset: None,
            payload_in_chunk: None,
        };
        let mut repaired = 0;
        program
            .decode(
                br#"{"speed":1.5,"count":3,"ok":true,"name":"a","pose":{"x":1},"tags":["b", "c"]}"#,
                &ctx,
                &mut t,
                &mut repaired,
            )
            .unwrap();
        program
            .decode(br#"{"speed":2,"count":null}"#, &ctx, &mut t, &mut repaired)
            .unwrap();
        let before = t.rows;
        let e = program
            .decode(br#"{"speed":"fast"}"#, &ctx, &mut t, &mut repaired)
            .unwrap_err();
        assert!(e.to_string().contains("speed"), "{e}");
        t.truncate(before);
        let (cols, _) = t.take(layout.main());
        assert_eq!(cols[4].datum(0), Datum::Int64(3));
        assert_eq!(cols[4].datum(1), Datum::Null);
        assert_eq!(cols[7].datum(1), Datum::Null);
        assert_eq!(cols[9].datum(1), Datum::Float64(2.0));
        assert_eq!(cols[10].datum(0), Datum::Bytes(br#"["b", "c"]"#.to_vec()));
        assert!(matches!(&cols[0].data, ColumnData::Bytes(b) if b.len() == 2));
    }
}
