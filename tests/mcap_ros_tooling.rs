//! The MCAP decoder against an independent encoder: a recording written by
//! the ROS tooling (pip `mcap` + `mcap-ros2-support`, through
//! tools/ros2_tooling_mcap.py) is copied into Brewric and every value the
//! script wrote — headers and stamps, strings (UTF-8 included), primitive
//! fields, float and string sequences (empty ones too), fixed arrays,
//! nested structs and sequences of structs as child tables — is read back
//! typed and compared exactly. `.ci/run` installs the Python packages; set
//! BREWRIC_PYTHON to use another interpreter.

mod common;

use std::path::PathBuf;
use std::process::Command;

use serde_json::Value;
use tokio_postgres::types::Type;
use tokio_postgres::Row;

fn python() -> String {
    std::env::var("BREWRIC_PYTHON").unwrap_or_else(|_| "python3".to_string())
}

/// One result cell as JSON, by its column's type.
fn cell(row: &Row, i: usize) -> Value {
    let t = row.columns()[i].type_();
    match *t {
        Type::BOOL => Value::from(row.get::<_, bool>(i)),
        Type::INT2 => Value::from(row.get::<_, i16>(i)),
        Type::INT4 => Value::from(row.get::<_, i32>(i)),
        Type::INT8 => Value::from(row.get::<_, i64>(i)),
        Type::FLOAT4 => Value::from(row.get::<_, f32>(i) as f64),
        Type::FLOAT8 => Value::from(row.get::<_, f64>(i)),
        Type::TEXT | Type::VARCHAR => Value::from(row.get::<_, String>(i)),
        Type::FLOAT8_ARRAY => Value::from(row.get::<_, Vec<f64>>(i)),
        Type::FLOAT4_ARRAY => Value::from(row.get::<_, Vec<f32>>(i).into_iter().map(f64::from).collect::<Vec<_>>()),
        Type::TEXT_ARRAY => Value::from(row.get::<_, Vec<String>>(i)),
        ref other => panic!("column {} has type {other}, which this test does not read", row.columns()[i].name()),
    }
}

/// JSON numbers compare by value (the script writes 1.0 where SQL gives 1).
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        (Value::Array(x), Value::Array(y)) => x.len() == y.len() && x.iter().zip(y).all(|(p, q)| same(p, q)),
        _ => a == b,
    }
}

#[tokio::test]
async fn a_recording_written_by_the_ros_tooling_reads_back_exactly() {
    let dir = std::env::temp_dir().join(format!("brewric-ros-tooling-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (file, expected) = (dir.join("tooling.mcap"), dir.join("tooling.json"));
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let out = Command::new(python())
        .arg(root.join("tools/ros2_tooling_mcap.py"))
        .args([&file, &expected])
        .arg(root.join("../shared/reference/ros2-msg"))
        .output()
        .expect("run python3");
    assert!(
        out.status.success(),
        "tools/ros2_tooling_mcap.py failed (pip install mcap mcap-ros2-support): {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let tables: Value = serde_json::from_slice(&std::fs::read(&expected).unwrap()).unwrap();

    let server = common::start();
    let client = server.connect("postgres").await;
    let n = client
        .execute(&format!("COPY ros FROM '{}' WITH (FORMAT mcap)", file.display()), &[])
        .await
        .unwrap();
    assert_eq!(n, 66, "messages copied");
    let mut checked = 0;
    for (table, spec) in tables.as_object().unwrap() {
        let columns: Vec<&str> = spec["columns"].as_array().unwrap().iter().map(|c| c.as_str().unwrap()).collect();
        let order: Vec<&str> = columns.iter().copied().filter(|c| *c == "sequence" || c.ends_with("_idx")).collect();
        let sql = format!("SELECT {} FROM ros.{table} ORDER BY {}", columns.join(", "), order.join(", "));
        let rows = client.query(&sql, &[]).await.unwrap_or_else(|e| panic!("{sql}: {}", common::describe_error(&e)));
        let want = spec["rows"].as_array().unwrap();
        assert_eq!(rows.len(), want.len(), "{table}: rows");
        for (row, want) in rows.iter().zip(want) {
            for (i, column) in columns.iter().enumerate() {
                let got = cell(row, i);
                assert!(same(&got, &want[i]), "{table}.{column}: Brewric reads {got}, the ROS tooling wrote {}", want[i]);
                checked += 1;
            }
        }
    }
    assert!(checked > 500, "only {checked} values compared");
    let _ = std::fs::remove_dir_all(dir);
}
