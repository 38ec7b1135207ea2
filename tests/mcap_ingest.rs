//! MCAP recordings into tables through `COPY <schema> FROM '<path>' | STDIN
//! WITH (FORMAT mcap …)`: a generated fleet (tools/mcap_fleet.rs, whose CDR
//! encoder is independent of the decoder) ingested by every path — a file's
//! chunks decoded in parallel, a file streamed because it has no summary,
//! STDIN in small pieces — and every count, time range and aggregate the
//! generator wrote in fleet_truth.json read back in SQL; then the bad inputs:
//! each fails with its SQLSTATE and a message naming where, stores nothing,
//! and leaves the server up.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use bytes::Bytes;
use futures::SinkExt;
use serde_json::Value;
use tokio_postgres::Client;

/// The fleet generator's binary (an example of this package), built if absent.
fn fleet_generator() -> PathBuf {
    let exe = std::env::current_exe().expect("test binary path");
    let profile_dir = exe.parent().and_then(Path::parent).expect("target/<profile>");
    let generator = profile_dir.join("examples").join("mcap_fleet");
    if !generator.exists() {
        let mut build = Command::new(env!("CARGO"));
        build.args(["build", "--example", "mcap_fleet"]);
        if profile_dir.ends_with("release") {
            build.arg("--release");
        }
        assert!(build.status().expect("cargo build").success(), "building the fleet generator failed");
    }
    generator
}

/// Writes a fleet into `dir` and returns its fleet_truth.json.
fn generate_fleet(dir: &Path, robots: usize, seconds: usize, compression: &str) -> Value {
    let status = Command::new(fleet_generator())
        .args(["--out", dir.to_str().unwrap(), "--robots", &robots.to_string(), "--seconds", &seconds.to_string()])
        .args(["--compression", compression, "--seed", "7"])
        .stdout(std::process::Stdio::null())
        .status()
        .expect("run mcap_fleet");
    assert!(status.success(), "mcap_fleet failed");
    serde_json::from_slice(&std::fs::read(dir.join("fleet_truth.json")).unwrap()).unwrap()
}

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("brewric-mcap-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// COPY FROM STDIN of `bytes` in pieces of `piece` bytes; Ok(row count) or the error text.
async fn copy_stdin(client: &Client, sql: &str, bytes: &[u8], piece: usize) -> Result<u64, String> {
    let sink = client.copy_in::<_, Bytes>(sql).await.map_err(|e| common::describe_error(&e))?;
    futures::pin_mut!(sink);
    for p in bytes.chunks(piece) {
        sink.send(Bytes::copy_from_slice(p)).await.map_err(|e| common::describe_error(&e))?;
    }
    sink.finish().await.map_err(|e| common::describe_error(&e))
}

/// A 2-shard server this test starts (so it can kill it and look into its
/// data directory), and that directory; None against an external server.
fn own_server_with_two_shards() -> Option<(common::Server, PathBuf)> {
    let server = common::start_with_shards(2);
    if server.is_external() {
        return None;
    }
    let data_dir = server.data_dir()?.to_path_buf();
    Some((server, data_dir))
}

/// How many recordings the server keeps in its data directory.
fn kept_recordings(data_dir: &Path) -> usize {
    std::fs::read_dir(data_dir.join("recordings")).map_or(0, |d| d.count())
}

/// The kept files the catalog's tables name (`frame_files` in catalog.json).
fn catalog_frame_files(data_dir: &Path) -> std::collections::BTreeSet<String> {
    fn collect(v: &Value, out: &mut std::collections::BTreeSet<String>) {
        match v {
            Value::Object(m) => {
                for (k, v) in m {
                    match (k.as_str(), v) {
                        ("frame_files", Value::Array(names)) => out.extend(names.iter().filter_map(|n| n.as_str().map(String::from))),
                        _ => collect(v, out),
                    }
                }
            }
            Value::Array(a) => a.iter().for_each(|v| collect(v, out)),
            _ => {}
        }
    }
    let text = std::fs::read_to_string(data_dir.join("catalog.json")).expect("catalog.json");
    let mut out = std::collections::BTreeSet::new();
    collect(&serde_json::from_str(&text).expect("catalog.json parses"), &mut out);
    out
}

/// The kept files in the data directory, by name.
fn kept_names(data_dir: &Path) -> std::collections::BTreeSet<String> {
    std::fs::read_dir(data_dir.join("recordings"))
        .map(|d| d.filter_map(|e| e.ok()?.file_name().into_string().ok()).collect())
        .unwrap_or_default()
}

/// The schema's tables (views left out), by name.
async fn base_tables(client: &Client, schema: &str) -> Vec<String> {
    let rows = client
        .query(
            "SELECT table_name::text FROM information_schema.tables \
             WHERE table_schema = $1 AND table_type = 'BASE TABLE' ORDER BY 1",
            &[&schema],
        )
        .await
        .unwrap();
    rows.iter().map(|r| r.get::<_, String>(0)).collect()
}

async fn one_i64(client: &Client, sql: &str, recording: &str) -> i64 {
    let row = client.query_one(sql, &[&recording]).await.unwrap_or_else(|e| panic!("{sql}: {}", common::describe_error(&e)));
    row.get::<_, Option<i64>>(0).unwrap_or(0)
}

async fn one_f64(client: &Client, sql: &str, recording: &str) -> f64 {
    let row = client.query_one(sql, &[&recording]).await.unwrap_or_else(|e| panic!("{sql}: {}", common::describe_error(&e)));
    row.get::<_, Option<f64>>(0).unwrap_or(f64::NAN)
}

fn assert_close(what: &str, got: f64, want: f64) {
    let tolerance = 1e-9 * want.abs().max(1.0);
    assert!((got - want).abs() <= tolerance, "{what}: SQL gives {got}, the generator wrote {want}");
}

fn truth_i64(v: &Value, key: &str) -> i64 {
    v[key].as_i64().unwrap_or_else(|| panic!("truth lacks {key}: {v}"))
}

fn truth_f64(v: &Value, key: &str) -> f64 {
    v[key].as_f64().unwrap_or_else(|| panic!("truth lacks {key}: {v}"))
}

/// Every topic's rows, time range and aggregates of one recording, against its truth entry.
async fn check_recording(client: &Client, schema: &str, file: &Value) {
    let recording = file["recording"].as_str().unwrap();
    let r = recording;
    let row = client
        .query_one(
            &format!(
                "SELECT bytes, message_count, epoch_ns(start_time), epoch_ns(end_time), metadata::text LIKE '%\"ROS_DISTRO\": \"jazzy\"%' \
                 FROM {schema}.recordings WHERE name = $1"
            ),
            &[&r],
        )
        .await
        .unwrap();
    assert_eq!(row.get::<_, i64>(0), truth_i64(file, "file_bytes"), "{r}: bytes");
    assert_eq!(row.get::<_, i64>(1), truth_i64(file, "message_count"), "{r}: message_count");
    assert_eq!(row.get::<_, i64>(2), truth_i64(file, "start_time_ns"), "{r}: start_time");
    assert_eq!(row.get::<_, i64>(3), truth_i64(file, "end_time_ns"), "{r}: end_time");
    assert!(row.get::<_, bool>(4), "{r}: rosbag2 metadata");

    for (topic, t) in file["topics"].as_object().unwrap() {
        let table = topic.trim_start_matches('/').replace('/', "_");
        let from = format!("FROM {schema}.{table} WHERE recording = $1");
        let count = one_i64(client, &format!("SELECT count(*) {from}"), r).await;
        assert_eq!(count, truth_i64(t, "message_count"), "{r} {topic}: rows");
        let first = one_i64(client, &format!("SELECT epoch_ns(min(log_time)) {from}"), r).await;
        assert_eq!(first, truth_i64(t, "first_log_time_ns"), "{r} {topic}: first log_time");
        let last = one_i64(client, &format!("SELECT epoch_ns(max(log_time)) {from}"), r).await;
        assert_eq!(last, truth_i64(t, "last_log_time_ns"), "{r} {topic}: last log_time");
        let sequences = one_i64(client, &format!("SELECT max(sequence) - min(sequence) + 1 {from}"), r).await;
        assert_eq!(sequences, count, "{r} {topic}: sequence numbers 1..n");
        let listed = client
            .query_one(
                &format!("SELECT message_count, message_type, table_name FROM {schema}.recording_topics WHERE recording = $1 AND topic = $2"),
                &[&r, topic],
            )
            .await
            .unwrap();
        assert_eq!(listed.get::<_, i64>(0), count, "{r} {topic}: recording_topics");
        assert_eq!(listed.get::<_, String>(1), t["message_type"].as_str().unwrap());
        assert_eq!(listed.get::<_, String>(2), table);

        let sum = |expr: &str| format!("SELECT sum({expr})::float8 {from}");
        match topic.as_str() {
            "/joint_states" => {
                assert_close("sum position[1]", one_f64(client, &sum("position[1]"), r).await, truth_f64(t, "sum_position_0"));
                assert_close("sum velocity[1]", one_f64(client, &sum("velocity[1]"), r).await, truth_f64(t, "sum_velocity_0"));
                let empty = one_i64(client, &format!("SELECT count(*) {from} AND cardinality(effort) = 0"), r).await;
                assert_eq!(empty, truth_i64(t, "empty_effort_count"), "{r}: empty efforts");
                let max_abs = one_f64(
                    client,
                    &format!("SELECT max(abs(e)) FROM (SELECT unnest(effort) AS e {from}) AS efforts"),
                    r,
                )
                .await;
                assert_close("max |effort|", max_abs, truth_f64(t, "max_abs_effort"));
                let joints = one_i64(client, &format!("SELECT max(array_length(name, 1))::bigint {from}"), r).await;
                assert_eq!(joints, truth_i64(t, "joint_count"));
            }
            "/imu" => {
                assert_close("sum linear_acceleration_z", one_f64(client, &sum("linear_acceleration_z"), r).await, truth_f64(t, "sum_linear_acceleration_z"));
                assert_close("sum angular_velocity_z", one_f64(client, &sum("angular_velocity_z"), r).await, truth_f64(t, "sum_angular_velocity_z"));
                // Covariances repeat on every row (kept once in memory): each
                // row reads its own whole copy back.
                let cells = "cardinality(orientation_covariance) + cardinality(angular_velocity_covariance) + cardinality(linear_acceleration_covariance)";
                assert_eq!(one_i64(client, &format!("SELECT sum({cells})::bigint {from}"), r).await, 27 * count);
                let diagonal = "orientation_covariance[1] + orientation_covariance[9] + angular_velocity_covariance[5] + linear_acceleration_covariance[1]";
                assert_close("sum covariance diagonals", one_f64(client, &sum(diagonal), r).await, count as f64 * (0.0025 + 0.0025 + 0.0004 + 0.01));
            }
            "/odom" => {
                assert_close("sum pose x", one_f64(client, &sum("pose_pose_position_x"), r).await, truth_f64(t, "sum_pose_position_x"));
                assert_close("sum twist x", one_f64(client, &sum("twist_twist_linear_x"), r).await, truth_f64(t, "sum_twist_linear_x"));
                let child = client
                    .query_one(&format!("SELECT min(child_frame_id) {from}"), &[&r])
                    .await
                    .unwrap()
                    .get::<_, String>(0);
                assert_eq!(child, t["child_frame_id"].as_str().unwrap());
                let cells = one_i64(client, &format!("SELECT sum(cardinality(pose_covariance) + cardinality(twist_covariance))::bigint {from}"), r).await;
                assert_eq!(cells, 72 * count);
                let corners = one_f64(client, &sum("pose_covariance[1] + pose_covariance[36] + twist_covariance[36] - twist_covariance[2]"), r).await;
                assert_close("sum covariance corners", corners, count as f64 * (0.001 + 0.03 + 0.01));
            }
            "/scan" => {
                let ranges = one_i64(client, &format!("SELECT sum(cardinality(ranges))::bigint {from}"), r).await;
                assert_eq!(ranges, truth_i64(t, "ranges_total"));
                let beams = format!("FROM (SELECT unnest(ranges) AS b {from}) AS beams");
                let pos_inf = one_i64(client, &format!("SELECT count(*) {beams} WHERE b = 'Infinity'"), r).await;
                assert_eq!(pos_inf, truth_i64(t, "pos_inf_count"), "{r}: +inf ranges");
                let neg_inf = one_i64(client, &format!("SELECT count(*) {beams} WHERE b = '-Infinity'"), r).await;
                assert_eq!(neg_inf, truth_i64(t, "neg_inf_count"), "{r}: -inf ranges");
                let nan = one_i64(client, &format!("SELECT count(*) {beams} WHERE b = 'NaN'"), r).await;
                assert_eq!(nan, truth_i64(t, "nan_count"), "{r}: NaN ranges");
                let finite = "WHERE b NOT IN ('Infinity', '-Infinity', 'NaN')";
                let sum_finite = one_f64(client, &format!("SELECT sum(b::float8) {beams} {finite}"), r).await;
                assert_close("sum finite ranges", sum_finite, truth_f64(t, "sum_finite_ranges"));
                let min_finite = one_f64(client, &format!("SELECT min(b)::float8 {beams} {finite}"), r).await;
                assert_close("min finite range", min_finite, truth_f64(t, "min_finite_range"));
            }
            "/battery_state" => {
                assert_close("sum percentage", one_f64(client, &sum("percentage::float8"), r).await, truth_f64(t, "sum_percentage"));
                let min = one_f64(client, &format!("SELECT min(percentage)::float8 {from}"), r).await;
                assert_close("min percentage", min, truth_f64(t, "min_percentage"));
                let nan = one_i64(client, &format!("SELECT count(*) {from} AND temperature = 'NaN'"), r).await;
                assert_eq!(nan, truth_i64(t, "nan_temperature_count"));
                let cells = one_i64(client, &format!("SELECT sum(cardinality(cell_voltage))::bigint {from}"), r).await;
                assert_eq!(cells, truth_i64(t, "cell_voltage_total"));
            }
            "/camera/image_raw" => {
                let bytes = one_i64(client, &format!("SELECT sum(length(data))::bigint {from}"), r).await;
                assert_eq!(bytes, truth_i64(t, "data_bytes"));
                let shape = client
                    .query_one(&format!("SELECT min(width)::bigint, min(height)::bigint, min(encoding) {from}"), &[&r])
                    .await
                    .unwrap();
                assert_eq!(shape.get::<_, i64>(0), truth_i64(t, "width"));
                assert_eq!(shape.get::<_, i64>(1), truth_i64(t, "height"));
                assert_eq!(shape.get::<_, String>(2), t["encoding"].as_str().unwrap());
            }
            "/camera/image/compressed" => {
                let bytes = one_i64(client, &format!("SELECT sum(length(data))::bigint {from}"), r).await;
                assert_eq!(bytes, truth_i64(t, "data_bytes"));
                let format = client.query_one(&format!("SELECT min(format) {from}"), &[&r]).await.unwrap();
                assert_eq!(format.get::<_, String>(0), t["format"].as_str().unwrap());
            }
            "/diagnostics" => {
                let child = |suffix: &str| format!("SELECT count(*) FROM {schema}.diagnostics_{suffix} WHERE recording = $1");
                assert_eq!(one_i64(client, &child("status"), r).await, truth_i64(t, "status_count"));
                assert_eq!(one_i64(client, &child("status_values"), r).await, truth_i64(t, "key_value_count"));
                for (level, n) in t["status_level_counts"].as_object().unwrap() {
                    let got = one_i64(
                        client,
                        &format!("SELECT count(*) FROM {schema}.diagnostics_status WHERE recording = $1 AND level = {level}"),
                        r,
                    )
                    .await;
                    assert_eq!(got, n.as_i64().unwrap(), "{r}: diagnostics level {level}");
                }
            }
            "/rosout" => {
                for (level, n) in t["level_counts"].as_object().unwrap() {
                    let got = one_i64(client, &format!("SELECT count(*) {from} AND level = {level}"), r).await;
                    assert_eq!(got, n.as_i64().unwrap(), "{r}: rosout level {level}");
                }
                for (node, n) in t["error_count_by_node"].as_object().unwrap() {
                    let got = one_i64(client, &format!("SELECT count(*) {from} AND level = 40 AND name = '{node}'"), r).await;
                    assert_eq!(got, n.as_i64().unwrap(), "{r}: errors of {node}");
                }
            }
            _ => {}
        }
    }
}

#[tokio::test]
async fn generated_fleet_reads_back_exactly_by_every_path() {
    let zstd_dir = temp_dir("zstd");
    let truth = generate_fleet(&zstd_dir, 3, 12, "zstd");
    let lz4_dir = temp_dir("lz4");
    let lz4_truth = generate_fleet(&lz4_dir, 1, 6, "lz4");
    let plain_dir = temp_dir("none");
    let plain_truth = generate_fleet(&plain_dir, 1, 6, "none");

    let server = common::start();
    let client = server.connect("postgres").await;
    let files = truth["files"].as_array().unwrap();
    // robot01: a server file, chunks decoded in parallel; the name from the file.
    let n = client
        .execute(&format!("COPY fleet FROM '{}' WITH (FORMAT mcap)", zstd_dir.join("robot01.mcap").display()), &[])
        .await
        .unwrap();
    assert_eq!(n as i64, truth_i64(&files[0], "message_count"));
    // robot02: STDIN in 1000-byte pieces (records and chunks cut anywhere).
    let bytes = std::fs::read(zstd_dir.join("robot02.mcap")).unwrap();
    let n = copy_stdin(&client, "COPY fleet FROM STDIN WITH (FORMAT mcap, RECORDING 'robot02')", &bytes, 1000)
        .await
        .unwrap();
    assert_eq!(n as i64, truth_i64(&files[1], "message_count"));
    // robot03: a file without its summary (cut after DataEnd): streamed, as rosbag2's crash leftovers are.
    let bytes = std::fs::read(zstd_dir.join("robot03.mcap")).unwrap();
    let no_summary = strip_summary(&bytes);
    let cut = zstd_dir.join("robot03-cut.mcap");
    std::fs::write(&cut, &no_summary).unwrap();
    let n = client
        .execute(&format!("COPY fleet FROM '{}' WITH (FORMAT mcap, RECORDING robot03)", cut.display()), &[])
        .await
        .unwrap();
    assert_eq!(n as i64, truth_i64(&files[2], "message_count"));
    let check_all = || async {
        for (i, file) in files.iter().enumerate() {
            let mut file = file.clone();
            if i == 2 {
                file["file_bytes"] = Value::from(no_summary.len());
            }
            check_recording(&client, "fleet", &file).await;
        }
    };
    check_all().await;
    // The same values read back from segment files (the flush writes out
    // the covariance arrays a memtable block keeps once).
    client.execute("CHECKPOINT", &[]).await.unwrap();
    check_all().await;
    // lz4 and uncompressed chunks, each into its own schema.
    for (schema, dir, truth) in [("fleet_lz4", &lz4_dir, &lz4_truth), ("fleet_plain", &plain_dir, &plain_truth)] {
        let path = dir.join("robot01.mcap");
        client
            .execute(&format!("COPY {schema} FROM '{}' WITH (FORMAT mcap)", path.display()), &[])
            .await
            .unwrap();
        check_recording(&client, schema, &truth["files"][0]).await;
    }
    // The topics view sums the recordings.
    for (topic, n) in truth["totals"]["messages_per_topic"].as_object().unwrap() {
        let row = client
            .query_one("SELECT message_count FROM fleet.topics WHERE topic = $1", &[topic])
            .await
            .unwrap();
        assert_eq!(row.get::<_, i64>(0), n.as_i64().unwrap(), "fleet.topics {topic}");
    }
    let listed: i64 = client.query_one("SELECT count(*) FROM fleet.recordings", &[]).await.unwrap().get(0);
    assert_eq!(listed, 3);
    for dir in [zstd_dir, lz4_dir, plain_dir] {
        let _ = std::fs::remove_dir_all(dir);
    }
}

const CHUNK: u8 = 0x06;
const MESSAGE_INDEX: u8 = 0x07;
const DATA_END: u8 = 0x0F;

/// (offset, opcode, body length) of every record of the data section, in file order.
fn top_level_records(file: &[u8]) -> Vec<(usize, u8, usize)> {
    let mut out = Vec::new();
    let mut at = 8;
    while at + 9 <= file.len() {
        let opcode = file[at];
        let len = u64::from_le_bytes(file[at + 1..at + 9].try_into().unwrap()) as usize;
        out.push((at, opcode, len));
        at += 9 + len;
        if opcode == DATA_END {
            break;
        }
    }
    out
}

/// The file up to and including its DataEnd record, then the end magic: no
/// summary, no footer (what a reader without the index must handle).
fn strip_summary(file: &[u8]) -> Vec<u8> {
    let (data_end, len) = top_level_records(file).into_iter().find(|r| r.1 == DATA_END).map(|r| (r.0, r.2)).unwrap();
    let mut out = file[..data_end + 9 + len].to_vec();
    // Footer with summary_start 0: no summary.
    out.push(0x02);
    out.extend_from_slice(&20u64.to_le_bytes());
    out.extend_from_slice(&[0u8; 20]);
    out.extend_from_slice(b"\x89MCAP0\r\n");
    out
}

#[tokio::test]
async fn bad_recordings_fail_whole_with_where_and_the_server_stays_up() {
    let dir = temp_dir("bad");
    let truth = generate_fleet(&dir, 1, 4, "zstd");
    let good = std::fs::read(dir.join("robot01.mcap")).unwrap();
    let server = common::start();
    let client = server.connect("postgres").await;

    let copy_file = |path: &Path, options: &str| format!("COPY fleet FROM '{}' WITH (FORMAT mcap{options})", path.display());
    let expect_error = |result: Result<u64, tokio_postgres::Error>, code: &str, words: &[&str]| {
        let e = result.expect_err("the COPY should fail");
        let text = common::describe_error(&e);
        assert_eq!(common::sqlstate(&e).as_deref(), Some(code), "{text}");
        for w in words {
            assert!(text.contains(w), "{text} should mention {w:?}");
        }
    };

    // A truncated file (half of it), from a file and from STDIN.
    let half = dir.join("half.mcap");
    std::fs::write(&half, &good[..good.len() / 2]).unwrap();
    expect_error(client.execute(&copy_file(&half, ""), &[]).await, "22P04", &["truncated", "offset"]);
    let err = copy_stdin(&client, "COPY fleet FROM STDIN (FORMAT mcap, RECORDING 'half')", &good[..good.len() / 2], 4096)
        .await
        .expect_err("truncated STDIN");
    assert!(err.contains("truncated"), "{err}");

    // A damaged byte inside the first chunk's compressed records.
    let first_chunk = top_level_records(&good).into_iter().find(|r| r.1 == CHUNK).unwrap().0;
    let mut damaged = good.clone();
    let target = first_chunk + 200;
    damaged[target] ^= 0x5a;
    let bad = dir.join("damaged.mcap");
    std::fs::write(&bad, &damaged).unwrap();
    let e = client.execute(&copy_file(&bad, ""), &[]).await.expect_err("damaged chunk");
    let text = common::describe_error(&e);
    assert!(text.contains("chunk") && text.contains(&format!("offset {first_chunk}")), "names the chunk's offset: {text}");

    // A damaged byte outside every chunk (in a message index, which the
    // ingest does not read): only the data section's CRC finds it.
    let index = top_level_records(&good).into_iter().find(|r| r.1 == MESSAGE_INDEX && r.2 > 16).unwrap();
    let data_end = top_level_records(&good).into_iter().find(|r| r.1 == DATA_END).unwrap().0;
    let mut damaged = good.clone();
    damaged[index.0 + 9 + index.2 - 1] ^= 0x5a;
    let bad_index = dir.join("damaged_index.mcap");
    std::fs::write(&bad_index, &damaged).unwrap();
    expect_error(
        client.execute(&copy_file(&bad_index, ""), &[]).await,
        "22P04",
        &["data section CRC mismatch", &format!("offset {data_end}")],
    );

    // Not MCAP at all; a missing file; STDIN without a name; an unknown option.
    let junk = dir.join("junk.mcap");
    std::fs::write(&junk, b"hello, this is not a recording").unwrap();
    expect_error(client.execute(&copy_file(&junk, ""), &[]).await, "22P04", &["not an MCAP file"]);
    expect_error(client.execute(&copy_file(&dir.join("absent.mcap"), ""), &[]).await, "58P01", &["absent.mcap"]);
    let err = copy_stdin(&client, "COPY fleet FROM STDIN (FORMAT mcap)", &good, 65536).await.expect_err("no RECORDING");
    assert!(err.contains("RECORDING"), "{err}");
    expect_error(client.execute(&copy_file(&junk, ", SPEED 'fast'"), &[]).await, "42601", &["speed"]);

    // Nothing of the failures is stored: no recording, no rows, and none of
    // the topic tables they created (the schema's recording catalog stays).
    let recordings: i64 = client.query_one("SELECT count(*) FROM fleet.recordings", &[]).await.unwrap().get(0);
    assert_eq!(recordings, 0, "fleet.recordings after failed COPYs");
    assert_eq!(base_tables(&client, "fleet").await, ["frame_index", "recording_topics", "recordings"], "tables after failed COPYs");

    // The same recording twice: the second is refused and changes nothing.
    let path = dir.join("robot01.mcap");
    client.execute(&copy_file(&path, ""), &[]).await.unwrap();
    expect_error(client.execute(&copy_file(&path, ""), &[]).await, "23505", &["robot01"]);
    let n: i64 = client.query_one("SELECT count(*) FROM fleet.imu", &[]).await.unwrap().get(0);
    assert_eq!(n, truth_i64(&truth["files"][0]["topics"]["/imu"], "message_count"));
    // Under another name it is a second recording.
    client.execute(&copy_file(&path, ", RECORDING 'robot01_again'"), &[]).await.unwrap();
    let n: i64 = client.query_one("SELECT count(DISTINCT recording) FROM fleet.imu", &[]).await.unwrap().get(0);
    assert_eq!(n, 2);
    // A failed COPY into tables that hold other recordings leaves them and their rows.
    expect_error(client.execute(&copy_file(&bad, ", RECORDING 'damaged'"), &[]).await, "22P04", &["chunk"]);
    let n: i64 = client.query_one("SELECT count(*) FROM fleet.imu", &[]).await.unwrap().get(0);
    assert_eq!(n, 2 * truth_i64(&truth["files"][0]["topics"]["/imu"], "message_count"));
    assert!(base_tables(&client, "fleet").await.contains(&"imu".to_string()));
    // Inside a transaction block a failed COPY aborts the block (25P02 until ROLLBACK).
    client.batch_execute("BEGIN").await.unwrap();
    expect_error(client.execute(&copy_file(&bad, ", RECORDING 'in_txn'"), &[]).await, "22P04", &["chunk"]);
    expect_error(client.execute("SELECT 1", &[]).await, "25P02", &["aborted"]);
    client.batch_execute("ROLLBACK").await.unwrap();
    let n: i64 = client.query_one("SELECT count(DISTINCT recording) FROM fleet.imu", &[]).await.unwrap().get(0);
    assert_eq!(n, 2);
    let _ = std::fs::remove_dir_all(dir);
}

/// A COPY inside `BEGIN … COMMIT` (as psycopg sends it unless autocommit is
/// on) is one more write of the block: visible to the block at once, to
/// everyone at COMMIT, and ROLLBACK takes its rows and the tables it made.
#[tokio::test]
async fn a_recording_copied_in_a_transaction_block_commits_and_rolls_back_with_it() {
    let dir = temp_dir("txn");
    let truth = generate_fleet(&dir, 2, 4, "zstd");
    let files = truth["files"].as_array().unwrap();
    let server = common::start();
    let client = server.connect("postgres").await;
    let other = server.connect("postgres").await;
    let copy_file = |name: &str| format!("COPY fleet FROM '{}' WITH (FORMAT mcap)", dir.join(name).display());
    let imu_count = |file: &Value| truth_i64(&file["topics"]["/imu"], "message_count");

    // ROLLBACK: nothing of it stays (the tables and the schema it created go too).
    client.batch_execute("BEGIN").await.unwrap();
    let n = client.execute(&copy_file("robot01.mcap"), &[]).await.unwrap();
    assert_eq!(n as i64, truth_i64(&files[0], "message_count"));
    let seen: i64 = client.query_one("SELECT count(*) FROM fleet.imu", &[]).await.unwrap().get(0);
    assert_eq!(seen, imu_count(&files[0]), "the block sees its recording");
    let outside = other.query_one("SELECT count(*) FROM fleet.imu", &[]).await.map(|r| r.get::<_, i64>(0));
    assert!(!matches!(outside, Ok(n) if n > 0), "another session sees no rows before COMMIT: {outside:?}");
    client.batch_execute("ROLLBACK").await.unwrap();
    for table in ["imu", "recordings", "joint_states"] {
        let e = client.query_one(&format!("SELECT count(*) FROM fleet.{table}"), &[]).await.expect_err("gone after ROLLBACK");
        assert_eq!(common::sqlstate(&e).as_deref(), Some("42P01"), "fleet.{table}: {}", common::describe_error(&e));
    }
    let schemas: i64 = client.query_one("SELECT count(*) FROM pg_namespace WHERE nspname = 'fleet'", &[]).await.unwrap().get(0);
    assert_eq!(schemas, 0, "the schema the block made goes too");

    // COMMIT: a server file and a STDIN stream in one block, both whole.
    client.batch_execute("BEGIN").await.unwrap();
    client.execute(&copy_file("robot01.mcap"), &[]).await.unwrap();
    let bytes = std::fs::read(dir.join("robot02.mcap")).unwrap();
    copy_stdin(&client, "COPY fleet FROM STDIN WITH (FORMAT mcap, RECORDING 'robot02')", &bytes, 65536).await.unwrap();
    // The same name twice in the block is refused (and aborts it) …
    let e = client.execute(&copy_file("robot01.mcap"), &[]).await.expect_err("a second robot01");
    assert_eq!(common::sqlstate(&e).as_deref(), Some("23505"), "{}", common::describe_error(&e));
    client.batch_execute("ROLLBACK").await.unwrap();
    // … so the block runs again without it.
    client.batch_execute("BEGIN").await.unwrap();
    client.execute(&copy_file("robot01.mcap"), &[]).await.unwrap();
    copy_stdin(&client, "COPY fleet FROM STDIN WITH (FORMAT mcap, RECORDING 'robot02')", &bytes, 65536).await.unwrap();
    client.batch_execute("COMMIT").await.unwrap();
    for file in files {
        check_recording(&other, "fleet", file).await;
    }
    client.execute("CHECKPOINT", &[]).await.unwrap();
    for file in files {
        check_recording(&other, "fleet", file).await;
    }
    let _ = std::fs::remove_dir_all(dir);
}

/// A COPY that fails removes the tables it created, but never one that a
/// COPY running beside it writes to: that one's rows all stay.
#[tokio::test]
async fn a_failed_copy_beside_a_good_one_removes_no_table_the_good_one_fills() {
    let dir = temp_dir("beside");
    let truth = generate_fleet(&dir, 1, 4, "zstd");
    let good = dir.join("robot01.mcap");
    let bytes = std::fs::read(&good).unwrap();
    let first_chunk = top_level_records(&bytes).into_iter().find(|r| r.1 == CHUNK).unwrap().0;
    let mut damaged = bytes.clone();
    damaged[first_chunk + 200] ^= 0x5a;
    let bad = dir.join("damaged.mcap");
    std::fs::write(&bad, &damaged).unwrap();
    let imu = truth_i64(&truth["files"][0]["topics"]["/imu"], "message_count");

    let server = common::start();
    let (a, b) = (server.connect("postgres").await, server.connect("postgres").await);
    for round in 0..6 {
        let schema = format!("beside{round}");
        let (good_sql, bad_sql) = (
            format!("COPY {schema} FROM '{}' WITH (FORMAT mcap)", good.display()),
            format!("COPY {schema} FROM '{}' WITH (FORMAT mcap)", bad.display()),
        );
        // Alternate which one starts first.
        let (ok, failed) = if round % 2 == 0 {
            tokio::join!(a.execute(&good_sql, &[]), b.execute(&bad_sql, &[]))
        } else {
            let (f, o) = tokio::join!(b.execute(&bad_sql, &[]), a.execute(&good_sql, &[]));
            (o, f)
        };
        let stored = ok.unwrap_or_else(|e| panic!("round {round}: the good COPY failed: {}", common::describe_error(&e)));
        assert!(stored > 0);
        assert!(failed.is_err(), "round {round}: the damaged COPY should fail");
        let n: i64 = a.query_one(&format!("SELECT count(*) FROM {schema}.imu"), &[]).await.unwrap().get(0);
        assert_eq!(n, imu, "round {round}: every IMU row of the good recording");
        assert!(base_tables(&a, &schema).await.contains(&"imu".to_string()));
    }
    let _ = std::fs::remove_dir_all(dir);
}

#[tokio::test]
async fn a_schema_dropped_with_cascade_takes_its_recordings_and_can_be_filled_again() {
    let dir = temp_dir("dropped");
    let truth = generate_fleet(&dir, 1, 4, "zstd");
    let file = dir.join("robot01.mcap");
    let imu = truth_i64(&truth["files"][0]["topics"]["/imu"], "message_count");
    let Some((server, data_dir)) = own_server_with_two_shards() else { return };
    let client = server.connect("postgres").await;
    let copy = format!("COPY again FROM '{}' WITH (FORMAT mcap)", file.display());
    client.execute(&copy, &[]).await.unwrap();
    let second = client.execute(&copy, &[]).await.expect_err("a recording is stored once per schema");
    assert_eq!(second.code(), Some(&tokio_postgres::error::SqlState::UNIQUE_VIOLATION));
    let refused = client.execute("DROP SCHEMA again", &[]).await.expect_err("the schema holds tables");
    assert_eq!(refused.code().map(|c| c.code()), Some("2BP01"));

    client.batch_execute("CREATE VIEW imu_rows AS SELECT count(*) AS n FROM again.imu").await.unwrap();
    client.execute("DROP SCHEMA again CASCADE", &[]).await.unwrap();
    assert!(base_tables(&client, "again").await.is_empty());
    // Its copy goes at the next checkpoint, also on a server writing
    // nothing else: each WAL leaves the segment holding the recording's
    // references then (`Wal::roll_now`), so nothing names the copy.
    client.execute("CHECKPOINT", &[]).await.unwrap();
    assert_eq!(kept_recordings(&data_dir), 0, "nothing needs the copy any more: its disk space comes back");
    let gone = client.query("SELECT * FROM imu_rows", &[]).await.expect_err("the view on it went too");
    assert_eq!(gone.code(), Some(&tokio_postgres::error::SqlState::UNDEFINED_TABLE));

    client.execute(&copy, &[]).await.unwrap();
    let n: i64 = client.query_one("SELECT count(*) FROM again.imu", &[]).await.unwrap().get(0);
    assert_eq!(n, imu, "the IMU rows once: none left from before the drop");
    let recordings: i64 = client.query_one("SELECT count(*) FROM again.recordings", &[]).await.unwrap().get(0);
    assert_eq!(recordings, 1);

    // Recovery replays the recording stored again.
    drop(client);
    let server = common::start_in(server.kill9(), 2);
    let client = server.connect("postgres").await;
    let n: i64 = client.query_one("SELECT count(*) FROM again.imu", &[]).await.unwrap().get(0);
    assert_eq!(n, imu, "the IMU rows once after a restart");
    client.execute("CHECKPOINT", &[]).await.unwrap();
    drop(client);
    let server = common::start_in(server.kill9(), 2);
    assert_eq!(kept_recordings(&data_dir), 1, "the stored recording's copy is kept");
    let client = server.connect("postgres").await;
    let n: i64 = client.query_one("SELECT count(*) FROM again.imu", &[]).await.unwrap().get(0);
    assert_eq!(n, imu);
    let _ = std::fs::remove_dir_all(dir);
}

/// A checkpoint deletes the kept copies nothing needs any more; one running
/// beside COPYs must not take a copy whose ingest is still running (its file
/// is pinned until the catalog and the WAL name it): after a kill -9 every
/// recording comes back, its camera frames read from its copy.
#[tokio::test]
async fn checkpoints_beside_copies_keep_every_copy_a_recording_needs() {
    let dir = temp_dir("ckpt-beside");
    let truth = generate_fleet(&dir, 2, 12, "zstd");
    let files = truth["files"].as_array().unwrap().clone();
    let Some((server, data_dir)) = own_server_with_two_shards() else { return };
    let (loader, checkpointer) = (server.connect("postgres").await, server.connect("postgres").await);
    let done = std::sync::atomic::AtomicBool::new(false);
    let checkpoints = async {
        let mut n = 0;
        while !done.load(std::sync::atomic::Ordering::Relaxed) {
            checkpointer.execute("CHECKPOINT", &[]).await.unwrap();
            n += 1;
        }
        n
    };
    let loads = async {
        for schema in ["first", "second"] {
            for file in &files {
                let path = dir.join(file["file"].as_str().unwrap());
                loader.execute(&format!("COPY {schema} FROM '{}' WITH (FORMAT mcap)", path.display()), &[]).await.unwrap();
            }
        }
        done.store(true, std::sync::atomic::Ordering::Relaxed);
    };
    let (n, ()) = tokio::join!(checkpoints, loads);
    assert!(n > 1, "checkpoints ran while the COPYs did");
    assert_eq!(kept_recordings(&data_dir), 4, "every recording's copy (their frames live there)");
    drop((loader, checkpointer));
    let server = common::start_in(server.kill9(), 2);
    let client = server.connect("postgres").await;
    for schema in ["first", "second"] {
        for file in &files {
            check_recording(&client, schema, file).await;
        }
    }
    let _ = std::fs::remove_dir_all(dir);
}

/// A raw HTTP/1.1 PUT; returns (status, body).
fn http_put(addr: &str, target: &str, body: &[u8]) -> (u16, String) {
    use std::io::{Read, Write};
    let mut s = std::net::TcpStream::connect(addr).expect("connect http");
    let head = format!("PUT {target} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nContent-Length: {}\r\n\r\n", body.len());
    s.write_all(head.as_bytes()).unwrap();
    s.write_all(body).unwrap();
    let mut out = Vec::new();
    s.read_to_end(&mut out).unwrap();
    let text = String::from_utf8_lossy(&out).into_owned();
    let status = text.split(' ').nth(1).and_then(|c| c.parse().ok()).unwrap_or(0);
    (status, text.split_once("\r\n\r\n").map_or(String::new(), |(_, b)| b.to_string()))
}

#[tokio::test]
async fn http_put_stores_a_recording_and_answers_with_its_summary() {
    let dir = temp_dir("http");
    let truth = generate_fleet(&dir, 1, 4, "zstd");
    let file = &truth["files"][0];
    let bytes = std::fs::read(dir.join("robot01.mcap")).unwrap();
    let server = common::start();
    let addr = server.http_addr.clone().expect("http endpoint");

    let (status, body) = http_put(&addr, "/v1/recordings/run%2001?schema=yard", &bytes);
    assert_eq!(status, 200, "{body}");
    let summary: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(summary["recording"], "run 01");
    assert_eq!(summary["schema"], "yard");
    assert_eq!(summary["bytes"].as_u64(), Some(bytes.len() as u64));
    assert_eq!(summary["message_count"].as_i64(), Some(truth_i64(file, "message_count")));
    assert_eq!(summary["start_time_ns"].as_i64(), Some(truth_i64(file, "start_time_ns")));
    assert_eq!(summary["end_time_ns"].as_i64(), Some(truth_i64(file, "end_time_ns")));
    let topics = summary["topics"].as_array().unwrap();
    assert_eq!(topics.len(), file["topics"].as_object().unwrap().len());
    for t in topics {
        let want = &file["topics"][t["topic"].as_str().unwrap()];
        assert_eq!(t["message_count"].as_i64(), Some(truth_i64(want, "message_count")), "{t}");
        assert_eq!(t["message_type"], want["message_type"]);
    }
    assert!(summary["start_time"].as_str().unwrap().starts_with("2026-01-05T08:00:00."), "{summary}");

    // HTTP writes go to the ingest database (--ingest-database, default brewric).
    let client = server.connect("brewric").await;
    let n: i64 = client
        .query_one("SELECT count(*) FROM yard.imu WHERE recording = 'run 01'", &[])
        .await
        .unwrap()
        .get(0);
    assert_eq!(n, truth_i64(&file["topics"]["/imu"], "message_count"));

    // Again under the same name: 409, nothing added. A body that is not MCAP: 400.
    let (status, body) = http_put(&addr, "/v1/recordings/run%2001?schema=yard", &bytes);
    assert_eq!(status, 409, "{body}");
    let (status, body) = http_put(&addr, "/v1/recordings/junk?schema=yard", b"not a recording at all");
    assert_eq!(status, 400, "{body}");
    assert!(body.contains("not an MCAP file"), "{body}");
    let (status, _) = http_put(&addr, "/v1/recordings/?schema=yard", &bytes);
    assert_eq!(status, 400);
    let n: i64 = client.query_one("SELECT count(*) FROM yard.recordings", &[]).await.unwrap().get(0);
    assert_eq!(n, 1);
    let _ = std::fs::remove_dir_all(dir);
}

#[tokio::test]
async fn a_running_ingest_shows_in_pg_stat_progress_copy_and_pg_stat_activity() {
    let dir = temp_dir("progress");
    let truth = generate_fleet(&dir, 1, 4, "zstd");
    let bytes = std::fs::read(dir.join("robot01.mcap")).unwrap();
    let server = common::start();
    let loader = server.connect("postgres").await;
    let watcher = server.connect("postgres").await;
    let sql = "COPY fleet FROM STDIN WITH (FORMAT mcap, RECORDING 'watched')";
    let sink = loader.copy_in::<_, Bytes>(sql).await.unwrap();
    futures::pin_mut!(sink);
    let half = bytes.len() / 2;
    sink.send(Bytes::copy_from_slice(&bytes[..half])).await.unwrap();
    // The data is in flight: wait until the server has read it.
    let mut seen = None;
    for _ in 0..200 {
        let rows = watcher
            .query(
                "SELECT p.command, p.type, p.bytes_processed, a.query, a.state \
                 FROM pg_stat_progress_copy p JOIN pg_stat_activity a ON a.pid = p.pid",
                &[],
            )
            .await
            .unwrap();
        if let Some(r) = rows.first() {
            if r.get::<_, i64>(2) as usize == half {
                seen = Some((r.get::<_, String>(0), r.get::<_, String>(1), r.get::<_, String>(3), r.get::<_, String>(4)));
                break;
            }
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    let (command, kind, query, state) = seen.expect("the MCAP COPY in pg_stat_progress_copy with the bytes sent");
    assert_eq!((command.as_str(), kind.as_str(), state.as_str()), ("COPY FROM", "PIPE", "active"));
    assert_eq!(query, sql);
    sink.send(Bytes::copy_from_slice(&bytes[half..])).await.unwrap();
    let n = sink.finish().await.unwrap();
    assert_eq!(n as i64, truth_i64(&truth["files"][0], "message_count"));
    let left: i64 = watcher.query_one("SELECT count(*) FROM pg_stat_progress_copy", &[]).await.unwrap().get(0);
    assert_eq!(left, 0, "the finished COPY left pg_stat_progress_copy");
    let _ = std::fs::remove_dir_all(dir);
}

/// A server file's rows are logged as references into a kept copy of the
/// file (`storage::recordings`), not row by row: after a SIGKILL the rows
/// come back by decoding the kept copy again — also when the user has
/// deleted their file — and a COPY that fails keeps nothing.
#[tokio::test]
async fn a_recording_logged_by_reference_survives_kill_9_without_its_source_file() {
    let dir = temp_dir("kill9");
    let truth = generate_fleet(&dir, 2, 12, "zstd");
    let files = truth["files"].as_array().unwrap().clone();
    let Some((server, data_dir)) = own_server_with_two_shards() else { return };
    let kept = || kept_recordings(&data_dir);
    let client = server.connect("postgres").await;
    for file in &files {
        let path = dir.join(file["file"].as_str().unwrap());
        client.execute(&format!("COPY fleet FROM '{}' WITH (FORMAT mcap)", path.display()), &[]).await.unwrap();
    }
    assert_eq!(kept(), 2, "one kept copy per recording");
    // A COPY that fails after its file was kept leaves no copy behind.
    let good = std::fs::read(dir.join("robot01.mcap")).unwrap();
    let first_chunk = top_level_records(&good).into_iter().find(|r| r.1 == CHUNK).unwrap().0;
    let mut damaged = good.clone();
    damaged[first_chunk + 200] ^= 0x5a;
    let bad = dir.join("damaged.mcap");
    std::fs::write(&bad, &damaged).unwrap();
    client.execute(&format!("COPY fleet FROM '{}' WITH (FORMAT mcap)", bad.display()), &[]).await.expect_err("damaged chunk");
    assert_eq!(kept(), 2, "the failed COPY's copy is removed");
    assert_eq!(
        catalog_frame_files(&data_dir),
        kept_names(&data_dir),
        "the camera tables name the kept files, not the failed COPY's removed one"
    );
    drop(client);
    // The user deletes their files; the server dies without a checkpoint.
    let _ = std::fs::remove_dir_all(&dir);
    let data_dir = server.kill9();
    let server = common::start_in(data_dir.clone(), 2);
    let client = server.connect("postgres").await;
    for file in &files {
        check_recording(&client, "fleet", file).await;
    }
    // After a checkpoint the rows live in segment files; a restart reads
    // them from there and drops the copies no WAL record needs any more.
    client.execute("CHECKPOINT", &[]).await.unwrap();
    drop(client);
    let data_dir = server.kill9();
    let server = common::start_in(data_dir, 2);
    let client = server.connect("postgres").await;
    for file in &files {
        check_recording(&client, "fleet", file).await;
    }
}

/// A recording logged by reference (its rows decoded again from the kept
/// file at recovery) into a table that an ALTER TABLE … ADD COLUMN widened
/// afterwards: the table keeps its OID, so after kill -9 the chunks decode
/// again into the wider table, whose added column reads NULL on the
/// recording's rows.
#[tokio::test]
async fn a_recording_logged_by_reference_comes_back_into_a_table_widened_since() {
    let dir = temp_dir("widened-kept");
    let truth = generate_fleet(&dir, 1, 12, "zstd");
    let files = truth["files"].as_array().unwrap().clone();
    let Some((server, _)) = own_server_with_two_shards() else { return };
    let client = server.connect("postgres").await;
    let path = dir.join(files[0]["file"].as_str().unwrap());
    client.execute(&format!("COPY fleet FROM '{}' WITH (FORMAT mcap)", path.display()), &[]).await.unwrap();
    client.batch_execute("ALTER TABLE fleet.imu ADD COLUMN note text").await.unwrap();
    let notes = "SELECT count(*), count(note) FROM fleet.imu";
    let before: (i64, i64) = client.query_one(notes, &[]).await.map(|r| (r.get(0), r.get(1))).unwrap();
    assert!(before.0 > 0 && before.1 == 0, "{before:?}");
    drop(client);
    let server = common::start_in(server.kill9(), 2);
    let client = server.connect("postgres").await;
    check_recording(&client, "fleet", &files[0]).await;
    let after: (i64, i64) = client.query_one(notes, &[]).await.map(|r| (r.get(0), r.get(1))).unwrap();
    assert_eq!(after, before, "the recording's rows, NULL in the added column");
    let _ = std::fs::remove_dir_all(dir);
}

/// A recording streamed in whose topic has two channels, the second with a
/// newer definition (one more field) met after the first channel's rows:
/// the table gains the column between the write's batches (same OID), the
/// first channel's rows read NULL there.
#[tokio::test]
async fn a_stream_widens_a_table_it_already_wrote_through_another_channel() {
    let server = common::start();
    let client = server.connect("postgres").await;
    let copy = "COPY twochannels FROM STDIN WITH (FORMAT mcap, RECORDING 'both')";
    copy_stdin(&client, copy, &recording_with_two_reading_channels(), 1 << 20)
        .await
        .unwrap_or_else(|e| panic!("the second channel's newer definition: {e}"));
    let rows: Vec<(f64, Option<f64>)> = client
        .query("SELECT a, b FROM twochannels.reading ORDER BY sequence", &[])
        .await
        .unwrap()
        .iter()
        .map(|r| (r.get(0), r.get(1)))
        .collect();
    let want: Vec<(f64, Option<f64>)> =
        (0..6).map(|i| (10.0 * i as f64, (i >= 3).then_some(10.0 * i as f64 + 1.0))).collect();
    assert_eq!(rows, want);
}

/// Like [`recording_with_reading`], but /reading has two channels: three
/// messages with the fields `a`, then three on a second channel whose
/// definition has `a` and `b` (message `i`'s field `f` holds `10 i + f`).
fn recording_with_two_reading_channels() -> Vec<u8> {
    let mut w = unchunked_writer();
    for (fields, first) in [(&["a"][..], 0u32), (&["a", "b"][..], 3)] {
        let definition: String = fields.iter().map(|f| format!("float64 {f}\n")).collect();
        let schema = w.add_schema("test_msgs/msg/Reading", "ros2msg", definition.as_bytes()).unwrap();
        let channel = w.add_channel(schema, "/reading", "cdr", &Default::default()).unwrap();
        for i in first..first + 3 {
            let values: Vec<f64> = (0..fields.len()).map(|f| (10 * i as usize + f) as f64).collect();
            w.write_to_known_channel(&message_header(channel, i), &cdr_f64s(&values)).unwrap();
        }
    }
    w.finish().unwrap();
    w.into_inner().into_inner()
}

/// An MCAP writer (the `mcap` crate, ros2 profile) of an unchunked recording.
fn unchunked_writer() -> mcap::Writer<std::io::Cursor<Vec<u8>>> {
    mcap::WriteOptions::new()
        .profile("ros2")
        .use_chunks(false)
        .create(std::io::Cursor::new(Vec::new()))
        .unwrap()
}

/// Message `i` of a channel: sequence `i`, logged and published `i` ms after the start.
fn message_header(channel_id: u16, i: u32) -> mcap::records::MessageHeader {
    mcap::records::MessageHeader {
        channel_id,
        sequence: i,
        log_time: 1_767_600_000_000_000_000 + i as u64 * 1_000_000,
        publish_time: 1_767_600_000_000_000_000 + i as u64 * 1_000_000,
    }
}

/// CDR, little endian: the encapsulation header, then the float64s.
fn cdr_f64s(values: &[f64]) -> Vec<u8> {
    let mut b = vec![0, 1, 0, 0];
    values.iter().for_each(|v| b.extend_from_slice(&v.to_le_bytes()));
    b
}

/// A small recording written with the `mcap` crate, unchunked, so that a
/// stream meets each channel where it is first used: three messages of
/// /other, then three of /reading, whose definition has the float64 fields
/// `fields` (message `i`'s field `f` holds `10 i + f`).
fn recording_with_reading(fields: &[&str]) -> Vec<u8> {
    let mut w = unchunked_writer();
    let other_schema = w.add_schema("test_msgs/msg/Other", "ros2msg", b"float64 x").unwrap();
    let other = w.add_channel(other_schema, "/other", "cdr", &Default::default()).unwrap();
    for i in 0..3u32 {
        w.write_to_known_channel(&message_header(other, i), &cdr_f64s(&[i as f64])).unwrap();
    }
    let definition: String = fields.iter().map(|f| format!("float64 {f}\n")).collect();
    let reading_schema = w.add_schema("test_msgs/msg/Reading", "ros2msg", definition.as_bytes()).unwrap();
    let reading = w.add_channel(reading_schema, "/reading", "cdr", &Default::default()).unwrap();
    for i in 0..3u32 {
        let values: Vec<f64> = (0..fields.len()).map(|f| (10 * i as usize + f) as f64).collect();
        w.write_to_known_channel(&message_header(reading, 3 + i), &cdr_f64s(&values)).unwrap();
    }
    w.finish().unwrap();
    w.into_inner().into_inner()
}

/// A recording streamed in (STDIN, HTTP: no summary up front) whose channel
/// has a newer definition with more fields than the table an earlier
/// recording made, met after another channel's rows: the table gains the
/// columns between the write's batches; the earlier rows read NULL there.
#[tokio::test]
async fn a_stream_widens_a_table_for_a_newer_definition_met_after_other_rows() {
    let server = common::start();
    let client = server.connect("postgres").await;
    let copy = |recording: &str| format!("COPY widened FROM STDIN WITH (FORMAT mcap, RECORDING '{recording}')");
    copy_stdin(&client, &copy("first"), &recording_with_reading(&["a"]), 1 << 20).await.unwrap();
    copy_stdin(&client, &copy("second"), &recording_with_reading(&["a", "b"]), 1 << 20)
        .await
        .unwrap_or_else(|e| panic!("the newer definition: {e}"));
    let rows: Vec<(String, f64, Option<f64>)> = client
        .query("SELECT recording, a, b FROM widened.reading ORDER BY recording, sequence", &[])
        .await
        .unwrap()
        .iter()
        .map(|r| (r.get(0), r.get(1), r.get(2)))
        .collect();
    let want: Vec<(String, f64, Option<f64>)> = [("first", None), ("second", Some(()))]
        .iter()
        .flat_map(|(r, b)| (0..3).map(move |i| (r.to_string(), 10.0 * i as f64, b.map(|_| 10.0 * i as f64 + 1.0))))
        .collect();
    assert_eq!(rows, want);
    let others: i64 = client.query_one("SELECT count(*) FROM widened.other", &[]).await.unwrap().get(0);
    assert_eq!(others, 6);
    let topics: i64 = client.query_one("SELECT sum(message_count)::bigint FROM widened.topics", &[]).await.unwrap().get(0);
    assert_eq!(topics, 12);
}

/// Sends all of `bytes` but its last 16 (so the COPY stays open and
/// cannot end) on its own connection, then waits until the schema holds a
/// topic table the COPY created. Returns that connection's sink, held open.
async fn copy_cut_short(
    server: &common::Server,
    observer: &Client,
    schema: &str,
    recording: &str,
    bytes: &[u8],
) -> (Client, std::pin::Pin<Box<tokio_postgres::CopyInSink<Bytes>>>) {
    let before = base_tables(observer, schema).await;
    let client = server.connect("postgres").await;
    let sql = format!("COPY {schema} FROM STDIN WITH (FORMAT mcap, RECORDING '{recording}')");
    let mut sink = Box::pin(client.copy_in::<_, Bytes>(sql.as_str()).await.unwrap());
    for p in bytes[..bytes.len() - 16].chunks(64 << 10) {
        sink.send(Bytes::copy_from_slice(p)).await.unwrap();
    }
    sink.flush().await.unwrap();
    for _ in 0..200 {
        if base_tables(observer, schema).await.iter().any(|t| !before.contains(t) && !["recordings", "recording_topics", "frame_index"].contains(&t.as_str())) {
            return (client, sink);
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    panic!("the COPY into {schema} created no topic table");
}

/// A recording is stored whole or not at all, its tables included: a COPY
/// cut short by kill -9 leaves no table it created behind once the server
/// is back — neither a new schema with its recording catalog, nor a topic
/// table new in a schema that holds other recordings — while a table it
/// created that another COPY committed rows into meanwhile stays with them.
#[tokio::test]
async fn a_copy_cut_short_by_kill_9_leaves_no_table_it_created() {
    let dir = temp_dir("cut-short");
    let truth = generate_fleet(&dir, 2, 30, "zstd");
    let files = truth["files"].as_array().unwrap().clone();
    let (first, second) = (dir.join("robot01.mcap"), std::fs::read(dir.join("robot02.mcap")).unwrap());
    let Some((server, _)) = own_server_with_two_shards() else { return };
    let client = server.connect("postgres").await;
    // kept: a committed recording; its schema then loses the IMU table,
    // which the cut-short COPY makes again.
    client.execute(&format!("COPY kept FROM '{}' WITH (FORMAT mcap)", first.display()), &[]).await.unwrap();
    let kept_tables = base_tables(&client, "kept").await;
    client.execute("DROP TABLE kept.imu", &[]).await.unwrap();
    let stalled_kept = copy_cut_short(&server, &client, "kept", "robot02", &second).await;
    // shared: the cut-short COPY creates the schema and tables, then another
    // recording commits into them.
    let stalled_shared = copy_cut_short(&server, &client, "shared", "robot02", &second).await;
    client.execute(&format!("COPY shared FROM '{}' WITH (FORMAT mcap)", first.display()), &[]).await.unwrap();
    // fresh: the cut-short COPY creates the schema and is all it holds.
    let stalled_fresh = copy_cut_short(&server, &client, "fresh", "robot02", &second).await;
    assert!(base_tables(&client, "fresh").await.contains(&"recordings".to_string()));
    drop(client);

    let server = common::start_in(server.kill9(), 2);
    drop((stalled_kept, stalled_shared, stalled_fresh));
    let client = server.connect("postgres").await;
    let schemas: Vec<String> = client
        .query("SELECT schema_name::text FROM information_schema.schemata WHERE schema_name IN ('kept', 'shared', 'fresh') ORDER BY 1", &[])
        .await
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    assert_eq!(schemas, ["kept", "shared"], "the schema only the cut-short COPY filled is gone");
    let mut without_imu = kept_tables.clone();
    without_imu.retain(|t| t != "imu");
    assert_eq!(base_tables(&client, "kept").await, without_imu, "the IMU table the cut-short COPY made again is gone");
    assert_eq!(base_tables(&client, "shared").await, kept_tables, "every table the committed recording filled stays");
    check_recording(&client, "shared", &files[0]).await;
    let recordings: i64 = client.query_one("SELECT count(*) FROM shared.recordings", &[]).await.unwrap().get(0);
    assert_eq!(recordings, 1);
    // Both schemas take the cut-short recording afterwards.
    for schema in ["kept", "shared"] {
        copy_stdin(&client, &format!("COPY {schema} FROM STDIN WITH (FORMAT mcap, RECORDING 'robot02')"), &second, 1 << 20)
            .await
            .unwrap();
        check_recording(&client, schema, &files[1]).await;
    }
    let _ = std::fs::remove_dir_all(dir);
}

/// A COPY whose Commit record reached the disk but whose sync then failed
/// gets an error, yet the next start counts the recording committed (its
/// Commit record is there) and decodes it again from the kept file: the
/// failed COPY must undo nothing, neither the file nor the tables it made.
/// Both cases: a recording into tables an earlier one made, and the first
/// one (the COPY made the tables). After a restart every recording is back
/// whole, and the catalog names exactly the kept files.
#[tokio::test]
async fn a_copy_whose_commit_sync_fails_undoes_nothing_recovery_brings_back() {
    let dir = temp_dir("commit-sync");
    let truth = generate_fleet(&dir, 2, 12, "zstd");
    let files = truth["files"].as_array().unwrap().clone();
    let copy = |f: &Value| format!("COPY fleet FROM '{}' WITH (FORMAT mcap)", dir.join(f["file"].as_str().unwrap()).display());
    for (case, fail_at) in [("into existing tables", 2), ("making the tables", 1)] {
        let data_dir = std::env::temp_dir().join(format!("brewric-commit-sync-{fail_at}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&data_dir);
        let failpoint = format!("wal-commit-sync-fails:{fail_at}");
        let server = common::start_configured(data_dir.clone(), 2, &[], &[("BREWRIC_FAILPOINT_ERROR", &failpoint)]);
        if server.is_external() {
            return;
        }
        let client = server.connect("postgres").await;
        for (i, f) in files.iter().enumerate().take(fail_at) {
            let copied = client.execute(&copy(f), &[]).await;
            if i + 1 < fail_at {
                copied.unwrap();
                continue;
            }
            let err = copied.expect_err("the Commit's sync fails");
            let db = err.as_db_error().expect("a database error");
            assert_eq!(db.code().code(), "58030", "{case}: {}", db.message());
            assert!(db.message().contains("wal-commit-sync-fails"), "{case}: {}", db.message());
            // Its name stays taken: a second recording of that name would
            // stand beside it once the restart brings it back.
            let again = client.execute(&copy(f), &[]).await.expect_err("the name is taken");
            assert_eq!(again.code(), Some(&tokio_postgres::error::SqlState::UNIQUE_VIOLATION), "{case}: {again:?}");
            // No shard takes a write until the restart tells the outcome.
            client.batch_execute("CREATE TABLE probe (a int)").await.unwrap();
            for a in 0..4 {
                let refused = client.execute("INSERT INTO probe VALUES ($1)", &[&a]).await.expect_err("writes are refused");
                assert_eq!(refused.code().map(|c| c.code()), Some("58030"), "{case}: {refused:?}");
            }
        }
        assert_eq!(kept_recordings(&data_dir), fail_at, "{case}: the failed COPY's file stays: its Commit may be on disk");
        drop(client);
        let server = common::start_in(server.kill9(), 2);
        let client = server.connect("postgres").await;
        for f in files.iter().take(fail_at) {
            check_recording(&client, "fleet", f).await;
        }
        assert_eq!(catalog_frame_files(&data_dir), kept_names(&data_dir), "{case}");
        // Checkpointed, the rows live in segments; the files stay, named by the camera tables.
        client.execute("CHECKPOINT", &[]).await.unwrap();
        drop(client);
        let server = common::start_in(server.kill9(), 2);
        let client = server.connect("postgres").await;
        for f in files.iter().take(fail_at) {
            check_recording(&client, "fleet", f).await;
        }
        assert_eq!(kept_recordings(&data_dir), fail_at, "{case}");
        drop(client);
        drop(server);
        let _ = std::fs::remove_dir_all(&data_dir);
    }
}

/// The camera tables' frames of schema `a` equal those of schema `b` (the
/// same recordings ingested another way), row for row; returns the rows.
async fn same_frames(client: &Client, a: &str, b: &str) -> i64 {
    let mut rows = 0;
    for table in ["camera_image_raw", "camera_image_compressed"] {
        let row = client
            .query_one(
                &format!(
                    "SELECT count(*), count(*) FILTER (WHERE x.data = y.data), sum(length(x.data))::bigint \
                     FROM {a}.{table} x JOIN {b}.{table} y ON x.recording = y.recording AND x.sequence = y.sequence"
                ),
                &[],
            )
            .await
            .unwrap_or_else(|e| panic!("{table}: {}", common::describe_error(&e)));
        let (n, equal) = (row.get::<_, i64>(0), row.get::<_, i64>(1));
        assert!(n > 0, "{a}.{table} has frames");
        assert_eq!(equal, n, "{a}.{table}: every frame equals {b}'s");
        rows += n;
    }
    rows
}

#[tokio::test]
async fn camera_frames_are_references_into_the_kept_recording_read_back_on_demand() {
    let dir = temp_dir("frames");
    let truth = generate_fleet(&dir, 2, 12, "zstd");
    let plain_dir = temp_dir("frames-plain");
    let plain_truth = generate_fleet(&plain_dir, 1, 6, "none");
    let Some((server, data_dir)) = own_server_with_two_shards() else { return };
    let kept = || kept_recordings(&data_dir);
    let client = server.connect("postgres").await;
    // The same recordings by reference (server files) and inline (STDIN).
    let mut files: Vec<(PathBuf, Value)> = Vec::new();
    for file in truth["files"].as_array().unwrap() {
        files.push((dir.join(file["file"].as_str().unwrap()), file.clone()));
    }
    files.push((plain_dir.join("robot01.mcap"), plain_truth["files"][0].clone()));
    for (i, (path, _)) in files.iter().enumerate() {
        let name = format!("rec{i}");
        client
            .execute(&format!("COPY fleet FROM '{}' WITH (FORMAT mcap, RECORDING '{name}')", path.display()), &[])
            .await
            .unwrap();
        let bytes = std::fs::read(path).unwrap();
        copy_stdin(&client, &format!("COPY inline FROM STDIN WITH (FORMAT mcap, RECORDING '{name}')"), &bytes, 1 << 16)
            .await
            .unwrap();
    }
    let frames = same_frames(&client, "fleet", "inline").await;
    // Every frame above the threshold is a reference, listed in the frame
    // index with its size, image fields and place in the kept file; the
    // inline copy has none.
    let index = client
        .query_one(
            "SELECT count(*), count(*) FILTER (WHERE offset_in_chunk IS NULL), sum(bytes)::bigint, \
             count(*) FILTER (WHERE topic = '/camera/image_raw' AND width > 0 AND height > 0 AND encoding IS NOT NULL) \
             FROM fleet.frame_index",
            &[],
        )
        .await
        .unwrap();
    let large: i64 = client
        .query_one(
            "SELECT (SELECT count(*) FROM fleet.camera_image_raw WHERE length(data) > 4096) \
             + (SELECT count(*) FROM fleet.camera_image_compressed WHERE length(data) > 4096)",
            &[],
        )
        .await
        .unwrap()
        .get(0);
    assert!(large > 0 && large < frames, "the generated JPEG-like frames are small, the raw images large");
    assert_eq!(index.get::<_, i64>(0), large, "one index row per frame above the threshold");
    let verbatim: i64 = client
        .query_one("SELECT count(*) FROM fleet.frame_index WHERE recording = 'rec2'", &[])
        .await
        .unwrap()
        .get(0);
    assert_eq!(index.get::<_, i64>(1), verbatim, "frames of an uncompressed file are read where they lie");
    let sizes: i64 = client
        .query_one(
            "SELECT (SELECT sum(length(data)) FROM fleet.camera_image_raw WHERE length(data) > 4096) \
             + (SELECT coalesce(sum(length(data)), 0) FROM fleet.camera_image_compressed WHERE length(data) > 4096)",
            &[],
        )
        .await
        .unwrap()
        .get::<_, Option<i64>>(0)
        .unwrap_or(0);
    assert_eq!(index.get::<_, i64>(2), sizes);
    assert!(index.get::<_, i64>(3) > 0);
    let inline_index: i64 = client.query_one("SELECT count(*) FROM inline.frame_index", &[]).await.unwrap().get(0);
    assert_eq!(inline_index, 0);
    // A filter over the frames, and one over other columns with the frames
    // projected, read the same bytes.
    let filtered = client
        .query_one(
            "SELECT count(*), sum(length(data))::bigint FROM fleet.camera_image_raw WHERE length(data) > 100",
            &[],
        )
        .await
        .unwrap();
    let latest = client
        .query(
            "SELECT recording, sequence, data FROM fleet.camera_image_raw WHERE sequence > 3 ORDER BY log_time DESC LIMIT 5",
            &[],
        )
        .await
        .unwrap();
    assert_eq!(latest.len(), 5);
    for row in &latest {
        let (recording, sequence): (String, i64) = (row.get(0), row.get(1));
        let inline: Vec<u8> = client
            .query_one("SELECT data FROM inline.camera_image_raw WHERE recording = $1 AND sequence = $2", &[&recording, &sequence])
            .await
            .unwrap()
            .get(0);
        assert_eq!(row.get::<_, Vec<u8>>(2), inline, "{recording} #{sequence}");
    }
    // SQL writes into a frame column store their bytes as written.
    client
        .execute(
            "INSERT INTO fleet.camera_image_raw (recording, log_time, sequence, data) VALUES ('manual', now(), 1, '\\x0001ff'), ('manual', now(), 2, NULL)",
            &[],
        )
        .await
        .unwrap();
    let manual = client
        .query("SELECT data FROM fleet.camera_image_raw WHERE recording = 'manual' ORDER BY sequence", &[])
        .await
        .unwrap();
    assert_eq!(manual[0].get::<_, Option<Vec<u8>>>(0), Some(vec![0, 1, 0xff]));
    assert_eq!(manual[1].get::<_, Option<Vec<u8>>>(0), None);
    // The user deletes their files; the server dies; then the rows go to
    // segment files; each time every frame reads back the same.
    for (path, _) in &files {
        std::fs::remove_file(path).unwrap();
    }
    drop(client);
    let server = common::start_in(server.kill9(), 2);
    let client = server.connect("postgres").await;
    assert_eq!(same_frames(&client, "fleet", "inline").await, frames);
    client.execute("CHECKPOINT", &[]).await.unwrap();
    drop(client);
    let server = common::start_in(server.kill9(), 2);
    let client = server.connect("postgres").await;
    assert_eq!(same_frames(&client, "fleet", "inline").await, frames);
    assert_eq!(kept(), 3, "the kept recordings stay while tables reference them");
    let again: i64 = client
        .query_one(
            "SELECT count(*) FROM fleet.camera_image_raw WHERE length(data) > 100",
            &[],
        )
        .await
        .unwrap()
        .get(0);
    assert_eq!(again, filtered.get::<_, i64>(0));
    // A DELETE rewrites the table: the frames left read back the same.
    client.execute("DELETE FROM fleet.camera_image_raw WHERE recording = 'rec0' OR recording = 'manual'", &[]).await.unwrap();
    let left = same_frames(&client, "fleet", "inline").await;
    assert!(left < frames && left > 0);
    // The schema dropped in a block that rolls back, with a checkpoint in
    // between: the kept recordings its frames point into stay, and read back.
    let block = server.connect("postgres").await;
    block.batch_execute("BEGIN; DROP SCHEMA fleet CASCADE").await.unwrap();
    client.execute("CHECKPOINT", &[]).await.unwrap();
    assert_eq!(kept(), 3, "kept recordings of a schema a block is dropping stay");
    block.batch_execute("ROLLBACK").await.unwrap();
    assert_eq!(same_frames(&client, "fleet", "inline").await, left);
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_dir_all(&plain_dir);
}
