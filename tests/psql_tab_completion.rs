//! The catalog queries psql 15 sends when the user presses TAB, run against
//! brewricd over the simple query protocol and compared with the rows
//! PostgreSQL 15 returns for the same schema. The golden file
//! `tests/golden/psql_tab_completion.out` was recorded from PostgreSQL by
//! running this test there in record mode:
//!
//!   BREWRIC_GOLDEN_RECORD=1 bash tools/tests_on_postgres.sh --release --test psql_tab_completion
//!
//! (without BREWRIC_GOLDEN_RECORD the same command checks that PostgreSQL
//! still returns the golden file).
//!
//! The query texts are the ones psql 15.18 puts on the wire (captured with
//! strace while pressing TAB at a terminal): tab-complete.c's
//! `_complete_from_query` assembles them from a `SchemaQuery` (result column,
//! catalogs, selection and visibility conditions) and the word typed so far,
//! which it matches with `LIKE 'word%'`; an unqualified word also offers the
//! schemas whose names start with it (`UNION ALL … pg_namespace`), a
//! qualified one (`fleet.r`) joins pg_namespace instead; every query ends in
//! `LIMIT 1000`. Without ORDER BY the rows' order is unspecified, so they are
//! sorted before comparing.

mod common;

use std::path::{Path, PathBuf};

/// The objects the completions list.
const SCHEMA: &[&str] = &[
    "CREATE SCHEMA fleet",
    "CREATE TABLE readings (id serial PRIMARY KEY, ts timestamptz NOT NULL, robot text NOT NULL, battery double precision, ok boolean)",
    "CREATE INDEX readings_robot_ts ON readings (robot, ts)",
    "CREATE TABLE fleet.robots (name text, model text)",
    "CREATE VIEW low_battery AS SELECT robot, battery FROM readings WHERE battery < 20",
    "CREATE FUNCTION add_one(a integer) RETURNS integer LANGUAGE sql AS 'SELECT a + 1'",
    "CREATE ROLE tab_operator",
];

const DB: &str = "psql_tab_completion";

/// Which of a query's rows are compared.
enum Keep {
    /// Every row: the schema's own objects.
    All,
    /// Only rows whose first non-NULL value is one of these names; the rest
    /// (built-in objects a server has or lacks by nature) are dropped.
    /// Duplicates are dropped too.
    Only(&'static [&'static str]),
}

/// `_complete_from_query` for an unqualified word: the objects visible without
/// a schema (`vis`), then the schemas whose names start with the word.
/// Relations (pg_class) in pg_catalog are left out unless the word starts with pg_.
fn unqualified(result: &str, catalog: &str, selection: &str, vis: &str, word: &str) -> String {
    let mut q = format!("SELECT {result}, NULL::pg_catalog.text FROM {catalog} WHERE ");
    if !selection.is_empty() {
        q.push_str(&format!("{selection} AND "));
    }
    q.push_str(&format!("({result}) LIKE '{word}%' AND {vis}"));
    if catalog == "pg_catalog.pg_class c" {
        q.push_str(" AND c.relnamespace <> (SELECT oid FROM pg_catalog.pg_namespace WHERE nspname = 'pg_catalog')");
    }
    q.push_str(&format!(
        "\nUNION ALL\nSELECT NULL::pg_catalog.text, n.nspname FROM pg_catalog.pg_namespace n WHERE n.nspname LIKE '{word}%' AND n.nspname NOT LIKE E'pg\\\\_%'\nLIMIT 1000"
    ));
    q
}

/// `_complete_from_query` for a relation named with its schema (`schema.word`).
fn qualified(selection: &str, schema: &str, word: &str) -> String {
    let mut q = String::from(
        "SELECT c.relname, n.nspname FROM pg_catalog.pg_class c, pg_catalog.pg_namespace n WHERE c.relnamespace = n.oid AND ",
    );
    if !selection.is_empty() {
        q.push_str(&format!("{selection} AND "));
    }
    q.push_str(&format!(
        "(c.relname) LIKE '{word}%' AND n.nspname = '{schema}'\nLIMIT 1000"
    ));
    q
}

/// `Query_for_list_of_attributes` of table `table`, for a word.
fn attributes(table: &str, word: &str) -> String {
    format!(
        "SELECT a.attname, NULL::pg_catalog.text FROM pg_catalog.pg_attribute a, pg_catalog.pg_class c WHERE c.oid = a.attrelid and a.attnum > 0 and not a.attisdropped AND (a.attname) LIKE '{word}%' AND c.relname = '{table}' AND pg_catalog.pg_table_is_visible(c.oid)\nLIMIT 1000"
    )
}

const TABLES: &str = "c.relkind IN ('r', 'S', 'v', 'm', 'f', 'p')";
const TABLE_VISIBLE: &str = "pg_catalog.pg_table_is_visible(c.oid)";
const PG_CLASS: &str = "pg_catalog.pg_class c";

/// Settings present on both servers, some settable by SET (context user or
/// superuser), some not (internal, postmaster): pg_settings lists ~350
/// settings on PostgreSQL, fewer on brewricd.
const SOME_SETTINGS: &[&str] = &[
    "application_name",
    "client_min_messages",
    "datestyle",
    "search_path",
    "statement_timeout",
    "timezone",
    "server_version",
    "max_connections",
];

/// Each TAB press: what the user typed, the query psql sends, the rows compared.
fn cases() -> Vec<(&'static str, String, Keep)> {
    vec![
        ("SELECT * FROM r<TAB>", unqualified("c.relname", PG_CLASS, TABLES, TABLE_VISIBLE, "r"), Keep::All),
        ("\\d fl<TAB>", unqualified("c.relname", PG_CLASS, "", TABLE_VISIBLE, "fl"), Keep::All),
        ("\\d fleet.<TAB>", qualified("", "fleet", ""), Keep::All),
        ("SELECT * FROM fleet.r<TAB>", qualified(TABLES, "fleet", "r"), Keep::All),
        (
            "DROP INDEX <TAB>",
            unqualified("c.relname", PG_CLASS, "c.relkind IN ('i', 'I')", TABLE_VISIBLE, ""),
            Keep::All,
        ),
        (
            "DROP VIEW <TAB>",
            unqualified("c.relname", PG_CLASS, "c.relkind IN ('v')", TABLE_VISIBLE, ""),
            Keep::All,
        ),
        (
            "DROP SEQUENCE <TAB>",
            unqualified("c.relname", PG_CLASS, "c.relkind IN ('S')", TABLE_VISIBLE, ""),
            Keep::All,
        ),
        ("SELECT robot FROM readings WHERE ro<TAB>", attributes("readings", "ro"), Keep::All),
        ("ALTER TABLE readings ALTER COLUMN <TAB>", attributes("readings", ""), Keep::All),
        (
            // pg_function_is_visible is true for pg_catalog's functions, so on
            // PostgreSQL the built-ins starting with `a` (abs, age, avg, …)
            // come too; brewricd's pg_proc lists only the functions users
            // create (built-ins in pg_proc are still to do), so only the
            // test's own function is compared.
            "\\df a<TAB>",
            unqualified(
                "p.proname",
                "pg_catalog.pg_proc p",
                "p.prokind != 'p'",
                "pg_catalog.pg_function_is_visible(p.oid)",
                "a",
            ),
            Keep::Only(&["add_one"]),
        ),
        (
            // PostgreSQL has ~90 built-in types, brewricd the ones it
            // implements: compared are a few both have, and the schemas.
            "\\dT <TAB>",
            unqualified(
                "t.typname",
                "pg_catalog.pg_type t",
                "(t.typrelid = 0  OR (SELECT c.relkind = 'c'     FROM pg_catalog.pg_class c WHERE c.oid = t.typrelid)) AND t.typname !~ '^_'",
                "pg_catalog.pg_type_is_visible(t.oid)",
                "",
            ),
            Keep::Only(&["bool", "int4", "int8", "float8", "numeric", "text", "timestamptz", "jsonb", "fleet", "public", "information_schema"]),
        ),
        (
            // PostgreSQL lists the encodings it converts from; brewricd reads
            // and sends UTF8 only and converts nothing (its pg_conversion is
            // empty): only the query and its column are compared.
            "\\encoding <TAB>",
            " SELECT DISTINCT pg_catalog.pg_encoding_to_char(conforencoding)    FROM pg_catalog.pg_conversion   WHERE pg_catalog.pg_encoding_to_char(conforencoding) LIKE pg_catalog.upper('%')\nLIMIT 1000".into(),
            Keep::Only(&[]),
        ),
        (
            "DROP SCHEMA <TAB>",
            "SELECT nspname FROM pg_catalog.pg_namespace  WHERE nspname LIKE '%'\nLIMIT 1000".into(),
            // PostgreSQL's pg_toast and pg_temp/pg_toast_temp schemas are storage internals.
            Keep::Only(&["fleet", "public", "pg_catalog", "information_schema"]),
        ),
        (
            // Template and maintenance databases exist on PostgreSQL only.
            "\\c <TAB>",
            "SELECT datname FROM pg_catalog.pg_database  WHERE datname LIKE '%'\nLIMIT 1000".into(),
            Keep::Only(&[common::DEFAULT_DB, DB]),
        ),
        (
            // PostgreSQL's predefined pg_* roles and its bootstrap superuser are left out.
            "\\du <TAB>",
            " SELECT rolname    FROM pg_catalog.pg_roles   WHERE rolname LIKE '%'\nLIMIT 1000".into(),
            Keep::Only(&[common::USER, "tab_operator"]),
        ),
        (
            "DROP ROLE t<TAB>",
            " SELECT rolname    FROM pg_catalog.pg_roles   WHERE rolname LIKE 't%'\nLIMIT 1000".into(),
            Keep::All,
        ),
        (
            "SET <TAB>",
            "SELECT pg_catalog.lower(name) FROM pg_catalog.pg_settings  WHERE context IN ('user', 'superuser')    AND pg_catalog.lower(name) LIKE pg_catalog.lower('%')\nLIMIT 1000".into(),
            Keep::Only(SOME_SETTINGS),
        ),
        (
            "SHOW <TAB>",
            "SELECT pg_catalog.lower(name) FROM pg_catalog.pg_settings  WHERE pg_catalog.lower(name) LIKE pg_catalog.lower('%')\nLIMIT 1000".into(),
            Keep::Only(SOME_SETTINGS),
        ),
        (
            // PostgreSQL offers its contrib modules; brewricd has none of
            // them: only the query and its column are compared.
            "CREATE EXTENSION <TAB>",
            " SELECT name    FROM pg_catalog.pg_available_extensions   WHERE name LIKE '%' AND installed_version IS NULL\nLIMIT 1000".into(),
            Keep::Only(&[]),
        ),
        (
            // PostgreSQL has PL/pgSQL installed, brewricd has no extensions.
            "DROP EXTENSION <TAB>",
            " SELECT extname    FROM pg_catalog.pg_extension   WHERE extname LIKE '%'\nLIMIT 1000".into(),
            Keep::Only(&[]),
        ),
    ]
}

fn golden_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/psql_tab_completion.out")
}

/// The case's result as golden-file text: the column names, then the kept rows sorted.
async fn run_case(client: &tokio_postgres::Client, sql: &str, keep: &Keep) -> String {
    let messages = client
        .simple_query(sql)
        .await
        .unwrap_or_else(|e| panic!("{sql}\n{}", common::describe_error(&e)));
    let mut columns = String::new();
    let mut rows = Vec::new();
    for m in messages {
        if let tokio_postgres::SimpleQueryMessage::RowDescription(c) = &m {
            columns = c.iter().map(|c| c.name()).collect::<Vec<_>>().join("|");
        }
        if let tokio_postgres::SimpleQueryMessage::Row(r) = m {
            let values: Vec<Option<&str>> = (0..r.len()).map(|i| r.get(i)).collect();
            if let Keep::Only(names) = keep {
                let name = values.iter().flatten().next().copied().unwrap_or("");
                if !names.contains(&name) {
                    continue;
                }
            }
            rows.push(
                values
                    .iter()
                    .map(|v| v.unwrap_or("NULL"))
                    .collect::<Vec<_>>()
                    .join("|"),
            );
        }
    }
    rows.sort();
    if matches!(keep, Keep::Only(_)) {
        rows.dedup();
    }
    let mut out = String::new();
    out.push_str(&format!("--- {columns}\n"));
    for row in rows {
        out.push_str(&row);
        out.push('\n');
    }
    out
}

#[tokio::test]
async fn psql_tab_completion_queries_return_what_postgresql_returns() {
    let server = common::start();
    let client = server.fresh_database(DB).await;
    if server.is_external() {
        // Roles belong to the cluster: an earlier run's is still there.
        client
            .simple_query("DROP ROLE IF EXISTS tab_operator")
            .await
            .expect("drop the earlier run's role");
    }
    for statement in SCHEMA {
        client
            .simple_query(statement)
            .await
            .unwrap_or_else(|e| panic!("{statement}: {}", common::describe_error(&e)));
    }

    let mut got = String::new();
    for (typed, sql, keep) in cases() {
        got.push_str(&format!("=== {typed}\n{sql}\n"));
        got.push_str(&run_case(&client, &sql, &keep).await);
    }

    let path = golden_path();
    if std::env::var_os("BREWRIC_GOLDEN_RECORD").is_some() {
        assert!(
            server.is_external(),
            "record the golden file from PostgreSQL (see the top of this file)"
        );
        std::fs::write(&path, &got).expect("write golden file");
        eprintln!("recorded {}", path.display());
        return;
    }
    let want =
        std::fs::read_to_string(&path).expect("golden file tests/golden/psql_tab_completion.out");
    if got != want {
        let got_path = std::env::temp_dir().join("psql_tab_completion.got");
        let _ = std::fs::write(&got_path, &got);
        let mut diff = String::new();
        let (w, g): (Vec<&str>, Vec<&str>) = (want.lines().collect(), got.lines().collect());
        for i in 0..w.len().max(g.len()) {
            let (a, b) = (
                w.get(i).copied().unwrap_or(""),
                g.get(i).copied().unwrap_or(""),
            );
            if a != b {
                diff.push_str(&format!(
                    "line {}:\n  PostgreSQL: {a}\n  got:        {b}\n",
                    i + 1
                ));
            }
        }
        panic!(
            "the completion queries' rows differ from PostgreSQL 15's (whole output in {}):\n{diff}",
            got_path.display()
        );
    }
}
