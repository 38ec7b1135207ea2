//! Foreign keys across sessions and restarts: a key one transaction
//! references or removes while it is open cannot be removed or referenced
//! by another meanwhile (PostgreSQL makes the second wait; Brewric fails it
//! with 23503 where it does not wait), and constraints survive kill -9.
//! The single-session behaviour is sql-tests/foreign_keys.slt.

mod common;

use std::time::Duration;

use tokio_postgres::error::SqlState;

async fn count(client: &tokio_postgres::Client, sql: &str) -> i64 {
    client.query_one(sql, &[]).await.unwrap().get(0)
}

/// A fresh database `name` holding `parent (id int PRIMARY KEY)` with keys 1
/// and 2 and `child` made of `child_columns`; the client that made them.
async fn parent_and_child(server: &common::Server, name: &str, child_columns: &str) -> tokio_postgres::Client {
    let client = server.fresh_database(name).await;
    client
        .batch_execute(&format!(
            "CREATE TABLE parent (id int PRIMARY KEY); CREATE TABLE child ({child_columns}); INSERT INTO parent VALUES (1), (2)"
        ))
        .await
        .unwrap();
    client
}

fn assert_foreign_key_violation(e: tokio_postgres::Error) {
    assert_eq!(e.code(), Some(&SqlState::FOREIGN_KEY_VIOLATION), "{e:?}");
}

/// A block's rows referencing key 1 keep it: another session's DELETE of
/// it fails (the block's rows would be orphans at its COMMIT), also through
/// ON DELETE CASCADE, whose scan cannot see them. After COMMIT the rows are
/// there and so is their key.
#[tokio::test]
async fn rows_of_an_open_block_keep_the_keys_they_reference() {
    let server = common::start();
    if !server.is_brewric() {
        return; // PostgreSQL makes the second session wait instead.
    }
    let a = parent_and_child(&server, "fk_open_child", "pid int REFERENCES parent ON DELETE CASCADE, v text").await;
    let b = server.connect("fk_open_child").await;
    a.batch_execute("BEGIN; INSERT INTO child VALUES (1, 'pending')").await.unwrap();
    assert_foreign_key_violation(b.execute("DELETE FROM parent WHERE id = 1", &[]).await.expect_err("key 1 is referenced by an open block"));
    assert_foreign_key_violation(b.batch_execute("TRUNCATE parent CASCADE").await.expect_err("so TRUNCATE cannot take it either"));
    // A key nobody references goes.
    b.execute("DELETE FROM parent WHERE id = 2", &[]).await.unwrap();
    a.batch_execute("COMMIT").await.unwrap();
    assert_eq!(count(&b, "SELECT count(*) FROM child JOIN parent ON parent.id = child.pid").await, 1);
    // Committed: the cascade reaches the row now.
    b.execute("DELETE FROM parent WHERE id = 1", &[]).await.unwrap();
    assert_eq!(count(&b, "SELECT count(*) FROM child").await, 0);
}

/// A key an open block deleted cannot be referenced by another block's rows
/// (they would be orphans when the deletion commits); an autocommit INSERT
/// waits for the block (it holds the rewrite) and then finds the key gone.
/// A key an open block inserted is not there for others until it commits.
#[tokio::test]
async fn a_key_an_open_block_removes_or_adds_is_not_there_for_others() {
    let server = common::start();
    if !server.is_brewric() {
        return; // PostgreSQL makes the second session wait instead.
    }
    let a = parent_and_child(&server, "fk_open_parent", "pid int REFERENCES parent").await;
    let b = server.connect("fk_open_parent").await;
    let c = server.connect("fk_open_parent").await;
    a.batch_execute("BEGIN; DELETE FROM parent WHERE id = 1").await.unwrap();
    b.batch_execute("BEGIN").await.unwrap();
    assert_foreign_key_violation(b.execute("INSERT INTO child VALUES (1)", &[]).await.expect_err("key 1 is being deleted"));
    b.batch_execute("ROLLBACK").await.unwrap();
    let waiting = tokio::spawn(async move {
        let r = c.execute("INSERT INTO child VALUES (1)", &[]).await;
        (c, r)
    });
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(!waiting.is_finished(), "the INSERT waits for the block that rewrote a table");
    a.batch_execute("COMMIT").await.unwrap();
    let (c, r) = waiting.await.unwrap();
    assert_foreign_key_violation(r.expect_err("key 1 went with the block's COMMIT"));

    a.batch_execute("BEGIN; INSERT INTO parent VALUES (3)").await.unwrap();
    assert_foreign_key_violation(c.execute("INSERT INTO child VALUES (3)", &[]).await.expect_err("key 3 is not committed"));
    a.execute("INSERT INTO child VALUES (3)", &[]).await.expect("the block sees its own key");
    a.batch_execute("COMMIT").await.unwrap();
    c.execute("INSERT INTO child VALUES (3)", &[]).await.expect("committed now");
    assert_eq!(count(&c, "SELECT count(*) FROM child WHERE pid = 3").await, 2);
    assert_eq!(count(&c, "SELECT count(*) FROM child").await, 2);
}

/// Foreign keys are part of the catalog: after kill -9 (and after an ALTER
/// TABLE rewrite gave the referenced table new storage) they still hold.
#[tokio::test]
async fn foreign_keys_survive_a_crash_and_a_rewrite_of_the_referenced_table() {
    let server = common::start();
    if !server.is_brewric() {
        return;
    }
    let client = server.connect(common::DEFAULT_DB).await;
    client
        .batch_execute(
            "CREATE TABLE fk_parent (id int PRIMARY KEY, note text);
             CREATE TABLE fk_child (pid int, CONSTRAINT fk_child_parent FOREIGN KEY (pid) REFERENCES fk_parent ON DELETE CASCADE);
             INSERT INTO fk_parent VALUES (1, 'a'), (2, 'b');
             INSERT INTO fk_child VALUES (1), (2)",
        )
        .await
        .unwrap();
    client.batch_execute("ALTER TABLE fk_parent DROP COLUMN note").await.unwrap();
    let dir = server.kill9();
    let server = common::start_in(dir, 2);
    let client = server.connect(common::DEFAULT_DB).await;
    assert_foreign_key_violation(client.execute("INSERT INTO fk_child VALUES (9)", &[]).await.expect_err("still enforced"));
    client.execute("DELETE FROM fk_parent WHERE id = 1", &[]).await.unwrap();
    assert_eq!(count(&client, "SELECT count(*) FROM fk_child").await, 1, "the cascade still reaches the child");
    let e = client.batch_execute("DROP TABLE fk_parent").await.expect_err("still referenced");
    assert_eq!(e.code(), Some(&SqlState::DEPENDENT_OBJECTS_STILL_EXIST), "{e:?}");
}
