//! The catalog on disk: `catalog.json` in the data directory, rewritten as a
//! whole on every DDL (write a temporary file, fsync it, rename it over the
//! old one, fsync the directory), before the DDL is acknowledged. DDL is rare
//! and the catalog small, so a snapshot beats a log here.
//! Must not: hold table data (the WAL does) or be read after startup.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;
use std::sync::Arc;

use serde_json::{json, Value};

use super::{
    BlockUndo, BlockUndoEntry, Catalog, ColumnDef, Database, DroppingTable, IngestCreated, ProvisionalKind, ProvisionalObject, FunctionDef, IndexDef, RoleDef, Schema, Sequence, TableDef, ViewDef,
};
use crate::types::DataType;

pub const FILE_NAME: &str = "catalog.json";
const FORMAT: u64 = 1;

/// A stable spelling of a type for the catalog file.
pub fn type_tag(t: DataType) -> String {
    match t {
        DataType::Bool => "bool".into(),
        DataType::Int16 => "int2".into(),
        DataType::Int32 => "int4".into(),
        DataType::Int64 => "int8".into(),
        DataType::Float32 => "float4".into(),
        DataType::Float64 => "float8".into(),
        DataType::Numeric => "numeric".into(),
        DataType::Text => "text".into(),
        DataType::Varchar(None) => "varchar".into(),
        DataType::Varchar(Some(n)) => format!("varchar({n})"),
        DataType::Bpchar(None) => "bpchar".into(),
        DataType::Bpchar(Some(n)) => format!("bpchar({n})"),
        DataType::Bytea => "bytea".into(),
        DataType::Date => "date".into(),
        DataType::Timestamp => "timestamp".into(),
        DataType::TimestampTz => "timestamptz".into(),
        DataType::Interval => "interval".into(),
        DataType::Jsonb => "jsonb".into(),
        DataType::Array(e) => format!("{}[]", type_tag(e.data_type())),
        DataType::Record => "record".into(),
        DataType::Name => "name".into(),
        DataType::Char => "char".into(),
        DataType::Oid => "oid".into(),
        DataType::Unknown => "unknown".into(),
    }
}

pub fn parse_type_tag(s: &str) -> Option<DataType> {
    let with_len = |prefix: &str| {
        s.strip_prefix(prefix)
            .and_then(|r| r.strip_prefix('('))
            .and_then(|r| r.strip_suffix(')'))
            .and_then(|n| n.parse().ok())
    };
    Some(match s {
        "bool" => DataType::Bool,
        "int2" => DataType::Int16,
        "int4" => DataType::Int32,
        "int8" => DataType::Int64,
        "float4" => DataType::Float32,
        "float8" => DataType::Float64,
        "numeric" => DataType::Numeric,
        "text" => DataType::Text,
        "varchar" => DataType::Varchar(None),
        "bpchar" => DataType::Bpchar(None),
        "bytea" => DataType::Bytea,
        "date" => DataType::Date,
        "timestamp" => DataType::Timestamp,
        "timestamptz" => DataType::TimestampTz,
        "interval" => DataType::Interval,
        "jsonb" => DataType::Jsonb,
        "record" => DataType::Record,
        "name" => DataType::Name,
        "char" => DataType::Char,
        "oid" => DataType::Oid,
        _ if s.starts_with("varchar(") => DataType::Varchar(Some(with_len("varchar")?)),
        _ if s.starts_with("bpchar(") => DataType::Bpchar(Some(with_len("bpchar")?)),
        _ if s.ends_with("[]") => {
            DataType::Array(crate::types::array::ArrayElem::of(parse_type_tag(&s[..s.len() - 2])?)?)
        }
        _ => return None,
    })
}

fn table_json(t: &TableDef) -> Value {
    json!({
        "oid": t.oid,
        "name": t.name,
        "time_column": t.time_column,
        "columns": t.columns.iter().map(|c| json!({
            "name": c.name,
            "type": type_tag(c.data_type),
            "not_null": c.not_null,
            "default": c.default.as_ref().map(|d| d.to_string()),
            "numeric_typmod": c.numeric_typmod.map(|(p, s)| vec![p, s]),
            "series_tag": c.series_tag,
            "frame_refs": c.frame_refs,
            "identity": c.identity.map(|i| i.code().to_string()),
        })).collect::<Vec<_>>(),
        "frame_files": t.frame_files,
        "checks": t.checks.iter().map(|c| json!({"oid": c.oid, "name": c.name, "expr": c.expr.to_string()})).collect::<Vec<_>>(),
        "foreign_keys": t.foreign_keys.iter().map(|f| json!({
            "oid": f.oid,
            "name": f.name,
            "columns": f.columns,
            "parent": f.parent,
            "parent_index": f.parent_index,
            "key_positions": f.key_positions,
            "on_delete": f.on_delete.code().to_string(),
            "on_update": f.on_update.code().to_string(),
            "match_full": f.match_full,
        })).collect::<Vec<_>>(),
    })
}

fn index_json(i: &IndexDef) -> Value {
    json!({
        "oid": i.oid,
        "name": i.name,
        "table": i.table,
        "unique": i.unique,
        "primary": i.primary,
        "constraint": i.constraint,
        "method": i.method,
        "keys": i.keys,
        "include": i.include,
        "predicate": i.predicate,
    })
}

fn view_json(v: &ViewDef) -> Value {
    json!({
        "oid": v.oid,
        "name": v.name,
        "columns": v.columns.iter().map(|(n, t)| json!({"name": n, "type": type_tag(*t)})).collect::<Vec<_>>(),
        "query": v.query,
        "depends_on": v.depends_on.iter().map(|(s, n)| vec![s.clone(), n.clone()]).collect::<Vec<_>>(),
    })
}

fn strings(v: &Value, name: &str) -> Result<Vec<String>, String> {
    list(v, name)?
        .iter()
        .map(|x| {
            x.as_str()
                .map(str::to_string)
                .ok_or_else(|| format!("catalog.json: \"{name}\" holds a non-string"))
        })
        .collect()
}

fn index_from(v: &Value) -> Result<IndexDef, String> {
    Ok(IndexDef {
        oid: number(v, "oid")? as u32,
        name: text(v, "name")?,
        table: text(v, "table")?,
        unique: v.get("unique").and_then(|u| u.as_bool()).unwrap_or(false),
        primary: v.get("primary").and_then(|u| u.as_bool()).unwrap_or(false),
        // Catalogs written before the flag: a primary key is always a constraint.
        constraint: v
            .get("constraint")
            .or_else(|| v.get("primary"))
            .and_then(|u| u.as_bool())
            .unwrap_or(false),
        method: text(v, "method")?,
        keys: strings(v, "keys")?,
        include: match v.get("include") {
            Some(_) => strings(v, "include")?,
            None => Vec::new(),
        },
        predicate: v
            .get("predicate")
            .and_then(|p| p.as_str())
            .map(str::to_string),
    })
}

fn view_from(v: &Value, schema: &str) -> Result<ViewDef, String> {
    let mut columns = Vec::new();
    for c in list(v, "columns")? {
        let t = text(c, "type")?;
        columns.push((
            text(c, "name")?,
            parse_type_tag(&t).ok_or_else(|| format!("catalog.json: unknown type {t:?}"))?,
        ));
    }
    let mut depends_on = Vec::new();
    if let Some(deps) = v.get("depends_on").and_then(|d| d.as_array()) {
        for d in deps {
            match d.as_array().map(|p| p.as_slice()) {
                Some([Value::String(s), Value::String(n)]) => {
                    depends_on.push((s.clone(), n.clone()))
                }
                _ => return Err("catalog.json: \"depends_on\" entries are [schema, name]".into()),
            }
        }
    }
    Ok(ViewDef {
        oid: number(v, "oid")? as u32,
        name: text(v, "name")?,
        schema: schema.to_string(),
        columns,
        query: text(v, "query")?,
        depends_on,
    })
}

fn function_json(f: &FunctionDef) -> Value {
    json!({
        "oid": f.oid,
        "name": f.name,
        "args": f.args.iter().map(|(n, t)| json!({"name": n, "type": type_tag(*t)})).collect::<Vec<_>>(),
        "returns": type_tag(f.returns),
        "body": f.body,
    })
}

fn function_from(v: &Value, schema: &str) -> Result<FunctionDef, String> {
    let type_of = |s: String| parse_type_tag(&s).ok_or_else(|| format!("catalog.json: unknown type {s:?}"));
    let mut args = Vec::new();
    for a in list(v, "args")? {
        let name = a.get("name").and_then(|n| n.as_str()).map(str::to_string);
        args.push((name, type_of(text(a, "type")?)?));
    }
    Ok(FunctionDef {
        oid: number(v, "oid")? as u32,
        name: text(v, "name")?,
        schema: schema.to_string(),
        args,
        returns: type_of(text(v, "returns")?)?,
        body: text(v, "body")?,
    })
}

fn provisional_json(p: &ProvisionalObject) -> Value {
    json!({
        "kind": match p.kind {
            ProvisionalKind::Schema => "schema",
            ProvisionalKind::Table => "table",
            ProvisionalKind::View => "view",
            ProvisionalKind::Index => "index",
            ProvisionalKind::Sequence => "sequence",
        },
        "schema": p.schema,
        "name": p.name,
        "oid": p.oid,
    })
}

fn provisional_from(p: &Value) -> Result<ProvisionalObject, String> {
    let kind = match text(p, "kind")?.as_str() {
        "schema" => ProvisionalKind::Schema,
        "table" => ProvisionalKind::Table,
        "view" => ProvisionalKind::View,
        "index" => ProvisionalKind::Index,
        "sequence" => ProvisionalKind::Sequence,
        other => return Err(format!("catalog.json: unknown provisional object kind {other:?}")),
    };
    Ok(ProvisionalObject {
        kind,
        schema: text(p, "schema")?,
        name: text(p, "name")?,
        oid: number(p, "oid")? as u32,
    })
}

/// An open block's in-place change, as `block_undo` lists it.
fn block_undo_json(e: &BlockUndoEntry) -> Value {
    let mut v = match &e.undo {
        BlockUndo::TableAltered { before, indexes } => json!({
            "kind": "table_altered",
            "schema": before.schema,
            "table": table_json(before),
            "indexes": indexes.iter().map(|i| index_json(i)).collect::<Vec<_>>(),
        }),
        BlockUndo::ViewReplaced { previous } => json!({"kind": "view_replaced", "schema": previous.schema, "view": view_json(previous)}),
        BlockUndo::ViewDropped(view) => json!({"kind": "view_dropped", "schema": view.schema, "view": view_json(view)}),
        BlockUndo::IndexDropped { schema, index } => json!({"kind": "index_dropped", "schema": schema, "index": index_json(index)}),
        BlockUndo::IndexRenamed { schema, before } => json!({"kind": "index_renamed", "schema": schema, "index": index_json(before)}),
        BlockUndo::FunctionMade { function, previous } => json!({
            "kind": "function_made",
            "schema": function.schema,
            "function": function_json(function),
            "previous": previous.as_ref().map(|p| function_json(p)),
        }),
        BlockUndo::FunctionDropped(function) => {
            json!({"kind": "function_dropped", "schema": function.schema, "function": function_json(function)})
        }
        BlockUndo::CommentSet { key: (o, c, s), previous } => json!({"kind": "comment_set", "key": [o, c, s], "previous": previous}),
        BlockUndo::SchemaDropped { name, oid, functions, views } => json!({
            "kind": "schema_dropped",
            "name": name,
            "oid": oid,
            "functions": functions.iter().map(|f| function_json(f)).collect::<Vec<_>>(),
            "views": views.iter().map(|v| json!({"schema": v.schema, "view": view_json(v)})).collect::<Vec<_>>(),
        }),
        BlockUndo::SequenceDropped { schema, sequence } => {
            json!({"kind": "sequence_dropped", "schema": schema, "sequence": sequence_json(sequence)})
        }
        BlockUndo::SequenceAltered { schema, oid, before } => json!({
            "kind": "sequence_altered",
            "schema": schema,
            "oid": oid,
            "settings": sequence_json(&Sequence::with_settings(*oid, String::new(), *before)),
        }),
        BlockUndo::TimescaleChanged { table, before } => json!({"kind": "timescale_changed", "table": table, "before": before.to_json()}),
    };
    v["block"] = json!(e.block);
    v
}

fn block_undo_from(v: &Value) -> Result<BlockUndoEntry, String> {
    let part = |name: &str| v.get(name).ok_or_else(|| format!("catalog.json: a block_undo entry without \"{name}\""));
    let schema = || text(v, "schema");
    let undo = match text(v, "kind")?.as_str() {
        "table_altered" => {
            let schema = schema()?;
            let mut indexes = Vec::new();
            for i in list(v, "indexes")? {
                indexes.push(Arc::new(index_from(i)?));
            }
            BlockUndo::TableAltered { before: Arc::new(table_from(part("table")?, &schema)?), indexes }
        }
        "view_replaced" => BlockUndo::ViewReplaced { previous: Arc::new(view_from(part("view")?, &schema()?)?) },
        "view_dropped" => BlockUndo::ViewDropped(Arc::new(view_from(part("view")?, &schema()?)?)),
        "index_dropped" => BlockUndo::IndexDropped { schema: schema()?, index: Arc::new(index_from(part("index")?)?) },
        "index_renamed" => BlockUndo::IndexRenamed { schema: schema()?, before: Arc::new(index_from(part("index")?)?) },
        "function_made" => {
            let schema = schema()?;
            let previous = match part("previous")? {
                Value::Null => None,
                p => Some(Arc::new(function_from(p, &schema)?)),
            };
            BlockUndo::FunctionMade { function: Arc::new(function_from(part("function")?, &schema)?), previous }
        }
        "function_dropped" => BlockUndo::FunctionDropped(Arc::new(function_from(part("function")?, &schema()?)?)),
        "comment_set" => {
            let bad = || "catalog.json: a comment key is not [objoid, classoid, objsubid]".to_string();
            let key = match part("key")?.as_array().map(|a| a.as_slice()) {
                Some([o, c, s]) => (
                    o.as_u64().ok_or_else(bad)? as u32,
                    c.as_u64().ok_or_else(bad)? as u32,
                    s.as_i64().ok_or_else(bad)? as i32,
                ),
                _ => return Err(bad()),
            };
            BlockUndo::CommentSet { key, previous: part("previous")?.as_str().map(str::to_string) }
        }
        "schema_dropped" => {
            let name = text(v, "name")?;
            let mut functions = Vec::new();
            for f in list(v, "functions")? {
                functions.push(Arc::new(function_from(f, &name)?));
            }
            let mut views = Vec::new();
            for x in list(v, "views")? {
                let view = x.get("view").ok_or("catalog.json: a dropped schema's view without its definition")?;
                views.push(Arc::new(view_from(view, &text(x, "schema")?)?));
            }
            BlockUndo::SchemaDropped { name, oid: number(v, "oid")? as u32, functions, views }
        }
        "sequence_dropped" => BlockUndo::SequenceDropped { schema: schema()?, sequence: Arc::new(sequence_from(part("sequence")?)?) },
        "sequence_altered" => BlockUndo::SequenceAltered {
            schema: schema()?,
            oid: number(v, "oid")? as u32,
            before: sequence_from(part("settings")?)?.settings(),
        },
        "timescale_changed" => BlockUndo::TimescaleChanged {
            table: number(v, "table")? as u32,
            before: super::timescale::Timescale::from_json(part("before")?)?,
        },
        other => return Err(format!("catalog.json: unknown block_undo kind {other:?}")),
    };
    Ok(BlockUndoEntry { block: number(v, "block")? as u32, undo })
}

pub fn to_json(catalog: &Catalog, next_oid: u32) -> Value {
    let dbs: Vec<Value> = catalog
        .databases
        .values()
        .map(|d| {
            json!({
                "name": d.name,
                "oid": d.oid,
                "schemas": d.schemas.values().map(|s| json!({
                    "name": s.name,
                    "oid": s.oid,
                    "tables": s.tables.values().map(|t| table_json(t)).collect::<Vec<_>>(),
                    "sequences": s.sequences.values().map(|q| sequence_json(q)).collect::<Vec<_>>(),
                    "indexes": s.indexes.values().map(|i| index_json(i)).collect::<Vec<_>>(),
                    "views": s.views.values().map(|v| view_json(v)).collect::<Vec<_>>(),
                    "functions": s.functions.values().flatten().map(|f| function_json(f)).collect::<Vec<_>>(),
                })).collect::<Vec<_>>(),
                "comments": d.comments.iter().map(|((o, c, s), t)| json!([o, c, s, t])).collect::<Vec<_>>(),
                "provisional": d.provisional.iter().map(provisional_json).collect::<Vec<_>>(),
                "block_undo": d.block_undo.iter().map(block_undo_json).collect::<Vec<_>>(),
                "timescale": d.timescale.to_json(),
                "materialized_views": d.materialized_views.iter().map(|(t, m)| json!({
                    "table": t, "query": m.query, "populated": m.populated,
                })).collect::<Vec<_>>(),
                "ingest_created": d.ingest_created.iter().map(|c| {
                    let mut entry = provisional_json(&c.object);
                    entry["ingest"] = json!(c.ingest);
                    entry
                }).collect::<Vec<_>>(),
                "dropping": d.dropping.iter().map(|x| json!({
                    "schema": x.table.schema,
                    "table": table_json(&x.table),
                    "indexes": x.indexes.iter().map(|i| index_json(i)).collect::<Vec<_>>(),
                    "sequences": x.sequences.iter().map(|q| sequence_json(q)).collect::<Vec<_>>(),
                    "views": x.views.iter().map(|v| json!({"schema": v.schema, "view": view_json(v)})).collect::<Vec<_>>(),
                })).collect::<Vec<_>>(),
            })
        })
        .collect();
    let roles: Vec<Value> = catalog.roles.values().map(|r| role_json(r)).collect();
    json!({ "format": FORMAT, "next_oid": next_oid, "databases": dbs, "roles": roles })
}

fn role_json(r: &RoleDef) -> Value {
    json!({
        "oid": r.oid,
        "name": r.name,
        "superuser": r.superuser,
        "inherit": r.inherit,
        "create_role": r.create_role,
        "create_db": r.create_db,
        "login": r.login,
        "replication": r.replication,
        "bypass_rls": r.bypass_rls,
        "connection_limit": r.connection_limit,
        "password": r.password,
        "valid_until": r.valid_until,
    })
}

fn role_from(v: &Value) -> Result<RoleDef, String> {
    let flag = |name: &str, default: bool| v.get(name).and_then(|b| b.as_bool()).unwrap_or(default);
    let optional_text = |name: &str| v.get(name).and_then(|t| t.as_str()).map(str::to_string);
    Ok(RoleDef {
        oid: number(v, "oid")? as u32,
        name: text(v, "name")?,
        superuser: flag("superuser", false),
        inherit: flag("inherit", true),
        create_role: flag("create_role", false),
        create_db: flag("create_db", false),
        login: flag("login", false),
        replication: flag("replication", false),
        bypass_rls: flag("bypass_rls", false),
        connection_limit: v
            .get("connection_limit")
            .and_then(|n| n.as_i64())
            .map(|n| n.clamp(-1, i32::MAX as i64) as i32)
            .unwrap_or(-1),
        password: optional_text("password"),
        valid_until: optional_text("valid_until"),
    })
}

/// Writes the catalog durably into `dir`.
pub fn save(dir: &Path, catalog: &Catalog, next_oid: u32) -> std::io::Result<()> {
    let tmp = dir.join(format!("{FILE_NAME}.tmp"));
    let text = serde_json::to_vec_pretty(&to_json(catalog, next_oid))?;
    let mut f = std::fs::File::create(&tmp)?;
    f.write_all(&text)?;
    f.sync_all()?;
    std::fs::rename(&tmp, dir.join(FILE_NAME))?;
    crate::wal::sync_dir(dir)
}

fn field<'a>(v: &'a Value, name: &str) -> Result<&'a Value, String> {
    v.get(name)
        .ok_or_else(|| format!("catalog.json: missing \"{name}\""))
}
fn text(v: &Value, name: &str) -> Result<String, String> {
    field(v, name)?
        .as_str()
        .map(str::to_string)
        .ok_or_else(|| format!("catalog.json: \"{name}\" is not a string"))
}
/// A sequence: its settings and where it resumes (past every value it
/// handed out: see `catalog/sequence.rs`).
fn sequence_json(q: &Sequence) -> Value {
    let s = q.settings();
    json!({
        "oid": q.oid,
        "name": q.name,
        "next": q.saved_position(),
        "called": q.is_called(),
        "type": s.data_type.oid(),
        "increment": s.increment,
        "min": s.min,
        "max": s.max,
        "start": s.start,
        "cache": s.cache,
        "cycle": s.cycle,
    })
}

fn sequence_from(q: &Value) -> Result<Sequence, String> {
    let signed = |name: &str, default: i64| -> Result<i64, String> {
        match q.get(name) {
            None => Ok(default),
            Some(v) => v.as_i64().ok_or_else(|| format!("catalog.json: \"{name}\" is not a number")),
        }
    };
    // Files from before CREATE SEQUENCE hold serial sequences with the defaults.
    let defaults = super::SequenceSettings::default();
    let data_type = match q.get("type") {
        None => defaults.data_type,
        Some(t) => t
            .as_u64()
            .and_then(|oid| DataType::from_oid(oid as u32))
            .filter(|t| matches!(t, DataType::Int16 | DataType::Int32 | DataType::Int64))
            .ok_or_else(|| format!("catalog.json: sequence type {t} is not smallint, integer or bigint"))?,
    };
    let settings = super::SequenceSettings {
        data_type,
        increment: signed("increment", defaults.increment)?,
        min: signed("min", defaults.min)?,
        max: signed("max", defaults.max)?,
        start: signed("start", defaults.start)?,
        cache: signed("cache", defaults.cache)?,
        cycle: q.get("cycle").and_then(|c| c.as_bool()).unwrap_or(false),
    };
    let seq = Sequence::with_settings(number(q, "oid")? as u32, text(q, "name")?, settings);
    let next = signed("next", settings.start)?;
    // Files from before "called" was kept: a sequence moved from its start has handed out values.
    let called = q.get("called").and_then(|c| c.as_bool()).unwrap_or(next != settings.start);
    seq.resume_at(next, called);
    Ok(seq)
}

fn number(v: &Value, name: &str) -> Result<u64, String> {
    field(v, name)?
        .as_u64()
        .ok_or_else(|| format!("catalog.json: \"{name}\" is not a number"))
}
fn list<'a>(v: &'a Value, name: &str) -> Result<&'a Vec<Value>, String> {
    field(v, name)?
        .as_array()
        .ok_or_else(|| format!("catalog.json: \"{name}\" is not a list"))
}

fn parse_default(sql: &str) -> Result<sqlparser::ast::Expr, String> {
    let stmts = crate::sql::parse(&format!("SELECT {sql}"))
        .map_err(|e| format!("catalog.json: default {sql:?}: {}", e.message))?;
    if let Some(sqlparser::ast::Statement::Query(q)) = stmts.into_iter().next() {
        if let sqlparser::ast::SetExpr::Select(s) = *q.body {
            if let Some(sqlparser::ast::SelectItem::UnnamedExpr(e)) =
                s.projection.into_iter().next()
            {
                return Ok(e);
            }
        }
    }
    Err(format!(
        "catalog.json: default {sql:?} is not an expression"
    ))
}

fn table_from(v: &Value, schema: &str) -> Result<TableDef, String> {
    let mut columns = Vec::new();
    for c in list(v, "columns")? {
        let t = text(c, "type")?;
        columns.push(ColumnDef {
            name: text(c, "name")?,
            data_type: parse_type_tag(&t)
                .ok_or_else(|| format!("catalog.json: unknown type {t:?}"))?,
            not_null: field(c, "not_null")?.as_bool().unwrap_or(false),
            default: match c.get("default").and_then(|d| d.as_str()) {
                Some(sql) => Some(parse_default(sql)?),
                None => None,
            },
            numeric_typmod: c
                .get("numeric_typmod")
                .and_then(|m| m.as_array())
                .and_then(|m| Some((m.first()?.as_u64()? as u32, m.get(1)?.as_u64()? as u32))),
            series_tag: c.get("series_tag").and_then(|t| t.as_bool()).unwrap_or(false),
            frame_refs: c.get("frame_refs").and_then(|t| t.as_bool()).unwrap_or(false),
            identity: match c.get("identity").and_then(|i| i.as_str()) {
                Some("a") => Some(super::Identity::Always),
                Some("d") => Some(super::Identity::ByDefault),
                _ => None,
            },
        });
    }
    Ok(TableDef {
        oid: number(v, "oid")? as u32,
        name: text(v, "name")?,
        schema: schema.to_string(),
        columns,
        time_column: v
            .get("time_column")
            .and_then(|t| t.as_u64())
            .map(|t| t as usize),
        frame_files: v
            .get("frame_files")
            .and_then(|f| f.as_array())
            .map(|f| f.iter().filter_map(|n| n.as_str().map(str::to_string)).collect())
            .unwrap_or_default(),
        checks: match v.get("checks") {
            // Absent in files written before CHECK constraints.
            None => Vec::new(),
            Some(_) => list(v, "checks")?
                .iter()
                .map(|c| {
                    Ok(super::CheckConstraint {
                        oid: number(c, "oid")? as u32,
                        name: text(c, "name")?,
                        expr: parse_default(&text(c, "expr")?)?,
                    })
                })
                .collect::<Result<Vec<_>, String>>()?,
        },
        foreign_keys: match v.get("foreign_keys") {
            // Absent in files written before foreign keys.
            None => Vec::new(),
            Some(_) => list(v, "foreign_keys")?.iter().map(foreign_key).collect::<Result<Vec<_>, String>>()?,
        },
    })
}

fn foreign_key(f: &Value) -> Result<super::ForeignKey, String> {
    let strings = |name: &str| -> Result<Vec<String>, String> {
        list(f, name)?.iter().map(|c| c.as_str().map(str::to_string).ok_or_else(|| format!("{name}: not a string"))).collect()
    };
    let action = |name: &str| -> Result<super::ReferentialAction, String> {
        text(f, name)?
            .chars()
            .next()
            .and_then(super::ReferentialAction::from_code)
            .ok_or_else(|| format!("{name}: not a referential action"))
    };
    Ok(super::ForeignKey {
        oid: number(f, "oid")? as u32,
        name: text(f, "name")?,
        columns: strings("columns")?,
        parent: number(f, "parent")? as u32,
        parent_index: number(f, "parent_index")? as u32,
        key_positions: list(f, "key_positions")?
            .iter()
            .map(|p| p.as_u64().map(|p| p as usize).ok_or_else(|| "key_positions: not a number".to_string()))
            .collect::<Result<Vec<_>, String>>()?,
        on_delete: action("on_delete")?,
        on_update: action("on_update")?,
        match_full: f.get("match_full").and_then(Value::as_bool).unwrap_or(false),
    })
}

/// Reads `catalog.json` from `dir`: `Ok(None)` when there is none (a new data directory).
pub fn load(dir: &Path) -> Result<Option<(Catalog, u32)>, String> {
    let path = dir.join(FILE_NAME);
    let bytes = match std::fs::read(&path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("cannot read {}: {e}", path.display())),
    };
    let v: Value = serde_json::from_slice(&bytes)
        .map_err(|e| format!("{} is not valid JSON: {e}", path.display()))?;
    if number(&v, "format")? != FORMAT {
        return Err(format!("{} has an unknown format version", path.display()));
    }
    let mut databases = BTreeMap::new();
    let mut next_oid = number(&v, "next_oid")? as u32;
    for d in list(&v, "databases")? {
        let mut schemas = BTreeMap::new();
        for s in list(d, "schemas")? {
            let name = text(s, "name")?;
            let mut schema = Schema {
                oid: number(s, "oid")? as u32,
                name: name.clone(),
                ..Default::default()
            };
            for t in list(s, "tables")? {
                let table = table_from(t, &name)?;
                schema.tables.insert(table.name.clone(), Arc::new(table));
            }
            for q in list(s, "sequences")? {
                let seq = sequence_from(q)?;
                schema.sequences.insert(seq.name.clone(), Arc::new(seq));
            }
            // Absent in files written before indexes and views existed.
            if s.get("indexes").is_some() {
                for i in list(s, "indexes")? {
                    let index = index_from(i)?;
                    schema.indexes.insert(index.name.clone(), Arc::new(index));
                }
            }
            if s.get("views").is_some() {
                for v in list(s, "views")? {
                    let view = view_from(v, &name)?;
                    schema.views.insert(view.name.clone(), Arc::new(view));
                }
            }
            if s.get("functions").is_some() {
                for f in list(s, "functions")? {
                    let function = function_from(f, &name)?;
                    schema
                        .functions
                        .entry(function.name.clone())
                        .or_default()
                        .push(Arc::new(function));
                }
            }
            schemas.insert(name, schema);
        }
        let name = text(d, "name")?;
        let mut comments = BTreeMap::new();
        // Absent in files written before COMMENT ON existed.
        if d.get("comments").is_some() {
            for c in list(d, "comments")? {
                let bad = || "catalog.json: a comment is not [objoid, classoid, objsubid, text]".to_string();
                let (key, text) = match c.as_array().map(|a| a.as_slice()) {
                    Some([o, c, s, t]) => (
                        (
                            o.as_u64().ok_or_else(bad)? as u32,
                            c.as_u64().ok_or_else(bad)? as u32,
                            s.as_i64().ok_or_else(bad)? as i32,
                        ),
                        t.as_str().ok_or_else(bad)?.to_string(),
                    ),
                    _ => return Err(bad()),
                };
                comments.insert(key, text);
            }
        }
        let mut database = Database {
            oid: number(d, "oid")? as u32,
            name,
            schemas,
            comments,
            dropping: Vec::new(),
            provisional: Vec::new(),
            block_undo: Vec::new(),
            ingest_created: Vec::new(),
            timescale: match d.get("timescale") {
                Some(t) => super::timescale::Timescale::from_json(t)?,
                None => Default::default(),
            },
            materialized_views: BTreeMap::new(),
        };
        // Absent in files written before materialized views.
        for m in d.get("materialized_views").and_then(Value::as_array).into_iter().flatten() {
            database.materialized_views.insert(
                number(m, "table")? as u32,
                super::MaterializedView {
                    query: text(m, "query")?,
                    populated: m.get("populated").and_then(Value::as_bool).ok_or("catalog.json: a materialized view without \"populated\"")?,
                },
            );
        }
        // What blocks open when the server stopped created and dropped: they
        // never committed, so it is undone (absent in older files).
        if d.get("dropping").is_some() {
            for x in list(d, "dropping")? {
                let schema = text(x, "schema")?;
                let table = x.get("table").ok_or("catalog.json: a dropping entry without its table")?;
                let table = Arc::new(table_from(table, &schema)?);
                let mut entry = DroppingTable {
                    table: table.clone(),
                    indexes: Vec::new(),
                    sequences: Vec::new(),
                    views: Vec::new(),
                };
                for i in list(x, "indexes")? {
                    entry.indexes.push(Arc::new(index_from(i)?));
                }
                for q in list(x, "sequences")? {
                    entry.sequences.push(Arc::new(sequence_from(q)?));
                }
                for v in list(x, "views")? {
                    let view = v.get("view").ok_or("catalog.json: a dropping view without its definition")?;
                    entry.views.push(Arc::new(view_from(view, &text(v, "schema")?)?));
                }
                database.dropping.push(entry);
            }
        }
        if d.get("provisional").is_some() {
            for p in list(d, "provisional")? {
                database.provisional.push(provisional_from(p)?);
            }
        }
        if d.get("block_undo").is_some() {
            for e in list(d, "block_undo")? {
                database.block_undo.push(block_undo_from(e)?);
            }
        }
        // What unfinished ingests created stays listed: the tables still
        // empty once the WAL is replayed go then (absent in older files).
        if d.get("ingest_created").is_some() {
            for p in list(d, "ingest_created")? {
                database.ingest_created.push(IngestCreated {
                    ingest: number(p, "ingest")? as u32,
                    object: provisional_from(p)?,
                });
            }
        }
        database.undo_open_blocks(|| {
            next_oid += 1;
            next_oid - 1
        });
        database.prune_timescale();
        databases.insert(database.name.clone(), Arc::new(database));
    }
    // Absent in files written before roles existed: the bootstrap roles.
    let roles = match v.get("roles") {
        Some(_) => {
            let mut roles = BTreeMap::new();
            for r in list(&v, "roles")? {
                let role = role_from(r)?;
                roles.insert(role.name.clone(), Arc::new(role));
            }
            roles
        }
        None => super::bootstrap_roles(),
    };
    Ok(Some((Catalog { databases, roles }, next_oid)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::CatalogStore;

    #[test]
    fn catalogs_round_trip_through_the_file() {
        let dir = std::env::temp_dir().join(format!("brewric-catalog-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let store = CatalogStore::new();
        store
            .update_database("brewric", |db| {
                let s = db.schemas.get_mut("public").unwrap();
                let col = |n: &str, t, d: Option<&str>| ColumnDef {
                    name: n.into(),
                    data_type: t,
                    not_null: d.is_some(),
                    default: d.map(|d| parse_default(d).unwrap()),
                    numeric_typmod: None,
                    series_tag: false,
                    frame_refs: false,
                    identity: None,
                };
                s.tables.insert(
                    "t".into(),
                    Arc::new(TableDef {
                        oid: 99,
                        name: "t".into(),
                        schema: "public".into(),
                        columns: vec![
                            ColumnDef {
                                identity: Some(crate::catalog::Identity::Always),
                                ..col("id", DataType::Int32, Some("nextval('public.t_id_seq')"))
                            },
                            col("v", DataType::Varchar(Some(8)), None),
                        ],
                        time_column: Some(0),
                        frame_files: Vec::new(),
                        checks: vec![crate::catalog::CheckConstraint {
                            oid: 98,
                            name: "t_v_check".into(),
                            expr: parse_default("length(v) > 0").unwrap(),
                        }],
                        foreign_keys: vec![crate::catalog::ForeignKey {
                            oid: 97,
                            name: "t_id_fkey".into(),
                            columns: vec!["id".into()],
                            parent: 99,
                            parent_index: 96,
                            key_positions: vec![0],
                            on_delete: crate::catalog::ReferentialAction::Cascade,
                            on_update: crate::catalog::ReferentialAction::SetNull,
                            match_full: true,
                        }],
                    }),
                );
                s.sequences.insert(
                    "t_id_seq".into(),
                    Arc::new(Sequence::new(100, "t_id_seq".into())),
                );
                s.indexes.insert(
                    "t_v_idx".into(),
                    Arc::new(IndexDef {
                        oid: 101,
                        name: "t_v_idx".into(),
                        table: "t".into(),
                        unique: true,
                        primary: false,
                        constraint: false,
                        method: "btree".into(),
                        keys: vec!["v DESC".into()],
                        include: vec!["id".into()],
                        predicate: Some("id > 0".into()),
                    }),
                );
                s.views.insert(
                    "w".into(),
                    Arc::new(ViewDef {
                        oid: 102,
                        name: "w".into(),
                        schema: "public".into(),
                        columns: vec![("v".into(), DataType::Varchar(Some(8)))],
                        query: "SELECT v FROM t".into(),
                        depends_on: vec![("public".into(), "t".into())],
                    }),
                );
                Ok(())
            })
            .unwrap();
        let snap = store.snapshot();
        save(&dir, &snap, 123).unwrap();
        let (back, next) = load(&dir).unwrap().unwrap();
        assert_eq!(next, 123);
        let t = back
            .database("brewric")
            .unwrap()
            .table("public", "t")
            .unwrap()
            .clone();
        assert_eq!(
            *t,
            **snap
                .database("brewric")
                .unwrap()
                .table("public", "t")
                .unwrap()
        );
        let (b, a) = (
            &back.database("brewric").unwrap().schemas["public"],
            &snap.database("brewric").unwrap().schemas["public"],
        );
        assert_eq!(b.indexes["t_v_idx"], a.indexes["t_v_idx"]);
        assert_eq!(b.views["w"], a.views["w"]);
        assert!(back.databases.contains_key("postgres"));
        assert_eq!(back.roles, snap.roles);
        // A file from before roles existed loads with the bootstrap roles.
        let mut old = to_json(&snap, 123);
        old.as_object_mut().unwrap().remove("roles");
        std::fs::write(dir.join(FILE_NAME), serde_json::to_vec(&old).unwrap()).unwrap();
        let (back, _) = load(&dir).unwrap().unwrap();
        assert_eq!(back.roles, crate::catalog::bootstrap_roles());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
