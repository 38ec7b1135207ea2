//! The system catalogs as relations: `pg_catalog.pg_class`, `pg_attribute`,
//! `pg_namespace`, … and `information_schema.tables`, `columns`, …, each
//! computed as rows from one catalog snapshot when a query names it, with
//! PostgreSQL 15's column names, types and order (columns of types Brewric
//! lacks — aclitem[], pg_node_tree, regproc — are text or NULL).
//! The statistics views `pg_stat_activity` and `pg_stat_progress_copy` are
//! computed the same way from the server's registries of sessions and COPYs
//! (`server/activity.rs`, `server/copy_progress.rs`), read once when named;
//! `pg_settings` from the session's settings (`SystemContext::settings`) and
//! the table of settings in `sql/session/settings.rs`.
//! Must not: hold state (every row comes from the snapshot or the
//! registries) or know SQL beyond the text of stored definitions.

use std::collections::HashSet;

use super::{quote_ident, Catalog, Database, IndexDef, TableDef, REWRITE_PREFIX};
use crate::types::{DataType, Datum};

/// OID of the pg_catalog namespace, as in PostgreSQL.
pub const PG_CATALOG_OID: u32 = 11;
/// OID of information_schema (PostgreSQL assigns one at initdb; this is Brewric's).
pub const INFORMATION_SCHEMA_OID: u32 = 13_000;
/// The bootstrap superuser's OID, owner of every object.
pub const OWNER_OID: u32 = 10;
/// The predefined role pg_database_owner, owner of PostgreSQL 15's public schema.
pub const PG_DATABASE_OWNER_OID: u32 = 6171;
/// pg_class's own OID: the classoid of relations in pg_description.
pub const PG_CLASS_OID: u32 = 1259;
pub const PG_NAMESPACE_OID: u32 = 2615;
pub const PG_PROC_OID: u32 = 1255;
/// pg_language's OID of SQL.
const SQL_LANGUAGE_OID: u32 = 14;

pub mod timescaledb_information;

/// What a system relation's rows are computed from.
pub struct SystemContext<'a> {
    pub catalog: &'a Catalog,
    pub db: &'a Database,
    /// The session's user (owner names) and search path (visibility).
    pub user: &'a str,
    pub search_path: &'a [String],
    /// The registries behind the statistics views (None: they are empty).
    pub server: Option<&'a crate::server::Server>,
    /// The session's settings, for pg_settings (None: every setting at its default).
    pub settings: Option<crate::sql::session::settings::SessionSettings<'a>>,
    /// The shards' chunks, for `timescaledb_information.chunks` and
    /// `hypertables` (None: not gathered, no chunks shown).
    pub chunks: Option<&'a [crate::storage::table::ChunkFact]>,
}

/// One system relation: its identity and columns; `rows` computes its content.
pub struct SystemRelation {
    pub schema: &'static str,
    pub name: &'static str,
    pub oid: u32,
    /// 'r' for the pg_catalog tables, 'v' for the views over them.
    pub kind: char,
    pub columns: &'static [(&'static str, DataType)],
    rows: fn(&SystemContext) -> Vec<Vec<Datum>>,
}

impl SystemRelation {
    pub fn rows(&self, ctx: &SystemContext) -> Vec<Vec<Datum>> {
        (self.rows)(ctx)
    }
}

/// The system relation `schema.name`, if there is one.
pub fn lookup(schema: &str, name: &str) -> Option<&'static SystemRelation> {
    RELATIONS
        .iter()
        .chain(timescaledb_information::RELATIONS)
        .find(|r| r.schema == schema && r.name == name)
}

/// The system relation with OID `oid`.
pub fn by_oid(oid: u32) -> Option<&'static SystemRelation> {
    RELATIONS.iter().chain(timescaledb_information::RELATIONS).find(|r| r.oid == oid)
}

pub fn is_system_schema(name: &str) -> bool {
    name == "pg_catalog" || name == "information_schema"
}

use DataType::{
    Bool as B, Char as CH, Int16 as I2, Int32 as I4, Int64 as I8, Name as NM, Oid as OID,
    Text as T, TimestampTz as TZ,
};
const F4: DataType = DataType::Float32;
const VC: DataType = DataType::Varchar(None);
const TEXT_ARRAY: DataType = DataType::Array(crate::types::array::ArrayElem::Text);
const INT2_ARRAY: DataType = DataType::Array(crate::types::array::ArrayElem::Int16);
// oid[] (Brewric keeps OIDs in arrays as bigint elements).
const OID_ARRAY: DataType = DataType::Array(crate::types::array::ArrayElem::Int64);

pub static RELATIONS: &[SystemRelation] = &[
    SystemRelation {
        schema: "pg_catalog",
        name: "pg_namespace",
        oid: PG_NAMESPACE_OID,
        kind: 'r',
        columns: &[
            ("oid", OID),
            ("nspname", NM),
            ("nspowner", OID),
            ("nspacl", TEXT_ARRAY),
        ],
        rows: pg_namespace,
    },
    SystemRelation {
        schema: "pg_catalog",
        name: "pg_class",
        oid: PG_CLASS_OID,
        kind: 'r',
        columns: &[
            ("oid", OID),
            ("relname", NM),
            ("relnamespace", OID),
            ("reltype", OID),
            ("reloftype", OID),
            ("relowner", OID),
            ("relam", OID),
            ("relfilenode", OID),
            ("reltablespace", OID),
            ("relpages", I4),
            ("reltuples", F4),
            ("relallvisible", I4),
            ("reltoastrelid", OID),
            ("relhasindex", B),
            ("relisshared", B),
            ("relpersistence", CH),
            ("relkind", CH),
            ("relnatts", I2),
            ("relchecks", I2),
            ("relhasrules", B),
            ("relhastriggers", B),
            ("relhassubclass", B),
            ("relrowsecurity", B),
            ("relforcerowsecurity", B),
            ("relispopulated", B),
            ("relreplident", CH),
            ("relispartition", B),
            ("relrewrite", OID),
            ("relfrozenxid", OID),
            ("relminmxid", OID),
            ("relacl", TEXT_ARRAY),
            ("reloptions", TEXT_ARRAY),
            ("relpartbound", T),
        ],
        rows: pg_class,
    },
    SystemRelation {
        schema: "pg_catalog",
        name: "pg_attribute",
        oid: 1249,
        kind: 'r',
        columns: &[
            ("attrelid", OID),
            ("attname", NM),
            ("atttypid", OID),
            ("attstattarget", I4),
            ("attlen", I2),
            ("attnum", I2),
            ("attndims", I4),
            ("attcacheoff", I4),
            ("atttypmod", I4),
            ("attbyval", B),
            ("attalign", CH),
            ("attstorage", CH),
            ("attcompression", CH),
            ("attnotnull", B),
            ("atthasdef", B),
            ("atthasmissing", B),
            ("attidentity", CH),
            ("attgenerated", CH),
            ("attisdropped", B),
            ("attislocal", B),
            ("attinhcount", I4),
            ("attcollation", OID),
            ("attacl", TEXT_ARRAY),
            ("attoptions", TEXT_ARRAY),
            ("attfdwoptions", TEXT_ARRAY),
            ("attmissingval", T),
        ],
        rows: pg_attribute,
    },
    SystemRelation {
        schema: "pg_catalog",
        name: "pg_type",
        oid: 1247,
        kind: 'r',
        columns: &[
            ("oid", OID),
            ("typname", NM),
            ("typnamespace", OID),
            ("typowner", OID),
            ("typlen", I2),
            ("typbyval", B),
            ("typtype", CH),
            ("typcategory", CH),
            ("typispreferred", B),
            ("typisdefined", B),
            ("typdelim", CH),
            ("typrelid", OID),
            ("typsubscript", T),
            ("typelem", OID),
            ("typarray", OID),
            ("typinput", T),
            ("typoutput", T),
            ("typreceive", T),
            ("typsend", T),
            ("typmodin", T),
            ("typmodout", T),
            ("typanalyze", T),
            ("typalign", CH),
            ("typstorage", CH),
            ("typnotnull", B),
            ("typbasetype", OID),
            ("typtypmod", I4),
            ("typndims", I4),
            ("typcollation", OID),
            ("typdefaultbin", T),
            ("typdefault", T),
            ("typacl", TEXT_ARRAY),
        ],
        rows: pg_type,
    },
    SystemRelation {
        schema: "pg_catalog",
        name: "pg_index",
        oid: 2610,
        kind: 'r',
        columns: &[
            ("indexrelid", OID),
            ("indrelid", OID),
            ("indnatts", I2),
            ("indnkeyatts", I2),
            ("indisunique", B),
            ("indnullsnotdistinct", B),
            ("indisprimary", B),
            ("indisexclusion", B),
            ("indimmediate", B),
            ("indisclustered", B),
            ("indisvalid", B),
            ("indcheckxmin", B),
            ("indisready", B),
            ("indislive", B),
            ("indisreplident", B),
            ("indkey", T),
            ("indcollation", T),
            ("indclass", T),
            ("indoption", T),
            ("indexprs", T),
            ("indpred", T),
        ],
        rows: pg_index,
    },
    SystemRelation {
        schema: "pg_catalog",
        name: "pg_description",
        oid: 2609,
        kind: 'r',
        columns: &[
            ("objoid", OID),
            ("classoid", OID),
            ("objsubid", I4),
            ("description", T),
        ],
        rows: pg_description,
    },
    SystemRelation {
        schema: "pg_catalog",
        name: "pg_database",
        oid: 1262,
        kind: 'r',
        columns: &[
            ("oid", OID),
            ("datname", NM),
            ("datdba", OID),
            ("encoding", I4),
            ("datlocprovider", CH),
            ("datistemplate", B),
            ("datallowconn", B),
            ("datconnlimit", I4),
            ("datfrozenxid", OID),
            ("datminmxid", OID),
            ("dattablespace", OID),
            ("datcollate", T),
            ("datctype", T),
            ("daticulocale", T),
            ("datcollversion", T),
            ("datacl", TEXT_ARRAY),
        ],
        rows: pg_database,
    },
    SystemRelation {
        schema: "pg_catalog",
        name: "pg_proc",
        oid: PG_PROC_OID,
        kind: 'r',
        columns: &[
            ("oid", OID),
            ("proname", NM),
            ("pronamespace", OID),
            ("proowner", OID),
            ("prolang", OID),
            ("procost", F4),
            ("prorows", F4),
            ("provariadic", OID),
            ("prosupport", T),
            ("prokind", CH),
            ("prosecdef", B),
            ("proleakproof", B),
            ("proisstrict", B),
            ("proretset", B),
            ("provolatile", CH),
            ("proparallel", CH),
            ("pronargs", I2),
            ("pronargdefaults", I2),
            ("prorettype", OID),
            ("proargtypes", T),
            ("proallargtypes", T),
            ("proargmodes", T),
            ("proargnames", TEXT_ARRAY),
            ("proargdefaults", T),
            ("protrftypes", T),
            ("prosrc", T),
            ("probin", T),
            ("prosqlbody", T),
            ("proconfig", TEXT_ARRAY),
            ("proacl", TEXT_ARRAY),
        ],
        rows: pg_proc,
    },
    SystemRelation {
        schema: "pg_catalog",
        name: "pg_am",
        oid: 2601,
        kind: 'r',
        columns: &[
            ("oid", OID),
            ("amname", NM),
            ("amhandler", T),
            ("amtype", CH),
        ],
        rows: pg_am,
    },
    SystemRelation {
        schema: "pg_catalog",
        name: "pg_authid",
        oid: 1260,
        kind: 'r',
        columns: &[
            ("oid", OID),
            ("rolname", NM),
            ("rolsuper", B),
            ("rolinherit", B),
            ("rolcreaterole", B),
            ("rolcreatedb", B),
            ("rolcanlogin", B),
            ("rolreplication", B),
            ("rolbypassrls", B),
            ("rolconnlimit", I4),
            ("rolpassword", T),
            ("rolvaliduntil", TZ),
        ],
        rows: pg_authid,
    },
    SystemRelation {
        schema: "pg_catalog",
        name: "pg_auth_members",
        oid: 1261,
        kind: 'r',
        columns: &[
            ("roleid", OID),
            ("member", OID),
            ("grantor", OID),
            ("admin_option", B),
        ],
        rows: no_rows,
    },
    SystemRelation {
        schema: "pg_catalog",
        name: "pg_roles",
        oid: 12_010,
        kind: 'v',
        columns: &[
            ("rolname", NM),
            ("rolsuper", B),
            ("rolinherit", B),
            ("rolcreaterole", B),
            ("rolcreatedb", B),
            ("rolcanlogin", B),
            ("rolreplication", B),
            ("rolconnlimit", I4),
            ("rolpassword", T),
            ("rolvaliduntil", TZ),
            ("rolbypassrls", B),
            ("rolconfig", TEXT_ARRAY),
            ("oid", OID),
        ],
        rows: pg_roles,
    },
    SystemRelation {
        schema: "pg_catalog",
        name: "pg_user",
        oid: 12_014,
        kind: 'v',
        columns: &[
            ("usename", NM),
            ("usesysid", OID),
            ("usecreatedb", B),
            ("usesuper", B),
            ("userepl", B),
            ("usebypassrls", B),
            ("passwd", T),
            ("valuntil", TZ),
            ("useconfig", TEXT_ARRAY),
        ],
        rows: pg_user,
    },
    SystemRelation {
        schema: "pg_catalog",
        name: "pg_tables",
        oid: 12_003,
        kind: 'v',
        columns: &[
            ("schemaname", NM),
            ("tablename", NM),
            ("tableowner", NM),
            ("tablespace", NM),
            ("hasindexes", B),
            ("hasrules", B),
            ("hastriggers", B),
            ("rowsecurity", B),
        ],
        rows: pg_tables,
    },
    SystemRelation {
        schema: "pg_catalog",
        name: "pg_sequences",
        oid: 12_020,
        kind: 'v',
        columns: &[
            ("schemaname", NM),
            ("sequencename", NM),
            ("sequenceowner", NM),
            // regtype in PostgreSQL: the type's name.
            ("data_type", T),
            ("start_value", I8),
            ("min_value", I8),
            ("max_value", I8),
            ("increment_by", I8),
            ("cycle", B),
            ("cache_size", I8),
            ("last_value", I8),
        ],
        rows: pg_sequences,
    },
    SystemRelation {
        schema: "pg_catalog",
        name: "pg_views",
        oid: 12_007,
        kind: 'v',
        columns: &[
            ("schemaname", NM),
            ("viewname", NM),
            ("viewowner", NM),
            ("definition", T),
        ],
        rows: pg_views,
    },
    SystemRelation {
        schema: "pg_catalog",
        name: "pg_matviews",
        oid: 13_080,
        kind: 'v',
        columns: &[
            ("schemaname", NM),
            ("matviewname", NM),
            ("matviewowner", NM),
            ("tablespace", NM),
            ("hasindexes", B),
            ("ispopulated", B),
            ("definition", T),
        ],
        rows: pg_matviews,
    },
    SystemRelation {
        schema: "pg_catalog",
        name: "pg_indexes",
        oid: 12_015,
        kind: 'v',
        columns: &[
            ("schemaname", NM),
            ("tablename", NM),
            ("indexname", NM),
            ("tablespace", NM),
            ("indexdef", T),
        ],
        rows: pg_indexes,
    },
    SystemRelation {
        schema: "pg_catalog",
        name: "pg_stat_activity",
        oid: 12_222,
        kind: 'v',
        // client_addr is inet and backend_xid/backend_xmin are xid in
        // PostgreSQL; Brewric has neither type, so they are text.
        columns: &[
            ("datid", OID),
            ("datname", NM),
            ("pid", I4),
            ("leader_pid", I4),
            ("usesysid", OID),
            ("usename", NM),
            ("application_name", T),
            ("client_addr", T),
            ("client_hostname", T),
            ("client_port", I4),
            ("backend_start", TZ),
            ("xact_start", TZ),
            ("query_start", TZ),
            ("state_change", TZ),
            ("wait_event_type", T),
            ("wait_event", T),
            ("state", T),
            ("backend_xid", T),
            ("backend_xmin", T),
            ("query_id", I8),
            ("query", T),
            ("backend_type", T),
        ],
        rows: pg_stat_activity,
    },
    SystemRelation {
        schema: "pg_catalog",
        name: "pg_settings",
        oid: 12_104,
        kind: 'v',
        columns: &[
            ("name", T),
            ("setting", T),
            ("unit", T),
            ("category", T),
            ("short_desc", T),
            ("extra_desc", T),
            ("context", T),
            ("vartype", T),
            ("source", T),
            ("min_val", T),
            ("max_val", T),
            ("enumvals", TEXT_ARRAY),
            ("boot_val", T),
            ("reset_val", T),
            ("sourcefile", T),
            ("sourceline", I4),
            ("pending_restart", B),
        ],
        rows: pg_settings,
    },
    SystemRelation {
        schema: "pg_catalog",
        name: "pg_stat_progress_copy",
        oid: 12_420,
        kind: 'v',
        columns: &[
            ("pid", I4),
            ("datid", OID),
            ("datname", NM),
            ("relid", OID),
            ("command", T),
            ("type", T),
            ("bytes_processed", I8),
            ("bytes_total", I8),
            ("tuples_processed", I8),
            ("tuples_excluded", I8),
        ],
        rows: pg_stat_progress_copy,
    },
    SystemRelation {
        schema: "information_schema",
        name: "schemata",
        oid: 13_001,
        kind: 'v',
        columns: &[
            ("catalog_name", NM),
            ("schema_name", NM),
            ("schema_owner", NM),
            ("default_character_set_catalog", NM),
            ("default_character_set_schema", NM),
            ("default_character_set_name", NM),
            ("sql_path", VC),
        ],
        rows: information_schema_schemata,
    },
    SystemRelation {
        schema: "information_schema",
        name: "tables",
        oid: 13_002,
        kind: 'v',
        columns: &[
            ("table_catalog", NM),
            ("table_schema", NM),
            ("table_name", NM),
            ("table_type", VC),
            ("self_referencing_column_name", NM),
            ("reference_generation", VC),
            ("user_defined_type_catalog", NM),
            ("user_defined_type_schema", NM),
            ("user_defined_type_name", NM),
            ("is_insertable_into", VC),
            ("is_typed", VC),
            ("commit_action", VC),
        ],
        rows: information_schema_tables,
    },
    SystemRelation {
        schema: "information_schema",
        name: "columns",
        oid: 13_003,
        kind: 'v',
        columns: &[
            ("table_catalog", NM),
            ("table_schema", NM),
            ("table_name", NM),
            ("column_name", NM),
            ("ordinal_position", I4),
            ("column_default", VC),
            ("is_nullable", VC),
            ("data_type", VC),
            ("character_maximum_length", I4),
            ("character_octet_length", I4),
            ("numeric_precision", I4),
            ("numeric_precision_radix", I4),
            ("numeric_scale", I4),
            ("datetime_precision", I4),
            ("interval_type", VC),
            ("interval_precision", I4),
            ("character_set_catalog", NM),
            ("character_set_schema", NM),
            ("character_set_name", NM),
            ("collation_catalog", NM),
            ("collation_schema", NM),
            ("collation_name", NM),
            ("domain_catalog", NM),
            ("domain_schema", NM),
            ("domain_name", NM),
            ("udt_catalog", NM),
            ("udt_schema", NM),
            ("udt_name", NM),
            ("scope_catalog", NM),
            ("scope_schema", NM),
            ("scope_name", NM),
            ("maximum_cardinality", I4),
            ("dtd_identifier", NM),
            ("is_self_referencing", VC),
            ("is_identity", VC),
            ("identity_generation", VC),
            ("identity_start", VC),
            ("identity_increment", VC),
            ("identity_maximum", VC),
            ("identity_minimum", VC),
            ("identity_cycle", VC),
            ("is_generated", VC),
            ("generation_expression", VC),
            ("is_updatable", VC),
        ],
        rows: information_schema_columns,
    },
    SystemRelation {
        schema: "information_schema",
        name: "views",
        oid: 13_004,
        kind: 'v',
        columns: &[
            ("table_catalog", NM),
            ("table_schema", NM),
            ("table_name", NM),
            ("view_definition", VC),
            ("check_option", VC),
            ("is_updatable", VC),
            ("is_insertable_into", VC),
            ("is_trigger_updatable", VC),
            ("is_trigger_deletable", VC),
            ("is_trigger_insertable_into", VC),
        ],
        rows: information_schema_views,
    },
    SystemRelation {
        schema: "information_schema",
        name: "table_constraints",
        oid: 13_005,
        kind: 'v',
        columns: &[
            ("constraint_catalog", NM),
            ("constraint_schema", NM),
            ("constraint_name", NM),
            ("table_catalog", NM),
            ("table_schema", NM),
            ("table_name", NM),
            ("constraint_type", VC),
            ("is_deferrable", VC),
            ("initially_deferred", VC),
            ("enforced", VC),
            ("nulls_distinct", VC),
        ],
        rows: information_schema_table_constraints,
    },
    SystemRelation {
        schema: "information_schema",
        name: "key_column_usage",
        oid: 13_006,
        kind: 'v',
        columns: &[
            ("constraint_catalog", NM),
            ("constraint_schema", NM),
            ("constraint_name", NM),
            ("table_catalog", NM),
            ("table_schema", NM),
            ("table_name", NM),
            ("column_name", NM),
            ("ordinal_position", I4),
            ("position_in_unique_constraint", I4),
        ],
        rows: information_schema_key_column_usage,
    },
    SystemRelation {
        schema: "information_schema",
        name: "referential_constraints",
        oid: 13_007,
        kind: 'v',
        columns: &[
            ("constraint_catalog", NM),
            ("constraint_schema", NM),
            ("constraint_name", NM),
            ("unique_constraint_catalog", NM),
            ("unique_constraint_schema", NM),
            ("unique_constraint_name", NM),
            ("match_option", VC),
            ("update_rule", VC),
            ("delete_rule", VC),
        ],
        rows: information_schema_referential_constraints,
    },
    SystemRelation {
        schema: "information_schema",
        name: "constraint_column_usage",
        oid: 13_008,
        kind: 'v',
        columns: &[
            ("table_catalog", NM),
            ("table_schema", NM),
            ("table_name", NM),
            ("column_name", NM),
            ("constraint_catalog", NM),
            ("constraint_schema", NM),
            ("constraint_name", NM),
        ],
        rows: information_schema_constraint_column_usage,
    },
    SystemRelation {
        schema: "pg_catalog",
        name: "pg_attrdef",
        oid: 2604,
        kind: 'r',
        columns: &[("oid", OID), ("adrelid", OID), ("adnum", I2), ("adbin", T)],
        rows: pg_attrdef,
    },
    SystemRelation {
        schema: "pg_catalog",
        name: "pg_constraint",
        oid: 2606,
        kind: 'r',
        columns: &[
            ("oid", OID),
            ("conname", NM),
            ("connamespace", OID),
            ("contype", CH),
            ("condeferrable", B),
            ("condeferred", B),
            ("convalidated", B),
            ("conrelid", OID),
            ("contypid", OID),
            ("conindid", OID),
            ("conparentid", OID),
            ("confrelid", OID),
            ("confupdtype", CH),
            ("confdeltype", CH),
            ("confmatchtype", CH),
            ("conislocal", B),
            ("coninhcount", I4),
            ("connoinherit", B),
            ("conkey", INT2_ARRAY),
            ("confkey", INT2_ARRAY),
            ("conpfeqop", T),
            ("conppeqop", T),
            ("conffeqop", T),
            ("confdelsetcols", INT2_ARRAY),
            ("conexclop", T),
            ("conbin", T),
        ],
        rows: pg_constraint,
    },
    SystemRelation {
        schema: "pg_catalog",
        name: "pg_collation",
        oid: 3456,
        kind: 'r',
        columns: &[
            ("oid", OID),
            ("collname", NM),
            ("collnamespace", OID),
            ("collowner", OID),
            ("collprovider", CH),
            ("collisdeterministic", B),
            ("collencoding", I4),
            ("collcollate", T),
            ("collctype", T),
            ("colliculocale", T),
            ("collversion", T),
        ],
        rows: pg_collation,
    },
    SystemRelation {
        schema: "pg_catalog",
        name: "pg_sequence",
        oid: 2224,
        kind: 'r',
        columns: &[
            ("seqrelid", OID),
            ("seqtypid", OID),
            ("seqstart", I8),
            ("seqincrement", I8),
            ("seqmax", I8),
            ("seqmin", I8),
            ("seqcache", I8),
            ("seqcycle", B),
        ],
        rows: pg_sequence,
    },
    SystemRelation {
        schema: "pg_catalog",
        name: "pg_extension",
        oid: 3079,
        kind: 'r',
        columns: &[
            ("oid", OID),
            ("extname", NM),
            ("extowner", OID),
            ("extnamespace", OID),
            ("extrelocatable", B),
            ("extversion", T),
            ("extconfig", T),
            ("extcondition", TEXT_ARRAY),
        ],
        rows: no_rows,
    },
    // Brewric has no extensions to install (psql's CREATE EXTENSION <TAB> reads this).
    SystemRelation {
        schema: "pg_catalog",
        name: "pg_available_extensions",
        oid: 12_081,
        kind: 'v',
        columns: &[
            ("name", NM),
            ("default_version", T),
            ("installed_version", T),
            ("comment", T),
        ],
        rows: no_rows,
    },
    // The zones SET TimeZone and AT TIME ZONE accept, with the offset in force
    // now (psql's SET TIME ZONE <TAB> reads this).
    SystemRelation {
        schema: "pg_catalog",
        name: "pg_timezone_names",
        oid: 12_122,
        kind: 'v',
        columns: &[
            ("name", T),
            ("abbrev", T),
            ("utc_offset", DataType::Interval),
            ("is_dst", B),
        ],
        rows: timezone_name_rows,
    },
    // Brewric reads and sends UTF8 only, so it converts between no encodings
    // (psql's \encoding <TAB> reads this). conproc is regproc in PostgreSQL.
    SystemRelation {
        schema: "pg_catalog",
        name: "pg_conversion",
        oid: 2607,
        kind: 'r',
        columns: &[
            ("oid", OID),
            ("conname", NM),
            ("connamespace", OID),
            ("conowner", OID),
            ("conforencoding", I4),
            ("contoencoding", I4),
            ("conproc", OID),
            ("condefault", B),
        ],
        rows: no_rows,
    },
    SystemRelation {
        schema: "pg_catalog",
        name: "pg_inherits",
        oid: 2611,
        kind: 'r',
        columns: &[
            ("inhrelid", OID),
            ("inhparent", OID),
            ("inhseqno", I4),
            ("inhdetachpending", B),
        ],
        rows: no_rows,
    },
    SystemRelation {
        schema: "pg_catalog",
        name: "pg_policy",
        oid: 3256,
        kind: 'r',
        columns: &[
            ("oid", OID),
            ("polname", NM),
            ("polrelid", OID),
            ("polcmd", CH),
            ("polpermissive", B),
            ("polroles", OID_ARRAY),
            ("polqual", T),
            ("polwithcheck", T),
        ],
        rows: no_rows,
    },
    SystemRelation {
        schema: "pg_catalog",
        name: "pg_statistic_ext",
        oid: 3381,
        kind: 'r',
        columns: &[
            ("oid", OID),
            ("stxrelid", OID),
            ("stxname", NM),
            ("stxnamespace", OID),
            ("stxowner", OID),
            ("stxstattarget", I4),
            ("stxkeys", T),
            ("stxkind", TEXT_ARRAY),
            ("stxexprs", T),
        ],
        rows: no_rows,
    },
    SystemRelation {
        schema: "pg_catalog",
        name: "pg_publication",
        oid: 6104,
        kind: 'r',
        columns: &[
            ("oid", OID),
            ("pubname", NM),
            ("pubowner", OID),
            ("puballtables", B),
            ("pubinsert", B),
            ("pubupdate", B),
            ("pubdelete", B),
            ("pubtruncate", B),
            ("pubviaroot", B),
        ],
        rows: no_rows,
    },
    SystemRelation {
        schema: "pg_catalog",
        name: "pg_publication_namespace",
        oid: 6237,
        kind: 'r',
        columns: &[("oid", OID), ("pnpubid", OID), ("pnnspid", OID)],
        rows: no_rows,
    },
    SystemRelation {
        schema: "pg_catalog",
        name: "pg_publication_rel",
        oid: 6106,
        kind: 'r',
        columns: &[
            ("oid", OID),
            ("prpubid", OID),
            ("prrelid", OID),
            ("prqual", T),
            ("prattrs", INT2_ARRAY),
        ],
        rows: no_rows,
    },
    SystemRelation {
        schema: "pg_catalog",
        name: "pg_depend",
        oid: 2608,
        kind: 'r',
        columns: &[
            ("classid", OID),
            ("objid", OID),
            ("objsubid", I4),
            ("refclassid", OID),
            ("refobjid", OID),
            ("refobjsubid", I4),
            ("deptype", CH),
        ],
        rows: pg_depend,
    },
    SystemRelation {
        schema: "pg_catalog",
        name: "pg_rewrite",
        oid: 2618,
        kind: 'r',
        columns: &[
            ("oid", OID),
            ("rulename", NM),
            ("ev_class", OID),
            ("ev_type", CH),
            ("ev_enabled", CH),
            ("is_instead", B),
            ("ev_qual", T),
            ("ev_action", T),
        ],
        rows: no_rows,
    },
    SystemRelation {
        schema: "pg_catalog",
        name: "pg_trigger",
        oid: 2620,
        kind: 'r',
        columns: &[
            ("oid", OID),
            ("tgrelid", OID),
            ("tgparentid", OID),
            ("tgname", NM),
            ("tgfoid", OID),
            ("tgtype", I2),
            ("tgenabled", CH),
            ("tgisinternal", B),
            ("tgconstrrelid", OID),
            ("tgconstrindid", OID),
            ("tgconstraint", OID),
            ("tgdeferrable", B),
            ("tginitdeferred", B),
            ("tgnargs", I2),
            ("tgattr", T),
            ("tgargs", T),
            ("tgqual", T),
            ("tgoldtable", NM),
            ("tgnewtable", NM),
        ],
        rows: no_rows,
    },
];

/// pg_depend: the only dependencies clients read here are a serial column's
/// sequence on its column (psql's "Owned by:").
fn pg_depend(ctx: &SystemContext) -> Vec<Vec<Datum>> {
    let mut rows = Vec::new();
    for s in ctx.db.schemas.values() {
        for t in s.tables.values().filter(|t| !t.name.starts_with(REWRITE_PREFIX)) {
            for (i, c) in t.columns.iter().enumerate() {
                let Some(seq) = c.default_sequence() else { continue };
                let (schema, name) = seq.split_once('.').unwrap_or((&s.name, &seq));
                let Some(q) = ctx.db.schemas.get(schema).and_then(|s| s.sequences.get(name)) else {
                    continue;
                };
                rows.push(vec![
                    oid(PG_CLASS_OID),
                    oid(q.oid),
                    i4(0),
                    oid(PG_CLASS_OID),
                    oid(t.oid),
                    i4(i as i32 + 1),
                    ch('a'),
                ]);
            }
        }
    }
    rows
}

/// The rows of a catalog whose feature Brewric lacks (policies, publications,
/// inheritance, …): the relation exists, so clients' queries over it run.
fn no_rows(_: &SystemContext) -> Vec<Vec<Datum>> {
    Vec::new()
}

fn timezone_name_rows(_: &SystemContext) -> Vec<Vec<Datum>> {
    let now_ns = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as i128);
    crate::types::zone::zones_at(now_ns)
        .into_iter()
        .map(|z| {
            let offset = crate::types::Interval {
                months: 0,
                days: 0,
                micros: z.utc_offset_secs as i64 * 1_000_000,
            };
            vec![
                Datum::text(z.name.to_string()),
                Datum::text(z.abbrev),
                Datum::Interval(offset),
                Datum::Bool(z.is_dst),
            ]
        })
        .collect()
}

/// pg_attrdef's OID for column `attnum` of table `table_oid` (defaults have no OIDs of their own here).
fn attrdef_oid(table_oid: u32, attnum: usize) -> u32 {
    0x4000_0000u32.wrapping_add(table_oid.wrapping_mul(1600)).wrapping_add(attnum as u32)
}

/// A column DEFAULT as pg_get_expr prints it: `nextval('s'::regclass)`, `'x'::text`, `now()`.
pub fn default_expression(
    ctx: &SystemContext,
    column: &super::ColumnDef,
) -> Option<String> {
    use sqlparser::ast;
    // An identity column has no default in the catalogs (pg_attrdef): its sequence is its identity.
    let expr = column.default.as_ref().filter(|_| column.identity.is_none())?;
    if let ast::Expr::Function(f) = expr {
        if f.name.to_string().eq_ignore_ascii_case("nextval") {
            if let ast::FunctionArguments::List(list) = &f.args {
                if let [ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(ast::Expr::Value(v)))] =
                    list.args.as_slice()
                {
                    if let ast::Value::SingleQuotedString(seq) = &v.value {
                        let shown = match seq.split_once('.') {
                            Some((schema, name)) if ctx.search_path.iter().any(|p| p == schema) => name,
                            _ => seq.as_str(),
                        };
                        return Some(format!("nextval('{}'::regclass)", shown.replace('\'', "''")));
                    }
                }
            }
        }
    }
    if let ast::Expr::Value(v) = expr {
        if let ast::Value::SingleQuotedString(text) = &v.value {
            let t = crate::types::format_type(column.data_type.oid() as i64, None);
            return Some(format!("'{}'::{t}", text.replace('\'', "''")));
        }
    }
    Some(expr.to_string())
}

fn pg_attrdef(ctx: &SystemContext) -> Vec<Vec<Datum>> {
    let mut rows = Vec::new();
    for l in user_relations(ctx.db) {
        let Some(t) = l.table() else { continue };
        for (i, c) in t.columns.iter().enumerate() {
            if let Some(expr) = default_expression(ctx, c) {
                rows.push(vec![
                    oid(attrdef_oid(t.oid, i + 1)),
                    oid(t.oid),
                    i2(i as i16 + 1),
                    text(expr),
                ]);
            }
        }
    }
    rows
}

/// `PRIMARY KEY (id)` / `UNIQUE (a, b)`: a constraint index as pg_get_constraintdef prints it.
pub fn constraint_definition(i: &IndexDef) -> String {
    format!(
        "{} ({})",
        if i.primary { "PRIMARY KEY" } else { "UNIQUE" },
        i.keys.join(", ")
    )
}

/// Every constraint of the database (the PRIMARY KEY and UNIQUE constraints;
/// a constraint's OID is its index's).
pub fn constraints(db: &Database) -> Vec<(u32, &IndexDef)> {
    user_relations(db)
        .into_iter()
        .filter_map(|l| {
            let i = l.index()?;
            i.constraint.then_some((l.namespace, i))
        })
        .collect()
}

fn pg_constraint(ctx: &SystemContext) -> Vec<Vec<Datum>> {
    // conkey as an int2[] of attribute numbers.
    let conkey = |attnums: Vec<i16>| {
        let keys: Vec<Datum> = attnums.into_iter().map(i2).collect();
        Datum::Bytes(crate::types::array::ArrayValue::of(keys).encode(crate::types::array::ArrayElem::Int16))
    };
    let row = |con: u32, name: &str, namespace: u32, contype: char, relid: u32, index: u32, keys: Datum, conbin: Datum| {
        let mut row = vec![oid(con), text(name), oid(namespace), ch(contype), b(false), b(false), b(true), oid(relid), oid(0)];
        row.extend([oid(index), oid(0), oid(0), ch(' '), ch(' '), ch(' '), b(true), i4(0), b(contype != 'c'), keys]);
        row.extend([NULL, NULL, NULL, NULL, NULL, NULL, conbin]);
        row
    };
    let mut rows = Vec::new();
    for (namespace, i) in constraints(ctx.db) {
        let Some(schema) = ctx.db.schemas.values().find(|s| s.oid == namespace) else {
            continue;
        };
        let Some(table) = schema.tables.get(&i.table) else {
            continue;
        };
        let keys = i.keys.iter().map(|k| table.column_index(k.trim_matches('"')).map_or(0, |c| c as i16 + 1)).collect();
        let contype = if i.primary { 'p' } else { 'u' };
        rows.push(row(i.oid, &i.name, namespace, contype, table.oid, i.oid, conkey(keys), NULL));
    }
    for (namespace, table, check) in check_constraints(ctx.db) {
        let keys = check.columns(table).into_iter().map(|c| c as i16 + 1).collect();
        rows.push(row(check.oid, &check.name, namespace, 'c', table.oid, 0, conkey(keys), text(check.definition(false))));
    }
    for f in foreign_key_constraints(ctx.db) {
        let mut r = row(f.fk.oid, &f.fk.name, f.namespace, 'f', f.table.oid, f.fk.parent_index, conkey(f.conkey.clone()), NULL);
        r[11] = oid(f.fk.parent);
        r[12] = ch(f.fk.on_update.code());
        r[13] = ch(f.fk.on_delete.code());
        r[14] = ch(if f.fk.match_full { 'f' } else { 's' });
        r[19] = conkey(f.confkey.clone());
        rows.push(r);
    }
    rows
}

/// A FOREIGN KEY constraint as the catalogs show it.
pub struct ForeignKeyFacts<'a> {
    pub namespace: u32,
    pub table: &'a TableDef,
    pub fk: &'a super::ForeignKey,
    /// Attribute numbers of the referencing and the referenced columns.
    pub conkey: Vec<i16>,
    pub confkey: Vec<i16>,
    /// As pg_get_constraintdef prints it.
    pub definition: String,
}

/// Every FOREIGN KEY constraint of the database whose referenced table and
/// index are there.
pub fn foreign_key_constraints(db: &Database) -> Vec<ForeignKeyFacts<'_>> {
    let mut out = Vec::new();
    for l in user_relations(db) {
        let Some(table) = l.table() else { continue };
        for fk in &table.foreign_keys {
            let Some(parent) = db.table_by_oid(fk.parent) else { continue };
            let Some(index) = db.schemas.get(&parent.schema).and_then(|s| s.indexes.values().find(|i| i.oid == fk.parent_index)) else {
                continue;
            };
            let Some(keys) = index.key_columns(parent) else { continue };
            let referenced: Vec<usize> = fk.key_positions.iter().filter_map(|&p| keys.get(p).copied()).collect();
            let parent_name = if parent.schema == "public" {
                quote_ident(&parent.name)
            } else {
                format!("{}.{}", quote_ident(&parent.schema), quote_ident(&parent.name))
            };
            let names: Vec<String> = referenced.iter().map(|&c| parent.columns[c].name.clone()).collect();
            out.push(ForeignKeyFacts {
                namespace: l.namespace,
                table,
                fk,
                conkey: fk.columns.iter().map(|c| table.column_index(c).map_or(0, |i| i as i16 + 1)).collect(),
                confkey: referenced.iter().map(|&c| c as i16 + 1).collect(),
                definition: fk.definition(&parent_name, &names),
            });
        }
    }
    out
}

/// Every CHECK constraint of the database, with its table's namespace.
pub fn check_constraints(db: &Database) -> Vec<(u32, &TableDef, &super::CheckConstraint)> {
    user_relations(db)
        .into_iter()
        .filter_map(|l| Some((l.namespace, l.table()?)))
        .flat_map(|(namespace, t)| t.checks.iter().map(move |c| (namespace, t, c)))
        .collect()
}

fn pg_collation(_: &SystemContext) -> Vec<Vec<Datum>> {
    let row = |o: u32, name: &str, provider: char, locale: Datum| {
        vec![
            oid(o),
            text(name),
            oid(PG_CATALOG_OID),
            oid(OWNER_OID),
            ch(provider),
            b(true),
            i4(-1),
            locale.clone(),
            locale,
            NULL,
            NULL,
        ]
    };
    vec![
        row(100, "default", 'd', NULL),
        row(950, "C", 'c', text("C")),
        row(951, "POSIX", 'c', text("POSIX")),
    ]
}

/// Every sequence of the database, with its schema.
fn all_sequences(db: &Database) -> impl Iterator<Item = (&super::Schema, &super::Sequence)> {
    db.schemas.values().flat_map(|s| s.sequences.values().map(move |q| (s, &**q)))
}

fn pg_sequence(ctx: &SystemContext) -> Vec<Vec<Datum>> {
    all_sequences(ctx.db)
        .map(|(_, q)| {
            let settings = q.settings();
            vec![
                oid(q.oid),
                oid(settings.data_type.oid()),
                Datum::Int64(settings.start),
                Datum::Int64(settings.increment),
                Datum::Int64(settings.max),
                Datum::Int64(settings.min),
                Datum::Int64(settings.cache),
                b(settings.cycle),
            ]
        })
        .collect()
}

fn pg_sequences(ctx: &SystemContext) -> Vec<Vec<Datum>> {
    all_sequences(ctx.db)
        .map(|(s, q)| {
            let settings = q.settings();
            vec![
                text(&s.name),
                text(&q.name),
                text(ctx.user),
                text(settings.data_type.name()),
                Datum::Int64(settings.start),
                Datum::Int64(settings.min),
                Datum::Int64(settings.max),
                Datum::Int64(settings.increment),
                b(settings.cycle),
                Datum::Int64(settings.cache),
                q.last_value().map_or(NULL, Datum::Int64),
            ]
        })
        .collect()
}

// ---------------------------------------------------------------- values

fn oid(v: u32) -> Datum {
    Datum::Int64(v as i64)
}
fn text(s: impl Into<String>) -> Datum {
    Datum::text(s)
}
/// A `"char"` value; the zero byte (attidentity's "none") prints as nothing,
/// as PostgreSQL's charout prints it.
fn ch(c: char) -> Datum {
    Datum::text(if c == '\0' { String::new() } else { c.to_string() })
}
fn b(v: bool) -> Datum {
    Datum::Bool(v)
}
fn i2(v: i16) -> Datum {
    Datum::Int16(v)
}
fn i4(v: i32) -> Datum {
    Datum::Int32(v)
}
fn opt_i4(v: Option<i32>) -> Datum {
    v.map(Datum::Int32).unwrap_or(Datum::Null)
}
const NULL: Datum = Datum::Null;
fn yes_no(v: bool) -> Datum {
    text(if v { "YES" } else { "NO" })
}

/// A user relation of the current database, in schema order then name order.
enum UserRelation<'a> {
    Table(&'a TableDef),
    View(&'a super::ViewDef),
    Index(&'a IndexDef),
    Sequence,
}

struct Listed<'a> {
    schema: &'a str,
    namespace: u32,
    name: &'a str,
    oid: u32,
    rel: UserRelation<'a>,
}

impl<'a> Listed<'a> {
    fn table(&self) -> Option<&'a TableDef> {
        match self.rel {
            UserRelation::Table(t) => Some(t),
            _ => None,
        }
    }
    fn view(&self) -> Option<&'a super::ViewDef> {
        match self.rel {
            UserRelation::View(v) => Some(v),
            _ => None,
        }
    }
    fn index(&self) -> Option<&'a IndexDef> {
        match self.rel {
            UserRelation::Index(i) => Some(i),
            _ => None,
        }
    }
}

/// Whether table `table` of `schema` has an index (pg_class.relhasindex).
fn has_indexes(db: &Database, schema: &str, table: &str) -> bool {
    db.schemas.get(schema).is_some_and(|s| s.indexes.values().any(|i| i.table == table))
}

/// Every user relation of the database (not the tables an ALTER TABLE rewrite is filling).
fn user_relations<'a>(db: &'a Database) -> Vec<Listed<'a>> {
    let mut out = Vec::new();
    for s in db.schemas.values() {
        let mut push = |name: &'a str, oid: u32, rel| {
            out.push(Listed {
                schema: &s.name,
                namespace: s.oid,
                name,
                oid,
                rel,
            })
        };
        for t in s
            .tables
            .values()
            .filter(|t| !t.name.starts_with(REWRITE_PREFIX))
        {
            push(&t.name, t.oid, UserRelation::Table(t));
        }
        for v in s.views.values() {
            push(&v.name, v.oid, UserRelation::View(v));
        }
        for i in s.indexes.values() {
            push(&i.name, i.oid, UserRelation::Index(i));
        }
        for q in s.sequences.values() {
            push(&q.name, q.oid, UserRelation::Sequence);
        }
    }
    out
}

/// OIDs of every user relation of the database (tables, views, indexes, sequences).
pub fn user_relation_oids(db: &Database) -> Vec<u32> {
    user_relations(db).iter().map(|l| l.oid).collect()
}

fn namespace_oid(schema: &str, db: &Database) -> u32 {
    match schema {
        "pg_catalog" => PG_CATALOG_OID,
        "information_schema" => INFORMATION_SCHEMA_OID,
        s => db.schemas.get(s).map(|s| s.oid).unwrap_or(0),
    }
}

/// OIDs of the relations an unqualified name reaches through the search path
/// (pg_table_is_visible): pg_catalog first, then each schema of the path; a
/// name already reached earlier hides later ones.
pub fn visible_relation_oids(ctx: &SystemContext) -> HashSet<u32> {
    let mut seen_names = HashSet::new();
    let mut out = HashSet::new();
    for r in RELATIONS.iter().filter(|r| r.schema == "pg_catalog") {
        seen_names.insert(r.name.to_string());
        out.insert(r.oid);
    }
    let listed = user_relations(ctx.db);
    for schema in ctx.search_path {
        for l in listed.iter().filter(|l| l.schema == schema) {
            if seen_names.insert(l.name.to_string()) {
                out.insert(l.oid);
            }
        }
    }
    out
}

/// One index key as pg_get_indexdef(index, n, …) prints it: the column or
/// expression, without ordering (`"time" DESC` → `"time"`).
pub fn index_key_column(key: &str) -> String {
    let k = key.trim();
    let lower = k.to_ascii_lowercase();
    let mut end = k.len();
    for suffix in [" nulls first", " nulls last"] {
        if lower[..end].ends_with(suffix) {
            end -= suffix.len();
        }
    }
    for suffix in [" desc", " asc"] {
        if lower[..end].ends_with(suffix) {
            end -= suffix.len();
        }
    }
    k[..end].trim_end().to_string()
}

/// `CREATE [UNIQUE] INDEX name ON schema.table USING method (keys) [INCLUDE (…)] [WHERE …]`
/// as pg_get_indexdef and pg_indexes show it.
pub fn index_definition(schema: &str, i: &IndexDef) -> String {
    let mut s = format!(
        "CREATE {}INDEX {} ON {}.{} USING {} ({})",
        if i.unique { "UNIQUE " } else { "" },
        quote_ident(&i.name),
        quote_ident(schema),
        quote_ident(&i.table),
        i.method,
        i.keys.join(", ")
    );
    if !i.include.is_empty() {
        s.push_str(&format!(" INCLUDE ({})", i.include.join(", ")));
    }
    if let Some(p) = &i.predicate {
        s.push_str(&format!(" WHERE {p}"));
    }
    s
}

// ---------------------------------------------------------------- pg_catalog

fn pg_namespace(ctx: &SystemContext) -> Vec<Vec<Datum>> {
    let mut rows = vec![
        vec![oid(99), text("pg_toast"), oid(OWNER_OID), NULL],
        vec![
            oid(PG_CATALOG_OID),
            text("pg_catalog"),
            oid(OWNER_OID),
            NULL,
        ],
        vec![
            oid(INFORMATION_SCHEMA_OID),
            text("information_schema"),
            oid(OWNER_OID),
            NULL,
        ],
    ];
    for s in ctx.db.schemas.values() {
        // PostgreSQL 15's public schema belongs to pg_database_owner (the database's owner).
        let owner = if s.name == "public" { PG_DATABASE_OWNER_OID } else { OWNER_OID };
        rows.push(vec![oid(s.oid), text(&s.name), oid(owner), NULL]);
    }
    rows
}

/// The access method OIDs of pg_am.
fn am_oid(method: &str) -> u32 {
    match method {
        "hash" => 405,
        "gist" => 783,
        "gin" => 2742,
        "spgist" => 4000,
        "brin" => 3580,
        _ => 403,
    }
}

fn pg_am(_: &SystemContext) -> Vec<Vec<Datum>> {
    let mut rows = vec![vec![
        oid(2),
        text("heap"),
        text("heap_tableam_handler"),
        ch('t'),
    ]];
    for (name, handler) in [
        ("btree", "bthandler"),
        ("hash", "hashhandler"),
        ("gist", "gisthandler"),
        ("gin", "ginhandler"),
        ("spgist", "spghandler"),
        ("brin", "brinhandler"),
    ] {
        rows.push(vec![oid(am_oid(name)), text(name), text(handler), ch('i')]);
    }
    rows
}

#[allow(clippy::too_many_arguments)]
fn class_row(
    rel_oid: u32,
    name: &str,
    namespace: u32,
    am: u32,
    has_index: bool,
    kind: char,
    natts: usize,
) -> Vec<Datum> {
    vec![
        oid(rel_oid),
        text(name),
        oid(namespace),
        oid(0),
        oid(0),
        oid(OWNER_OID),
        oid(am),
        oid(if matches!(kind, 'r' | 'i' | 'S') {
            rel_oid
        } else {
            0
        }),
        oid(0),
        i4(0),
        Datum::Float32(-1.0),
        i4(0),
        oid(0),
        b(has_index),
        b(false),
        ch('p'),
        ch(kind),
        i2(natts as i16),
        i2(0),
        b(kind == 'v'),
        b(false),
        b(false),
        b(false),
        b(false),
        b(true),
        ch(if kind == 'r' { 'd' } else { 'n' }),
        b(false),
        oid(0),
        oid(0),
        oid(0),
        NULL,
        NULL,
        NULL,
    ]
}

fn pg_class(ctx: &SystemContext) -> Vec<Vec<Datum>> {
    let mut rows = Vec::new();
    for r in RELATIONS {
        let ns = namespace_oid(r.schema, ctx.db);
        let am = if r.kind == 'r' { 2 } else { 0 };
        rows.push(class_row(
            r.oid,
            r.name,
            ns,
            am,
            false,
            r.kind,
            r.columns.len(),
        ));
    }
    let referenced: HashSet<u32> = user_relations(ctx.db)
        .into_iter()
        .filter_map(|l| l.table())
        .flat_map(|t| t.foreign_keys.iter().map(|f| f.parent))
        .collect();
    for l in user_relations(ctx.db) {
        rows.push(match l.rel {
            UserRelation::Table(t) => {
                let indexed = has_indexes(ctx.db, l.schema, &t.name);
                let mut row = class_row(l.oid, l.name, l.namespace, 2, indexed, 'r', t.columns.len());
                row[RELCHECKS] = i2(t.checks.len() as i16);
                // Foreign keys are triggers in PostgreSQL: psql lists them (and
                // "Referenced by") only for a table that has triggers.
                row[RELHASTRIGGERS] = b(!t.foreign_keys.is_empty() || referenced.contains(&t.oid));
                row
            }
            UserRelation::View(v) => {
                class_row(l.oid, l.name, l.namespace, 0, false, 'v', v.columns.len())
            }
            UserRelation::Index(i) => {
                let n = i.keys.len() + i.include.len();
                class_row(l.oid, l.name, l.namespace, am_oid(&i.method), false, 'i', n)
            }
            UserRelation::Sequence => class_row(l.oid, l.name, l.namespace, 0, false, 'S', 3),
        });
    }
    rows
}

/// pg_class.relchecks's place in its rows (psql shows CHECK constraints when it is not 0).
const RELCHECKS: usize = 18;
/// pg_class.relhastriggers's place in its rows.
const RELHASTRIGGERS: usize = 20;

#[allow(clippy::too_many_arguments)]
/// pg_attribute.attidentity's place in its rows.
const ATTIDENTITY: usize = 16;

fn attribute_row(
    rel: u32,
    name: &str,
    t: DataType,
    typmod: i32,
    num: usize,
    not_null: bool,
    has_default: bool,
) -> Vec<Datum> {
    let len = t.type_len();
    vec![
        oid(rel),
        text(name),
        oid(t.oid()),
        i4(-1),
        i2(len),
        i2(num as i16),
        i4(matches!(t, DataType::Array(_)) as i32),
        i4(-1),
        i4(typmod),
        b(matches!(len, 1 | 2 | 4 | 8)),
        ch(match len {
            1 => 'c',
            2 => 's',
            4 => 'i',
            8 => 'd',
            _ => 'i',
        }),
        ch(if len > 0 { 'p' } else { 'x' }),
        ch('\0'),
        b(not_null),
        b(has_default),
        b(false),
        ch('\0'),
        ch('\0'),
        b(false),
        b(true),
        i4(0),
        oid(if t.is_string() { 100 } else { 0 }),
        NULL,
        NULL,
        NULL,
        NULL,
    ]
}

/// typmod of a column as pg_attribute keeps it (numeric(p,s) included).
fn column_typmod(c: &super::ColumnDef) -> i32 {
    match c.numeric_typmod {
        Some((p, s)) => (((p << 16) | s) + 4) as i32,
        None => c.data_type.type_modifier(),
    }
}

fn pg_attribute(ctx: &SystemContext) -> Vec<Vec<Datum>> {
    let mut rows = Vec::new();
    for r in RELATIONS {
        for (i, (name, t)) in r.columns.iter().enumerate() {
            rows.push(attribute_row(
                r.oid,
                name,
                *t,
                t.type_modifier(),
                i + 1,
                false,
                false,
            ));
        }
    }
    for l in user_relations(ctx.db) {
        match l.rel {
            UserRelation::Table(t) => {
                for (i, c) in t.columns.iter().enumerate() {
                    let mut row = attribute_row(
                        l.oid,
                        &c.name,
                        c.data_type,
                        column_typmod(c),
                        i + 1,
                        c.not_null,
                        c.default.is_some() && c.identity.is_none(),
                    );
                    if let Some(identity) = c.identity {
                        row[ATTIDENTITY] = ch(identity.code());
                    }
                    rows.push(row);
                }
            }
            UserRelation::View(v) => {
                for (i, (name, t)) in v.columns.iter().enumerate() {
                    rows.push(attribute_row(
                        l.oid,
                        name,
                        *t,
                        t.type_modifier(),
                        i + 1,
                        false,
                        false,
                    ));
                }
            }
            UserRelation::Index(ix) => {
                let table = ctx.db.table(l.schema, &ix.table);
                for (i, key) in ix.keys.iter().chain(&ix.include).enumerate() {
                    let column = table.and_then(|t| {
                        let bare = key
                            .split_whitespace()
                            .next()
                            .unwrap_or(key)
                            .trim_matches('"');
                        t.columns.iter().find(|c| c.name == bare)
                    });
                    let (name, t) = match column {
                        Some(c) => (c.name.clone(), c.data_type),
                        None => (
                            format!("expr{}", if i == 0 { String::new() } else { i.to_string() }),
                            DataType::Text,
                        ),
                    };
                    rows.push(attribute_row(l.oid, &name, t, -1, i + 1, false, false));
                }
            }
            UserRelation::Sequence => {
                for (i, (name, t)) in [
                    ("last_value", DataType::Int64),
                    ("log_cnt", DataType::Int64),
                    ("is_called", DataType::Bool),
                ]
                .into_iter()
                .enumerate()
                {
                    rows.push(attribute_row(l.oid, name, t, -1, i + 1, true, false));
                }
            }
        }
    }
    rows
}

/// Base types Brewric has, plus the pseudo and catalog types clients ask about,
/// with their pg_type names.
const BASE_TYPES: &[(DataType, &str)] = &[
    (DataType::Bool, "bool"),
    (DataType::Bytea, "bytea"),
    (DataType::Char, "char"),
    (DataType::Name, "name"),
    (DataType::Int64, "int8"),
    (DataType::Int16, "int2"),
    (DataType::Int32, "int4"),
    (DataType::Text, "text"),
    (DataType::Oid, "oid"),
    (DataType::Float32, "float4"),
    (DataType::Float64, "float8"),
    (DataType::Unknown, "unknown"),
    (DataType::Bpchar(None), "bpchar"),
    (DataType::Varchar(None), "varchar"),
    (DataType::Date, "date"),
    (DataType::Timestamp, "timestamp"),
    (DataType::TimestampTz, "timestamptz"),
    (DataType::Interval, "interval"),
    (DataType::Numeric, "numeric"),
    (DataType::Jsonb, "jsonb"),
    (DataType::Record, "record"),
];

/// pg_type.typname of a base type (varchar(n) is varchar).
fn base_type_name(t: DataType) -> &'static str {
    BASE_TYPES.iter().find(|(b, _)| b.oid() == t.oid()).map_or("", |(_, n)| n)
}

fn type_row(type_oid: u32, name: &str, t: DataType, elem: u32, array: u32) -> Vec<Datum> {
    let len = t.type_len();
    let (typtype, category) = match t {
        DataType::Record | DataType::Unknown => {
            ('p', if t == DataType::Unknown { 'X' } else { 'P' })
        }
        _ => ('b', t.category()),
    };
    let io = name.trim_start_matches('_');
    vec![
        oid(type_oid),
        text(name),
        oid(PG_CATALOG_OID),
        oid(OWNER_OID),
        i2(len),
        b(matches!(len, 1 | 2 | 4 | 8)),
        ch(typtype),
        ch(category),
        b(t.preferred() && elem == 0),
        b(true),
        ch(','),
        oid(0),
        text(if elem != 0 {
            "array_subscript_handler"
        } else {
            "-"
        }),
        oid(elem),
        oid(array),
        text(if elem != 0 {
            "array_in".to_string()
        } else {
            format!("{io}in")
        }),
        text(if elem != 0 {
            "array_out".to_string()
        } else {
            format!("{io}out")
        }),
        text(if elem != 0 {
            "array_recv".to_string()
        } else {
            format!("{io}recv")
        }),
        text(if elem != 0 {
            "array_send".to_string()
        } else {
            format!("{io}send")
        }),
        text("-"),
        text("-"),
        text("-"),
        ch(match len {
            1 => 'c',
            2 => 's',
            8 => 'd',
            _ => 'i',
        }),
        ch(if len > 0 { 'p' } else { 'x' }),
        b(false),
        oid(0),
        i4(-1),
        i4(0),
        oid(
            if t.is_string() || matches!(t, DataType::Array(e) if e.data_type().is_string()) {
                100
            } else {
                0
            },
        ),
        NULL,
        NULL,
        NULL,
    ]
}

fn pg_type(_: &SystemContext) -> Vec<Vec<Datum>> {
    let mut rows = Vec::new();
    for &(t, name) in BASE_TYPES {
        let array = crate::types::array::ArrayElem::of(t)
            .filter(|e| e.data_type().oid() == t.oid())
            .map(|e| e.array_oid())
            .unwrap_or(0);
        rows.push(type_row(t.oid(), name, t, 0, array));
    }
    for e in crate::types::array::ALL {
        let elem = e.data_type();
        let name = format!("_{}", base_type_name(elem));
        rows.push(type_row(
            e.array_oid(),
            &name,
            DataType::Array(e),
            elem.oid(),
            0,
        ));
    }
    rows
}

/// Every relation's OID with its name as regclass output prints it: bare when
/// the search path reaches it, else qualified by its schema.
pub fn regclass_names(ctx: &SystemContext) -> Vec<(u32, String)> {
    let visible = visible_relation_oids(ctx);
    let shown = |oid: u32, schema: &str, name: &str| {
        if visible.contains(&oid) {
            quote_ident(name)
        } else {
            format!("{}.{}", quote_ident(schema), quote_ident(name))
        }
    };
    let mut out: Vec<(u32, String)> =
        RELATIONS.iter().map(|r| (r.oid, shown(r.oid, r.schema, r.name))).collect();
    for l in user_relations(ctx.db) {
        out.push((l.oid, shown(l.oid, l.schema, l.name)));
    }
    out
}

/// The OID regclass input finds for `name` (in `schema`, or through pg_catalog
/// and the search path when unqualified).
pub fn regclass_oid(ctx: &SystemContext, schema: Option<&str>, name: &str) -> Option<u32> {
    let listed = user_relations(ctx.db);
    let in_schema = |s: &str| {
        if is_system_schema(s) {
            lookup(s, name).map(|r| r.oid)
        } else {
            listed.iter().find(|l| l.schema == s && l.name == name).map(|l| l.oid)
        }
    };
    match schema {
        Some(s) => in_schema(s),
        None => std::iter::once("pg_catalog")
            .chain(ctx.search_path.iter().map(String::as_str))
            .find_map(in_schema),
    }
}

/// Every namespace's OID and name (regnamespace).
pub fn namespace_names(ctx: &SystemContext) -> Vec<(u32, String)> {
    pg_namespace(ctx)
        .into_iter()
        .filter_map(|row| match (&row[0], &row[1]) {
            (Datum::Int64(o), Datum::Bytes(n)) => {
                Some((*o as u32, String::from_utf8_lossy(n).into_owned()))
            }
            _ => None,
        })
        .collect()
}

/// Every type's OID with its pg_type name (regtype input also takes these).
pub fn type_names() -> Vec<(u32, String)> {
    BASE_TYPES
        .iter()
        .map(|(t, name)| (t.oid(), name.to_string()))
        .chain(
            crate::types::array::ALL
                .iter()
                .map(|e| (e.array_oid(), format!("_{}", base_type_name(e.data_type())))),
        )
        .collect()
}

/// OIDs of every type pg_type lists (pg_type_is_visible).
pub fn type_oids() -> Vec<u32> {
    BASE_TYPES
        .iter()
        .map(|(t, _)| t.oid())
        .chain(crate::types::array::ALL.iter().map(|e| e.array_oid()))
        .collect()
}

fn pg_index(ctx: &SystemContext) -> Vec<Vec<Datum>> {
    let mut rows = Vec::new();
    for (l, i) in user_relations(ctx.db).iter().filter_map(|l| Some((l, l.index()?))) {
        let Some(table) = ctx.db.table(l.schema, &i.table) else {
            continue;
        };
        // Key column numbers (0 for an expression), as int2vector's text form.
        let attnum = |key: &String| {
            let bare = key
                .split_whitespace()
                .next()
                .unwrap_or(key)
                .trim_matches('"');
            table
                .column_index(bare)
                .map(|c| c + 1)
                .unwrap_or(0)
                .to_string()
        };
        let keys: Vec<String> = i.keys.iter().chain(&i.include).map(attnum).collect();
        let option: Vec<&str> = i
            .keys
            .iter()
            .map(|k| {
                if k.to_ascii_lowercase().contains(" desc") {
                    "3"
                } else {
                    "0"
                }
            })
            .collect();
        rows.push(vec![
            oid(i.oid),
            oid(table.oid),
            i2((i.keys.len() + i.include.len()) as i16),
            i2(i.keys.len() as i16),
            b(i.unique),
            b(false),
            b(i.primary),
            b(false),
            b(true),
            b(false),
            b(true),
            b(false),
            b(true),
            b(true),
            b(false),
            text(keys.join(" ")),
            text(vec!["0"; keys.len()].join(" ")),
            text(vec!["0"; keys.len()].join(" ")),
            text(option.join(" ")),
            NULL,
            i.predicate
                .as_ref()
                .map(|p| text(p.clone()))
                .unwrap_or(NULL),
        ]);
    }
    rows
}

/// Is `objoid` (of catalog `classoid`) an object that exists? `relations`:
/// the OIDs of the database's user relations.
fn object_exists(ctx: &SystemContext, relations: &HashSet<u32>, objoid: u32, classoid: u32) -> bool {
    match classoid {
        PG_CLASS_OID => by_oid(objoid).is_some() || relations.contains(&objoid),
        PG_NAMESPACE_OID => ctx.db.schemas.values().any(|s| s.oid == objoid),
        1262 => ctx.catalog.databases.values().any(|d| d.oid == objoid),
        PG_PROC_OID => ctx.db.schemas.values().flat_map(|s| s.functions.values().flatten()).any(|f| f.oid == objoid),
        _ => true,
    }
}

fn pg_proc(ctx: &SystemContext) -> Vec<Vec<Datum>> {
    let mut rows = Vec::new();
    for s in ctx.db.schemas.values() {
        for f in s.functions.values().flatten() {
            let arg_oids: Vec<String> = f.args.iter().map(|(_, t)| t.oid().to_string()).collect();
            let names = if f.args.iter().any(|(n, _)| n.is_some()) {
                let names: Vec<Datum> = f.args.iter().map(|(n, _)| text(n.clone().unwrap_or_default())).collect();
                let value = crate::types::array::ArrayValue {
                    dims: vec![names.len()],
                    elems: names,
                };
                Datum::Bytes(value.encode(crate::types::array::ArrayElem::Text))
            } else {
                NULL
            };
            rows.push(vec![
                oid(f.oid),
                text(&f.name),
                oid(s.oid),
                oid(OWNER_OID),
                oid(SQL_LANGUAGE_OID),
                Datum::Float32(100.0),
                Datum::Float32(0.0),
                oid(0),
                text("-"),
                ch('f'),
                b(false),
                b(false),
                b(false),
                b(false),
                ch('v'),
                ch('u'),
                i2(f.args.len() as i16),
                i2(0),
                oid(f.returns.oid()),
                text(arg_oids.join(" ")),
                NULL,
                NULL,
                names,
                NULL,
                NULL,
                text(&f.body),
                NULL,
                NULL,
                NULL,
                NULL,
            ]);
        }
    }
    rows
}

fn pg_description(ctx: &SystemContext) -> Vec<Vec<Datum>> {
    let relations: HashSet<u32> = user_relations(ctx.db).iter().map(|l| l.oid).collect();
    ctx.db
        .comments
        .iter()
        .filter(|((o, c, _), _)| object_exists(ctx, &relations, *o, *c))
        .map(|((o, c, s), t)| vec![oid(*o), oid(*c), i4(*s), text(t.clone())])
        .collect()
}

fn pg_database(ctx: &SystemContext) -> Vec<Vec<Datum>> {
    ctx.catalog
        .databases
        .values()
        .map(|d| {
            vec![
                oid(d.oid),
                text(&d.name),
                oid(OWNER_OID),
                i4(6),
                ch('c'),
                b(false),
                b(true),
                i4(-1),
                oid(0),
                oid(1),
                oid(1663),
                text("C.UTF-8"),
                text("C.UTF-8"),
                NULL,
                NULL,
                NULL,
            ]
        })
        .collect()
}

/// pg_authid: the roles with their stored password hashes (VALID UNTIL is kept
/// as written and not shown: NULL).
fn pg_authid(ctx: &SystemContext) -> Vec<Vec<Datum>> {
    ctx.catalog
        .roles
        .values()
        .map(|r| {
            vec![
                oid(r.oid),
                text(&r.name),
                b(r.superuser),
                b(r.inherit),
                b(r.create_role),
                b(r.create_db),
                b(r.login),
                b(r.replication),
                b(r.bypass_rls),
                i4(r.connection_limit),
                r.password.as_deref().map_or(NULL, text),
                NULL,
            ]
        })
        .collect()
}

/// pg_roles: pg_authid with the password masked, as PostgreSQL's view.
fn pg_roles(ctx: &SystemContext) -> Vec<Vec<Datum>> {
    ctx.catalog
        .roles
        .values()
        .map(|r| {
            vec![
                text(&r.name),
                b(r.superuser),
                b(r.inherit),
                b(r.create_role),
                b(r.create_db),
                b(r.login),
                b(r.replication),
                i4(r.connection_limit),
                text("********"),
                NULL,
                b(r.bypass_rls),
                NULL,
                oid(r.oid),
            ]
        })
        .collect()
}

/// pg_user: the roles that can log in.
fn pg_user(ctx: &SystemContext) -> Vec<Vec<Datum>> {
    ctx.catalog
        .roles
        .values()
        .filter(|r| r.login)
        .map(|r| {
            vec![
                text(&r.name),
                oid(r.oid),
                b(r.create_db),
                b(r.superuser),
                b(r.replication),
                b(r.bypass_rls),
                text("********"),
                NULL,
                NULL,
            ]
        })
        .collect()
}

fn pg_tables(ctx: &SystemContext) -> Vec<Vec<Datum>> {
    let system = RELATIONS.iter().filter(|r| r.kind == 'r').map(|r| (r.schema, r.name, false));
    let listed = user_relations(ctx.db);
    let user = listed
        .iter()
        .filter_map(|l| l.table().map(|t| (l.schema, l.name, has_indexes(ctx.db, l.schema, &t.name))));
    system
        .chain(user)
        .map(|(schema, name, indexed)| {
            vec![text(schema), text(name), text(ctx.user), NULL, b(indexed), b(false), b(false), b(false)]
        })
        .collect()
}

fn pg_views(ctx: &SystemContext) -> Vec<Vec<Datum>> {
    user_relations(ctx.db)
        .iter()
        .filter_map(|l| {
            let v = l.view()?;
            Some(vec![text(l.schema), text(l.name), text(ctx.user), text(format!(" {};", v.query))])
        })
        .collect()
}

fn pg_matviews(ctx: &SystemContext) -> Vec<Vec<Datum>> {
    ctx.db
        .materialized_views
        .iter()
        .filter_map(|(oid, m)| {
            let t = ctx.db.table_by_oid(*oid)?;
            Some(vec![
                text(&t.schema),
                text(&t.name),
                text(ctx.user),
                NULL,
                b(has_indexes(ctx.db, &t.schema, &t.name)),
                b(m.populated),
                text(format!(" {};", m.query)),
            ])
        })
        .collect()
}

fn pg_indexes(ctx: &SystemContext) -> Vec<Vec<Datum>> {
    user_relations(ctx.db)
        .iter()
        .filter_map(|l| {
            let i = l.index()?;
            Some(vec![text(l.schema), text(&i.table), text(l.name), NULL, text(index_definition(l.schema, i))])
        })
        .collect()
}

// ---------------------------------------------------------------- statistics views

fn opt_tz(ns: Option<i64>) -> Datum {
    ns.map(Datum::Int64).unwrap_or(NULL)
}

/// A counter as bigint (saturating: a u64 past i64::MAX cannot happen in practice).
fn i8_count(v: u64) -> Datum {
    Datum::Int64(i64::try_from(v).unwrap_or(i64::MAX))
}

/// Rows from the server's registries; none without a server (unit tests of the catalog).
fn from_server(ctx: &SystemContext, rows: impl FnOnce(&crate::server::Server) -> Vec<Vec<Datum>>) -> Vec<Vec<Datum>> {
    ctx.server.map(rows).unwrap_or_default()
}

fn pg_stat_activity(ctx: &SystemContext) -> Vec<Vec<Datum>> {
    from_server(ctx, |server| {
        server.activities.snapshot().iter().map(|a| activity_row(ctx.catalog, a)).collect()
    })
}

fn activity_row(catalog: &Catalog, a: &crate::server::activity::SessionActivity) -> Vec<Datum> {
    let s = a.state();
    // An idle backend waits for the client's next message, as PostgreSQL reports it.
    let waiting = s.state != crate::server::activity::BackendState::Active;
    vec![
        oid(a.datid),
        text(&a.datname),
        i4(a.pid),
        NULL,
        // The session's role (a trusted name that is no role: the bootstrap superuser's).
        oid(catalog.role(&a.usename).map_or(OWNER_OID, |r| r.oid)),
        text(&a.usename),
        text(s.application_name),
        a.client_addr.as_ref().map(text).unwrap_or(NULL),
        NULL,
        opt_i4(a.client_port),
        Datum::Int64(a.backend_start_ns),
        opt_tz(s.xact_start_ns),
        opt_tz(s.query_start_ns),
        Datum::Int64(s.state_change_ns),
        if waiting { text("Client") } else { NULL },
        if waiting { text("ClientRead") } else { NULL },
        text(s.state.as_str()),
        NULL,
        NULL,
        NULL,
        text(s.query),
        text("client backend"),
    ]
}

/// One row per setting SHOW ALL lists, from the session's values (see
/// `sql/session/settings.rs`, which owns the table of settings).
fn pg_settings(ctx: &SystemContext) -> Vec<Vec<Datum>> {
    use crate::sql::session::settings::{self, Source};
    let defaults;
    let (values, provenance) = match &ctx.settings {
        Some(s) => (s.values, Some(s.provenance)),
        None => {
            defaults = settings::default_settings();
            (&defaults, None)
        }
    };
    let opt = |v: Option<&str>| v.map_or(NULL, text);
    settings::listed()
        .map(|s| {
            let key = s.name.to_lowercase();
            let raw = |v: Option<&String>| v.map_or(NULL, |v| text(settings::raw_setting(s, v)));
            let source = provenance.map_or(Source::Default, |p| p.source(&key));
            let enumvals = if s.enumvals.is_empty() {
                NULL
            } else {
                let items = s.enumvals.iter().map(|e| text(*e)).collect();
                Datum::Bytes(crate::types::array::ArrayValue::of(items).encode(crate::types::array::ArrayElem::Text))
            };
            let reset = provenance.map_or(values.get(&key), |p| p.reset.get(&key));
            vec![
                text(s.name),
                raw(values.get(&key)),
                opt(s.unit),
                text(s.category),
                text(s.short_desc),
                opt(s.extra_desc),
                text(s.context),
                text(s.vartype.as_str()),
                text(source.as_str()),
                opt(s.min),
                opt(s.max),
                enumvals,
                text(s.boot),
                raw(reset),
                NULL,
                NULL,
                b(false),
            ]
        })
        .collect()
}

fn pg_stat_progress_copy(ctx: &SystemContext) -> Vec<Vec<Datum>> {
    from_server(ctx, |server| {
        let copies = server.copy_progress.snapshot();
        copies
            .into_iter()
            .map(|c| {
                vec![
                    i4(c.pid),
                    oid(c.datid),
                    text(c.datname),
                    oid(c.relid),
                    text(c.command.as_str()),
                    text(c.io_type.as_str()),
                    i8_count(c.bytes_processed),
                    i8_count(c.bytes_total),
                    i8_count(c.tuples_processed),
                    i8_count(c.tuples_excluded),
                ]
            })
            .collect()
    })
}

// ---------------------------------------------------------------- information_schema

fn information_schema_schemata(ctx: &SystemContext) -> Vec<Vec<Datum>> {
    let mut names = vec![
        "pg_toast".to_string(),
        "pg_catalog".into(),
        "information_schema".into(),
    ];
    names.extend(ctx.db.schemas.keys().cloned());
    names
        .into_iter()
        .map(|n| {
            vec![
                text(&ctx.db.name),
                text(n),
                text(ctx.user),
                NULL,
                NULL,
                NULL,
                NULL,
            ]
        })
        .collect()
}

fn information_schema_tables(ctx: &SystemContext) -> Vec<Vec<Datum>> {
    let mut rows = Vec::new();
    let mut push = |schema: &str, name: &str, view: bool| {
        rows.push(vec![
            text(&ctx.db.name),
            text(schema),
            text(name),
            text(if view { "VIEW" } else { "BASE TABLE" }),
            NULL,
            NULL,
            NULL,
            NULL,
            NULL,
            yes_no(!view),
            yes_no(false),
            NULL,
        ])
    };
    for r in RELATIONS {
        push(r.schema, r.name, r.kind == 'v');
    }
    for l in user_relations(ctx.db) {
        match l.rel {
            UserRelation::Table(_) => push(l.schema, l.name, false),
            UserRelation::View(_) => push(l.schema, l.name, true),
            _ => {}
        }
    }
    rows
}

/// information_schema's data_type spelling and the numeric facts of a type.
fn sql_standard_type(t: DataType) -> String {
    match t {
        DataType::Array(_) => "ARRAY".into(),
        DataType::Bpchar(_) => "character".into(),
        DataType::Varchar(_) => "character varying".into(),
        t => t.name(),
    }
}

fn udt_name(t: DataType) -> String {
    match t {
        DataType::Array(e) => format!("_{}", base_type_name(e.data_type())),
        t => base_type_name(t).to_string(),
    }
}

#[allow(clippy::too_many_arguments)]
fn column_row(
    ctx: &SystemContext,
    schema: &str,
    table: &str,
    name: &str,
    position: usize,
    t: DataType,
    numeric_typmod: Option<(u32, u32)>,
    not_null: bool,
    default: Option<String>,
    updatable: bool,
) -> Vec<Datum> {
    let char_len = match t {
        DataType::Varchar(n) | DataType::Bpchar(n) => n.map(|n| n as i32),
        _ => None,
    };
    let octets = if t.is_string() && !matches!(t, DataType::Name | DataType::Char) {
        Some(char_len.map(|n| n * 4).unwrap_or(1_073_741_824))
    } else {
        None
    };
    let (precision, radix, scale) = match t {
        DataType::Int16 => (Some(16), Some(2), Some(0)),
        DataType::Int32 => (Some(32), Some(2), Some(0)),
        DataType::Int64 => (Some(64), Some(2), Some(0)),
        DataType::Float32 => (Some(24), Some(2), None),
        DataType::Float64 => (Some(53), Some(2), None),
        DataType::Numeric => match numeric_typmod {
            Some((p, s)) => (Some(p as i32), Some(10), Some(s as i32)),
            None => (None, Some(10), None),
        },
        _ => (None, None, None),
    };
    let datetime_precision = match t {
        DataType::Date => Some(0),
        DataType::Timestamp | DataType::TimestampTz | DataType::Interval => Some(6),
        _ => None,
    };
    vec![
        text(&ctx.db.name),
        text(schema),
        text(table),
        text(name),
        i4(position as i32),
        default.map(text).unwrap_or(NULL),
        yes_no(!not_null),
        text(sql_standard_type(t)),
        opt_i4(char_len),
        opt_i4(octets),
        opt_i4(precision),
        opt_i4(radix),
        opt_i4(scale),
        opt_i4(datetime_precision),
        NULL,
        NULL,
        NULL,
        NULL,
        NULL,
        NULL,
        NULL,
        NULL,
        NULL,
        NULL,
        NULL,
        text(&ctx.db.name),
        text("pg_catalog"),
        text(udt_name(t)),
        NULL,
        NULL,
        NULL,
        NULL,
        text(position.to_string()),
        yes_no(false),
        yes_no(false),
        NULL,
        NULL,
        NULL,
        NULL,
        NULL,
        yes_no(false),
        text("NEVER"),
        NULL,
        yes_no(updatable),
    ]
}

fn information_schema_columns(ctx: &SystemContext) -> Vec<Vec<Datum>> {
    let mut rows = Vec::new();
    for r in RELATIONS {
        for (i, (name, t)) in r.columns.iter().enumerate() {
            rows.push(column_row(
                ctx,
                r.schema,
                r.name,
                name,
                i + 1,
                *t,
                None,
                false,
                None,
                false,
            ));
        }
    }
    for l in user_relations(ctx.db) {
        match l.rel {
            UserRelation::Table(t) => {
                for (i, c) in t.columns.iter().enumerate() {
                    // As pg_get_expr prints it (none for an identity column).
                    let default = default_expression(ctx, c);
                    let mut row = column_row(
                        ctx,
                        l.schema,
                        l.name,
                        &c.name,
                        i + 1,
                        c.data_type,
                        c.numeric_typmod,
                        c.not_null,
                        default,
                        true,
                    );
                    if let Some(identity) = c.identity {
                        // is_identity, identity_generation, …, identity_increment, …, identity_cycle
                        // (counted from the row's end: is_generated, generation_expression and
                        // is_updatable follow them).
                        let n = row.len();
                        row[n - 10] = yes_no(true);
                        row[n - 9] = text(identity.generation());
                        row[n - 7] = text("1");
                        row[n - 4] = yes_no(false);
                    }
                    rows.push(row);
                }
            }
            UserRelation::View(v) => {
                for (i, (name, t)) in v.columns.iter().enumerate() {
                    rows.push(column_row(
                        ctx,
                        l.schema,
                        l.name,
                        name,
                        i + 1,
                        *t,
                        None,
                        false,
                        None,
                        false,
                    ));
                }
            }
            _ => {}
        }
    }
    rows
}

/// A constraint as information_schema's constraint views list it.
struct ConstraintFacts<'a> {
    schema: &'a str,
    name: &'a str,
    table: &'a TableDef,
    kind: &'static str,
    /// The constrained columns (a CHECK's: those its expression reads).
    columns: Vec<usize>,
    /// A foreign key's: where each referenced column stands in the
    /// referenced key, and the referenced table with those columns.
    references: Option<(Vec<usize>, &'a TableDef, Vec<usize>)>,
}

/// The database's PRIMARY KEY, UNIQUE, FOREIGN KEY and CHECK constraints.
fn all_constraints(db: &Database) -> Vec<ConstraintFacts<'_>> {
    let schema_of = |namespace: u32| db.schemas.values().find(|s| s.oid == namespace);
    let mut out = Vec::new();
    for (namespace, i) in constraints(db) {
        let Some(schema) = schema_of(namespace) else { continue };
        let Some(table) = schema.tables.get(&i.table) else { continue };
        let Some(columns) = i.key_columns(table) else { continue };
        let kind = if i.primary { "PRIMARY KEY" } else { "UNIQUE" };
        out.push(ConstraintFacts { schema: &schema.name, name: &i.name, table, kind, columns, references: None });
    }
    for f in foreign_key_constraints(db) {
        let Some(schema) = schema_of(f.namespace) else { continue };
        let Some(parent) = db.table_by_oid(f.fk.parent) else { continue };
        let attnums = |a: &[i16]| a.iter().filter_map(|&a| (a as usize).checked_sub(1)).collect::<Vec<_>>();
        out.push(ConstraintFacts {
            schema: &schema.name,
            name: &f.fk.name,
            table: f.table,
            kind: "FOREIGN KEY",
            columns: attnums(&f.conkey),
            references: Some((f.fk.key_positions.clone(), &**parent, attnums(&f.confkey))),
        });
    }
    for (namespace, table, check) in check_constraints(db) {
        let Some(schema) = schema_of(namespace) else { continue };
        let columns = check.columns(table);
        out.push(ConstraintFacts { schema: &schema.name, name: &check.name, table, kind: "CHECK", columns, references: None });
    }
    out
}

fn information_schema_table_constraints(ctx: &SystemContext) -> Vec<Vec<Datum>> {
    let db = text(&ctx.db.name);
    all_constraints(ctx.db)
        .into_iter()
        .map(|c| {
            let keyed = matches!(c.kind, "PRIMARY KEY" | "UNIQUE");
            vec![
                db.clone(),
                text(c.schema),
                text(c.name),
                db.clone(),
                text(c.schema),
                text(&c.table.name),
                text(c.kind),
                yes_no(false),
                yes_no(false),
                yes_no(true),
                if keyed { yes_no(true) } else { NULL },
            ]
        })
        .collect()
}

fn information_schema_key_column_usage(ctx: &SystemContext) -> Vec<Vec<Datum>> {
    let db = text(&ctx.db.name);
    let mut rows = Vec::new();
    for c in all_constraints(ctx.db).into_iter().filter(|c| c.kind != "CHECK") {
        // A foreign key's columns: where each referenced column stands in the referenced key.
        let positions = c.references.as_ref().map(|r| &r.0);
        for (i, &col) in c.columns.iter().enumerate() {
            rows.push(vec![
                db.clone(),
                text(c.schema),
                text(c.name),
                db.clone(),
                text(c.schema),
                text(&c.table.name),
                text(&c.table.columns[col].name),
                i4(i as i32 + 1),
                positions.as_ref().and_then(|p| p.get(i)).map_or(NULL, |&p| i4(p as i32 + 1)),
            ]);
        }
    }
    rows
}

fn information_schema_referential_constraints(ctx: &SystemContext) -> Vec<Vec<Datum>> {
    let db = text(&ctx.db.name);
    let schema_of = |namespace: u32| ctx.db.schemas.values().find(|s| s.oid == namespace);
    let rule = |a: super::ReferentialAction| text(a.sql());
    foreign_key_constraints(ctx.db)
        .into_iter()
        .filter_map(|f| {
            let schema = schema_of(f.namespace)?;
            let parent = ctx.db.table_by_oid(f.fk.parent)?;
            let index = ctx.db.schemas.get(&parent.schema)?.indexes.values().find(|i| i.oid == f.fk.parent_index)?;
            Some(vec![
                db.clone(),
                text(&schema.name),
                text(&f.fk.name),
                db.clone(),
                text(&parent.schema),
                text(&index.name),
                text(if f.fk.match_full { "FULL" } else { "NONE" }),
                rule(f.fk.on_update),
                rule(f.fk.on_delete),
            ])
        })
        .collect()
}

fn information_schema_constraint_column_usage(ctx: &SystemContext) -> Vec<Vec<Datum>> {
    let db = text(&ctx.db.name);
    let mut rows = Vec::new();
    let mut push = |schema: &str, table: &TableDef, column: usize, constraint_schema: &str, name: &str| {
        rows.push(vec![
            db.clone(),
            text(schema),
            text(&table.name),
            text(&table.columns[column].name),
            db.clone(),
            text(constraint_schema),
            text(name),
        ]);
    };
    for c in all_constraints(ctx.db) {
        match &c.references {
            // A foreign key uses the referenced table's columns.
            Some((_, parent, columns)) => {
                for &col in columns {
                    push(&parent.schema, parent, col, c.schema, c.name);
                }
            }
            None => {
                for &col in &c.columns {
                    push(c.schema, c.table, col, c.schema, c.name);
                }
            }
        }
    }
    rows
}

fn information_schema_views(ctx: &SystemContext) -> Vec<Vec<Datum>> {
    user_relations(ctx.db)
        .iter()
        .filter_map(|l| {
            let v = l.view()?;
            let mut row = vec![text(&ctx.db.name), text(l.schema), text(l.name), text(format!(" {};", v.query)), text("NONE")];
            row.extend((0..5).map(|_| yes_no(false)));
            Some(row)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_row_has_its_relation_width() {
        let store = crate::catalog::CatalogStore::new();
        let catalog = store.snapshot();
        let db = catalog.databases.values().next().unwrap();
        let ctx = SystemContext {
            catalog: &catalog,
            db,
            user: "u",
            search_path: &["public".to_string()],
            server: None,
            settings: None,
            chunks: None,
        };
        for r in RELATIONS.iter().chain(timescaledb_information::RELATIONS) {
            for row in r.rows(&ctx) {
                assert_eq!(row.len(), r.columns.len(), "{}.{}", r.schema, r.name);
            }
        }
    }

    #[test]
    fn statistics_views_show_the_registries() {
        use crate::server::copy_progress::{CopyCommand, CopyIoType};
        let store = crate::catalog::CatalogStore::new();
        let catalog = store.snapshot();
        let db = catalog.databases.values().next().unwrap();
        let server = std::sync::Arc::new(crate::server::Server::new(
            crate::catalog::CatalogStore::new(),
            Vec::new(),
            0,
            0,
            Default::default(),
        ));
        let ctx = SystemContext {
            catalog: &catalog,
            db,
            user: "u",
            search_path: &["public".to_string()],
            server: Some(&server),
            settings: None,
            chunks: None,
        };
        let activity = lookup("pg_catalog", "pg_stat_activity").unwrap();
        let copies = lookup("pg_catalog", "pg_stat_progress_copy").unwrap();
        assert!(activity.rows(&ctx).is_empty());
        let registration = server.register_session(
            std::sync::Arc::new(crate::exec::cancel::CancelFlag::new()),
            crate::server::activity::SessionInfo {
                datid: db.oid,
                datname: db.name.clone(),
                ..Default::default()
            },
        );
        registration.activity().report_active("SELECT 1", "app");
        let rows = activity.rows(&ctx);
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0].len(), activity.columns.len());
        assert_eq!(rows[0][2], Datum::Int32(registration.pid()));
        assert_eq!(rows[0][16], text("active"));
        assert_eq!(rows[0][20], text("SELECT 1"));

        let progress = server.copy_progress.begin(
            registration.pid(),
            db.oid,
            &db.name,
            16_400,
            CopyCommand::From,
            CopyIoType::Pipe,
            0,
        );
        progress.add_bytes(100);
        let rows = copies.rows(&ctx);
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0].len(), copies.columns.len());
        assert_eq!(rows[0][3], oid(16_400));
        assert_eq!(rows[0][6], Datum::Int64(100));
        drop(progress);
        assert!(copies.rows(&ctx).is_empty());
        drop(registration);
        assert!(activity.rows(&ctx).is_empty());
    }
}
