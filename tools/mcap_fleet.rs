//! Seeded robot-fleet MCAP generator: writes one rosbag2-style ROS 2 recording per robot, for
//! Brewric's MCAP ingest tests and benchmarks (issue 8).
//!
//! ```text
//! cargo run --release --example mcap_fleet -- --out DIR [--robots 24] [--seed 42] [--seconds 375]
//!     [--compression zstd|lz4|none] [--chunk-size 786432]
//! ```
//!
//! Writes `DIR/robot01.mcap` … `DIR/robotNN.mcap` and `DIR/fleet_truth.json`, then prints the
//! totals. The default run (24 robots × 375 s) is 469 MB and 3.30 M messages (the issue asks for
//! about 465 MB and 3.3 M), and takes well under a minute on two cores.
//!
//! # The recordings
//! Each file looks like what `ros2 bag record -s mcap` writes with a zstd preset: profile `ros2`;
//! one Schema per message type, encoding `ros2msg`, name `pkg/msg/Type`, text built exactly as
//! rosbag2's `LocalMessageDefinitionSource` builds it (the type's .msg text, then for every
//! dependency, once, depth-first in sorted order: `\n` + 80 `=` + `\nMSG: pkg/Type\n` + its text);
//! one Channel per topic, message encoding `cdr`, metadata `offered_qos_profiles` (Jazzy-style
//! YAML); messages in zstd (default) chunks with message indexes, a summary with statistics and
//! chunk indexes, and a `rosbag2` Metadata record (`serialized_metadata`, `ROS_DISTRO`).
//!
//! Topics (rates are nominal): `/joint_states` sensor_msgs/JointState 100 Hz, `/imu`
//! sensor_msgs/Imu 200 Hz, `/odom` nav_msgs/Odometry 50 Hz, `/scan` sensor_msgs/LaserScan 10 Hz,
//! `/battery_state` sensor_msgs/BatteryState 1 Hz, a camera — `/camera/image_raw`
//! sensor_msgs/Image 64×48 rgb8 at 2 Hz on most robots, `/camera/image/compressed`
//! sensor_msgs/CompressedImage (JPEG-like bytes) at 4 Hz on robots 2, 8, 14, 20, … —, `/rosout`
//! rcl_interfaces/Log (irregular, about 2 Hz), `/diagnostics` diagnostic_msgs/DiagnosticArray 1 Hz.
//!
//! Time: robot N's recording starts at 2026-01-05T08:00:00Z + (N−1)·3 s + a seeded offset below
//! 1 s. A message's header stamp is its nominal acquisition time; log_time = stamp + a seeded
//! receive latency (always smaller than the topic's period, so log_time rises strictly per topic);
//! publish_time = log_time; sequence counts from 1 per channel. Messages are written in log_time
//! order across topics (ties: topic order above), so chunks do not overlap in time.
//!
//! CDR: this file has its own little-endian plain-CDR encoder (`Cdr` below), independent of any
//! decoder in src/. Empty sequences occur only where no alignment question arises (JointState
//! effort last; float32 sequences whose count is already 4-aligned), so every decoder agrees.
//!
//! Determinism: the same arguments give byte-identical files (with the same zstd/lz4 library
//! versions, which decide the compressed bytes). Each (robot, topic) has its own
//! splitmix64 stream; the data use only +, −, ×, ÷, sqrt and a hand-written sine (no libm
//! transcendental, whose last bits differ between platforms); zstd compresses single-threaded.
//!
//! # fleet_truth.json
//! Everything a correctness test needs to compare with SQL over the ingested fleet. Times are
//! integer nanoseconds since the Unix epoch. "Sum" means the values widened to f64 and added in
//! message order (SQL may add in another order: compare with a relative tolerance ~1e-9);
//! values written as float32 are summed as the f64 of the exact f32 written.
//! ```text
//! { "generator": "mcap_fleet", "seed", "robots", "seconds", "compression", "chunk_size",
//!   "start_time_ns": the fleet epoch (robot01 starts within 1 s after it),
//!   "sequence_start": 1,
//!   "files": [ {                      // one per robot, in robot order
//!     "recording": "robot01", "file": "robot01.mcap",
//!     "file_bytes": size of the .mcap file,
//!     "message_count", "start_time_ns", "end_time_ns": over all topics (min/max log_time),
//!     "topics": { "<topic>": {
//!        "message_type": schema name, e.g. "sensor_msgs/msg/Imu",
//!        "message_count", "first_log_time_ns", "last_log_time_ns",
//!        "payload_bytes": Σ Message.data lengths (CDR, 4-byte encapsulation header included),
//!        "frame_id": header.frame_id, fixed per robot and topic ("" for /rosout: no Header),
//!        …topic aggregates below } } } ],
//!   "totals": { "files", "file_bytes", "message_count", "payload_bytes",
//!               "messages_per_topic": { "<topic>": count over all files } } }
//! ```
//! Topic aggregates:
//! * `/joint_states`: `joint_count` (names per message, 6 or 7, fixed per robot),
//!   `sum_position_0` (Σ position[0]), `sum_velocity_0` (Σ velocity[0]),
//!   `empty_effort_count` (messages whose effort is empty), `max_abs_effort` (max |effort[i]|
//!   over all elements of all non-empty efforts; spikes of ×4–×6 happen in ~0.2 % of messages).
//! * `/imu`: `sum_linear_acceleration_z`, `sum_angular_velocity_z`.
//! * `/odom`: `child_frame_id`, `sum_pose_position_x`, `sum_twist_linear_x`,
//!   `last_pose_position_x`.
//! * `/scan`: `beam_count` (ranges per message, fixed per robot), `ranges_total`,
//!   `pos_inf_count`, `neg_inf_count`, `nan_count` (over all ranges elements),
//!   `sum_finite_ranges`, `min_finite_range`, `empty_intensities_count` (messages).
//! * `/battery_state`: `sum_percentage`, `min_percentage`, `last_percentage`,
//!   `below_0_2_count` (messages with percentage < 0.2), `nan_temperature_count`,
//!   `cell_count` (cell_voltage length, fixed per robot), `cell_voltage_total` (elements),
//!   `empty_cell_temperature_count` (messages; always all of them).
//! * `/camera/image_raw`: `width`, `height`, `encoding`, `data_bytes` (Σ data length).
//! * `/camera/image/compressed`: `format`, `data_bytes` (Σ data length).
//! * `/rosout`: `level_counts` ({"10": n, "20": n, "30": n, "40": n, "50": n}, all five keys),
//!   `error_count_by_node` ({logger name: messages with level 40}, only names with ≥ 1).
//! * `/diagnostics`: `status_count` (Σ len(status)), `key_value_count` (Σ over statuses of
//!   len(values)), `status_level_counts` ({"0".."3": statuses with that level}).

use std::collections::{BTreeMap, BTreeSet};
use std::f64::consts::{FRAC_PI_2, PI, TAU};
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use mcap::records::MessageHeader;
use serde_json::{json, Map, Value};

const USAGE: &str = "usage: mcap_fleet --out DIR [--robots 24] [--seed 42] [--seconds 375] \
                     [--compression zstd|lz4|none] [--chunk-size 786432]";

/// 2026-01-05T08:00:00Z in nanoseconds since the Unix epoch.
const FLEET_EPOCH_NS: u64 = 1_767_600_000 * NS_PER_S;
const NS_PER_S: u64 = 1_000_000_000;
const NS_PER_MS: u64 = 1_000_000;
/// Each robot starts this much after the previous one (plus a seeded offset below 1 s).
const ROBOT_STAGGER_NS: u64 = 3 * NS_PER_S;
/// First Message.sequence of every channel.
const SEQUENCE_START: u32 = 1;
/// The C++ McapWriter's default chunk size, which rosbag2 uses unless a preset says otherwise.
const DEFAULT_CHUNK_SIZE: u64 = 768 * 1024;
/// With the default 24 robots this gives 3.30 M messages and 469 MB.
const DEFAULT_SECONDS: u64 = 375;
const ROS_DISTRO: &str = "jazzy";

// ---------------------------------------------------------------------------------------------
// Command line

struct Options {
    out_dir: PathBuf,
    robots: usize,
    seed: u64,
    seconds: u64,
    compression_name: String,
    chunk_size: u64,
}

impl Options {
    fn compression(&self) -> Option<mcap::Compression> {
        match self.compression_name.as_str() {
            "zstd" => Some(mcap::Compression::Zstd),
            "lz4" => Some(mcap::Compression::Lz4),
            _ => None,
        }
    }
}

fn usage_error(message: &str) -> ! {
    eprintln!("mcap_fleet: {message}\n{USAGE}");
    std::process::exit(2)
}

fn parse_number<T: std::str::FromStr>(flag: &str, text: &str) -> T {
    text.parse()
        .unwrap_or_else(|_| usage_error(&format!("{flag} wants a whole number, not {text:?}")))
}

fn parse_options() -> Options {
    let mut out_dir = None;
    let mut options = Options {
        out_dir: PathBuf::new(),
        robots: 24,
        seed: 42,
        seconds: DEFAULT_SECONDS,
        compression_name: "zstd".to_string(),
        chunk_size: DEFAULT_CHUNK_SIZE,
    };
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        if flag == "-h" || flag == "--help" {
            println!("{USAGE}");
            std::process::exit(0);
        }
        let mut value = || {
            args.next()
                .unwrap_or_else(|| usage_error(&format!("{flag} needs a value")))
        };
        match flag.as_str() {
            "--out" => out_dir = Some(PathBuf::from(value())),
            "--robots" => options.robots = parse_number(&flag, &value()),
            "--seed" => options.seed = parse_number(&flag, &value()),
            "--seconds" => options.seconds = parse_number(&flag, &value()),
            "--chunk-size" => options.chunk_size = parse_number(&flag, &value()),
            "--compression" => {
                options.compression_name = value();
                if !["zstd", "lz4", "none"].contains(&options.compression_name.as_str()) {
                    usage_error("--compression is zstd, lz4 or none");
                }
            }
            _ => usage_error(&format!("unknown argument {flag:?}")),
        }
    }
    options.out_dir = out_dir.unwrap_or_else(|| usage_error("--out DIR is required"));
    if options.robots == 0 || options.seconds == 0 || options.chunk_size == 0 {
        usage_error("--robots, --seconds and --chunk-size must be at least 1");
    }
    options
}

// ---------------------------------------------------------------------------------------------
// Randomness and maths that give the same bits everywhere

/// splitmix64 (Steele, Lea & Flood 2014): tiny, fast and plenty for synthetic sensor data.
struct Rng {
    state: u64,
}

impl Rng {
    /// A stream for one purpose, e.g. `Rng::derive(seed, &[robot, topic])`.
    fn derive(seed: u64, purpose: &[u64]) -> Rng {
        let mut rng = Rng { state: seed };
        for &part in purpose {
            rng.state = rng.next_u64() ^ part.wrapping_mul(0xD6E8_FEB8_6659_FD93);
        }
        rng
    }

    fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1).
    fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    fn range(&mut self, low: f64, high: f64) -> f64 {
        low + (high - low) * self.unit()
    }

    /// Uniform in [0, n); the modulo bias is far below anything a test could see.
    fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }

    fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.below(items.len() as u64) as usize]
    }

    fn chance(&mut self, probability: f64) -> bool {
        self.unit() < probability
    }

    /// Zero-mean noise with standard deviation `sigma` (Irwin–Hall of four uniforms: bell-shaped
    /// without ln/cos, whose results vary by platform).
    fn noise(&mut self, sigma: f64) -> f64 {
        let sum = self.unit() + self.unit() + self.unit() + self.unit();
        (sum - 2.0) * sigma * 3f64.sqrt()
    }
}

/// sin(x) from +, − and × only (Taylor series to x¹³ after reducing to [−π/2, π/2], error
/// < 1e-9), so that generated values do not depend on the platform's libm.
fn sine(x: f64) -> f64 {
    let mut r = x - (x / TAU).round() * TAU;
    if r > FRAC_PI_2 {
        r = PI - r;
    } else if r < -FRAC_PI_2 {
        r = -PI - r;
    }
    let r2 = r * r;
    let mut term = r;
    let mut sum = r;
    for k in 1..7 {
        let k = k as f64;
        term *= -r2 / ((2.0 * k) * (2.0 * k + 1.0));
        sum += term;
    }
    sum
}

fn cosine(x: f64) -> f64 {
    sine(x + FRAC_PI_2)
}

/// What a digital sensor reports: `value` in whole steps of its resolution `lsb`, as a float32
/// (widened to the f64 a float64 field carries). Real readings are quantized like this, which is
/// also why real recordings compress as they do.
fn reading(value: f64, lsb: f64) -> f64 {
    ((value / lsb).round() * lsb) as f32 as f64
}

/// 17-bit absolute joint encoder.
const JOINT_ENCODER_TICK: f64 = TAU / 131_072.0;
const JOINT_VELOCITY_LSB: f64 = 1e-3;
const JOINT_EFFORT_LSB: f64 = 0.01;
/// 16-bit IMU: gyro ±500 °/s, accelerometer ±8 g, fused quaternion in units of 2⁻¹⁴.
const GYRO_LSB: f64 = 500.0 / 32_768.0 * PI / 180.0;
const ACCEL_LSB: f64 = 8.0 * 9.806_65 / 32_768.0;
const QUATERNION_LSB: f64 = 1.0 / 16_384.0;
/// Wheel odometry speed resolution (m/s and rad/s).
const WHEEL_SPEED_LSB: f64 = 1e-3;

// ---------------------------------------------------------------------------------------------
// CDR encoder (little-endian plain CDR / XCDR1, as ROS 2's rmw implementations write it)

/// One message's serialized bytes. Alignment is relative to the first byte after the 4-byte
/// encapsulation header; padding is zero.
struct Cdr {
    bytes: Vec<u8>,
}

const CDR_ENCAPSULATION_LE: [u8; 4] = [0x00, 0x01, 0x00, 0x00];

impl Cdr {
    fn new() -> Cdr {
        Cdr {
            bytes: Vec::with_capacity(16 * 1024),
        }
    }

    /// Starts a new message in the same buffer (no allocation per message).
    fn start(&mut self) {
        self.bytes.clear();
        self.bytes.extend_from_slice(&CDR_ENCAPSULATION_LE);
    }

    fn align(&mut self, size: usize) {
        let body_len = self.bytes.len() - CDR_ENCAPSULATION_LE.len();
        let padding = (size - body_len % size) % size;
        self.bytes.resize(self.bytes.len() + padding, 0);
    }

    /// A primitive of N bytes, given as its little-endian bytes, aligned to N.
    fn primitive<const N: usize>(&mut self, le_bytes: [u8; N]) {
        self.align(N);
        self.bytes.extend_from_slice(&le_bytes);
    }

    fn u8(&mut self, value: u8) {
        self.bytes.push(value);
    }

    fn bool(&mut self, value: bool) {
        self.bytes.push(u8::from(value));
    }

    fn u32(&mut self, value: u32) {
        self.primitive(value.to_le_bytes());
    }

    fn i32(&mut self, value: i32) {
        self.primitive(value.to_le_bytes());
    }

    fn f32(&mut self, value: f32) {
        self.primitive(value.to_le_bytes());
    }

    fn f64(&mut self, value: f64) {
        self.primitive(value.to_le_bytes());
    }

    /// A sequence's element count.
    fn count(&mut self, len: usize) {
        self.u32(u32::try_from(len).expect("sequence longer than u32::MAX"));
    }

    /// u32 length including the terminating NUL, the bytes, the NUL.
    fn string(&mut self, text: &str) {
        self.count(text.len() + 1);
        self.bytes.extend_from_slice(text.as_bytes());
        self.bytes.push(0);
    }

    /// `float64[N]`: the elements, no count. Like Fast-CDR, an empty run adds no padding.
    fn f64_array(&mut self, values: &[f64]) {
        for &value in values {
            self.f64(value);
        }
    }

    /// `float64[]`: count, then the elements.
    fn f64_sequence(&mut self, values: &[f64]) {
        self.count(values.len());
        self.f64_array(values);
    }

    /// `float32[]`: count, then the elements.
    fn f32_sequence(&mut self, values: &[f32]) {
        self.count(values.len());
        for &value in values {
            self.f32(value);
        }
    }

    /// `uint8[]`: count, then the raw bytes.
    fn byte_sequence(&mut self, data: &[u8]) {
        self.count(data.len());
        self.bytes.extend_from_slice(data);
    }

    fn string_sequence(&mut self, texts: &[String]) {
        self.count(texts.len());
        for text in texts {
            self.string(text);
        }
    }

    /// builtin_interfaces/Time: int32 sec, uint32 nanosec.
    fn time(&mut self, ns: u64) {
        let sec = i32::try_from(ns / NS_PER_S).expect("timestamp beyond 2038");
        self.i32(sec);
        self.u32((ns % NS_PER_S) as u32);
    }

    /// std_msgs/Header: stamp, frame_id.
    fn header(&mut self, stamp_ns: u64, frame_id: &str) {
        self.time(stamp_ns);
        self.string(frame_id);
    }

    /// geometry_msgs/Vector3 or Point: float64 x, y, z.
    fn xyz(&mut self, x: f64, y: f64, z: f64) {
        self.f64_array(&[x, y, z]);
    }

    /// geometry_msgs/Quaternion of a rotation by `yaw` about z.
    fn yaw_quaternion(&mut self, yaw: f64) {
        self.f64_array(&[0.0, 0.0, sine(yaw / 2.0), cosine(yaw / 2.0)]);
    }
}

/// A row-major 3×3 or 6×6 covariance with `diagonal` on the diagonal and zeros elsewhere.
fn diagonal_covariance<const N: usize>(diagonal: &[f64]) -> [f64; N] {
    let side = diagonal.len();
    let mut matrix = [0.0; N];
    for (i, &value) in diagonal.iter().enumerate() {
        matrix[i * side + i] = value;
    }
    matrix
}

// ---------------------------------------------------------------------------------------------
// Message definitions and ros2msg schema texts

/// The ROS 2 type names (schema names) of the generated topics.
const JOINT_STATE: &str = "sensor_msgs/msg/JointState";
const IMU: &str = "sensor_msgs/msg/Imu";
const ODOMETRY: &str = "nav_msgs/msg/Odometry";
const LASER_SCAN: &str = "sensor_msgs/msg/LaserScan";
const BATTERY_STATE: &str = "sensor_msgs/msg/BatteryState";
const IMAGE: &str = "sensor_msgs/msg/Image";
const COMPRESSED_IMAGE: &str = "sensor_msgs/msg/CompressedImage";
const LOG: &str = "rcl_interfaces/msg/Log";
const DIAGNOSTIC_ARRAY: &str = "diagnostic_msgs/msg/DiagnosticArray";

/// Field types rosbag2 does not treat as dependencies (its PRIMITIVE_TYPES).
const PRIMITIVE_TYPES: &[&str] = &[
    "bool", "byte", "char", "float32", "float64", "int8", "uint8", "int16", "uint16", "int32",
    "uint32", "int64", "uint64", "string",
];

/// The .msg text of `pkg/Type`; every type the generator names is in MSG_DEFINITIONS.
fn msg_text(type_name: &str) -> &'static str {
    MSG_DEFINITIONS
        .iter()
        .find(|(name, _)| *name == type_name)
        .map(|(_, text)| *text)
        .unwrap_or_else(|| panic!("no .msg text for {type_name}"))
}

/// The types a .msg text refers to, as rosbag2 finds them: per line, the first token (letters,
/// digits, `_`, `/`), optionally followed by `[…]`, then whitespace; primitives skipped;
/// unqualified names get the referring package. Sorted, because rosbag2 keeps a std::set.
fn msg_dependencies(text: &str, package: &str) -> BTreeSet<String> {
    let mut dependencies = BTreeSet::new();
    for line in text.split('\n') {
        let line = line.trim_start();
        let token_len = line
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '/'))
            .unwrap_or(line.len());
        let (token, mut rest) = line.split_at(token_len);
        if token.is_empty() || PRIMITIVE_TYPES.contains(&token) {
            continue;
        }
        if let Some(bracketed) = rest.strip_prefix('[') {
            match bracketed.find(']') {
                Some(close) => rest = &bracketed[close + 1..],
                None => continue,
            }
        }
        // rosbag2's regex wants whitespace after the type; "\n" counts, so a lone type on a
        // line qualifies too (the .msg files here have none).
        if !rest.starts_with(|c: char| c.is_ascii_whitespace()) && !rest.is_empty() {
            continue;
        }
        if token.contains('/') {
            dependencies.insert(token.to_string());
        } else {
            dependencies.insert(format!("{package}/{token}"));
        }
    }
    dependencies
}

/// The `ros2msg` schema text rosbag2 writes for `schema_name` (`pkg/msg/Type`).
fn ros2msg_schema_text(schema_name: &str) -> String {
    fn append(type_name: &str, seen: &mut BTreeSet<String>, out: &mut String) {
        let text = msg_text(type_name);
        out.push_str(text);
        let package = type_name.split('/').next().unwrap_or_default();
        for dependency in msg_dependencies(text, package) {
            if seen.insert(dependency.clone()) {
                out.push('\n');
                out.push_str(&"=".repeat(80));
                out.push_str("\nMSG: ");
                out.push_str(&dependency);
                out.push('\n');
                append(&dependency, seen, out);
            }
        }
    }
    let short_name = schema_name.replacen("/msg/", "/", 1);
    let mut out = String::new();
    append(&short_name, &mut BTreeSet::new(), &mut out);
    out
}

/// Channel metadata `offered_qos_profiles` as rosbag2 (Jazzy) writes it.
fn offered_qos_profiles(reliability: &str, durability: &str) -> String {
    const INFINITE: &str = "    sec: 9223372036\n    nsec: 854775807\n";
    format!(
        "- history: unknown\n  depth: 0\n  reliability: {reliability}\n  \
         durability: {durability}\n  deadline:\n{INFINITE}  lifespan:\n{INFINITE}  \
         liveliness: automatic\n  \
         liveliness_lease_duration:\n{INFINITE}  avoid_ros_namespace_conventions: false"
    )
}

// ---------------------------------------------------------------------------------------------
// Topics

#[derive(Clone, Copy, PartialEq, Eq)]
enum TopicKind {
    JointStates,
    Imu,
    Odometry,
    LaserScan,
    BatteryState,
    Image,
    CompressedImage,
    Log,
    Diagnostics,
}

struct TopicSpec {
    kind: TopicKind,
    topic: &'static str,
    schema_name: &'static str,
    /// Nominal period; /rosout draws its intervals instead (see `next_interval_ns`).
    period_ns: u64,
    /// log_time − stamp is uniform in this range; the upper end stays below the period.
    latency_ns: (u64, u64),
    reliability: &'static str,
    durability: &'static str,
    /// Header.frame_id choices, of odd and even lengths; each robot picks one.
    frame_ids: &'static [&'static str],
}

const RELIABLE: &str = "reliable";
const BEST_EFFORT: &str = "best_effort";

impl TopicSpec {
    const fn new(
        kind: TopicKind,
        topic: &'static str,
        schema_name: &'static str,
        period_ns: u64,
        latency_us: (u64, u64),
        reliability: &'static str,
        frame_ids: &'static [&'static str],
    ) -> TopicSpec {
        TopicSpec {
            kind,
            topic,
            schema_name,
            period_ns,
            latency_ns: (latency_us.0 * 1000, latency_us.1 * 1000),
            reliability,
            // /rosout keeps its last messages for late joiners, as rcl configures it.
            durability: if matches!(kind, TopicKind::Log) {
                "transient_local"
            } else {
                "volatile"
            },
            frame_ids,
        }
    }
}

/// The topics: kind, name, type, nominal period, receive latency range (log_time − stamp, µs),
/// reliability (rosbag2's offered QoS), Header.frame_id choices (each robot picks one).
#[rustfmt::skip]
const TOPICS: &[TopicSpec] = &[
    TopicSpec::new(TopicKind::JointStates, "/joint_states", JOINT_STATE, 10 * NS_PER_MS,
                   (200, 1_500), RELIABLE, &["", "base_link", "arm_base"]),
    TopicSpec::new(TopicKind::Imu, "/imu", IMU, 5 * NS_PER_MS,
                   (100, 1_200), BEST_EFFORT, &["imu_link", "imu", "base_imu_link", "imu_link_0"]),
    TopicSpec::new(TopicKind::Odometry, "/odom", ODOMETRY, 20 * NS_PER_MS,
                   (300, 2_000), RELIABLE, &["odom", "odom_frame", "odom_combined"]),
    TopicSpec::new(TopicKind::LaserScan, "/scan", LASER_SCAN, 100 * NS_PER_MS,
                   (1_000, 8_000), BEST_EFFORT, &["laser", "laser_frame", "base_scan", "velodyne"]),
    TopicSpec::new(TopicKind::BatteryState, "/battery_state", BATTERY_STATE, NS_PER_S,
                   (200, 3_000), RELIABLE, &["battery", "base_link", "bms_link"]),
    TopicSpec::new(TopicKind::Image, "/camera/image_raw", IMAGE, NS_PER_S / 2,
                   (5_000, 30_000), BEST_EFFORT, &["camera_optical_frame", "camera_link", "cam0"]),
    TopicSpec::new(TopicKind::CompressedImage, "/camera/image/compressed", COMPRESSED_IMAGE,
                   NS_PER_S / 4, (5_000, 30_000), BEST_EFFORT,
                   &["camera_color_optical_frame", "camera_link", "cam0"]),
    TopicSpec::new(TopicKind::Log, "/rosout", LOG, 500 * NS_PER_MS,
                   (100, 2_000), RELIABLE, &[""]),
    TopicSpec::new(TopicKind::Diagnostics, "/diagnostics", DIAGNOSTIC_ARRAY, NS_PER_S,
                   (200, 4_000), RELIABLE, &["", "base_link"]),
];

/// Robots 2, 8, 14, 20, … publish CompressedImage instead of Image, so one camera topic name
/// and type differ across the fleet (and the 2-robot check fleet has both).
fn has_compressed_camera(robot: usize) -> bool {
    robot % 6 == 2
}

/// The topics robot `robot` (1-based) records, in channel order.
fn robot_topics(robot: usize) -> impl Iterator<Item = &'static TopicSpec> {
    let skipped = if has_compressed_camera(robot) {
        TopicKind::Image
    } else {
        TopicKind::CompressedImage
    };
    TOPICS.iter().filter(move |spec| spec.kind != skipped)
}

/// How the robot drives, as closed forms of the time since its start, shared by /imu, /odom
/// and /scan so their values agree with each other.
#[derive(Clone, Copy)]
struct Motion {
    cruise_speed: f64,
    speed_swing: f64,
    speed_rate: f64,
    speed_phase: f64,
    turn_amplitude: f64,
    turn_rate: f64,
    turn_phase: f64,
}

impl Motion {
    fn new(rng: &mut Rng) -> Motion {
        Motion {
            cruise_speed: rng.range(0.3, 1.2),
            speed_swing: rng.range(0.05, 0.3),
            speed_rate: rng.range(0.05, 0.3),
            speed_phase: rng.range(0.0, TAU),
            turn_amplitude: rng.range(0.1, 0.6),
            turn_rate: rng.range(0.05, 0.4),
            turn_phase: rng.range(0.0, TAU),
        }
    }

    fn speed(&self, t: f64) -> f64 {
        self.cruise_speed + self.speed_swing * sine(self.speed_rate * t + self.speed_phase)
    }

    fn acceleration(&self, t: f64) -> f64 {
        self.speed_swing * self.speed_rate * cosine(self.speed_rate * t + self.speed_phase)
    }

    fn yaw_rate(&self, t: f64) -> f64 {
        self.turn_amplitude * sine(self.turn_rate * t + self.turn_phase)
    }

    /// ∫ yaw_rate, zero at t = 0.
    fn yaw(&self, t: f64) -> f64 {
        let scale = self.turn_amplitude / self.turn_rate;
        scale * (cosine(self.turn_phase) - cosine(self.turn_rate * t + self.turn_phase))
    }
}

/// Copies the named fields of `$source` into the truth map under their own names, so that a
/// truth key always says which counter it comes from.
macro_rules! insert_fields {
    ($fields:expr, $source:expr => $($name:ident),+) => {
        $($fields.insert(stringify!($name).to_string(), json!($source.$name));)+
    };
}

// ---------------------------------------------------------------------------------------------
// Per-topic publishers: each fills one message and keeps the aggregates it reports in the truth

struct JointStatesPublisher {
    names: Vec<String>,
    amplitudes: Vec<f64>,
    frequencies: Vec<f64>,
    phases: Vec<f64>,
    offsets: Vec<f64>,
    position: Vec<f64>,
    velocity: Vec<f64>,
    effort: Vec<f64>,
    sum_position_0: f64,
    sum_velocity_0: f64,
    empty_effort_count: u64,
    max_abs_effort: f64,
}

const ARM_JOINTS: &[&str] = &[
    "shoulder_pan_joint",
    "shoulder_lift_joint",
    "elbow_joint",
    "wrist_1_joint",
    "wrist_2_joint",
    "wrist_3_joint",
    "gripper_finger_joint",
];

impl JointStatesPublisher {
    fn new(robot: usize, rng: &mut Rng) -> Self {
        let joint_count = if robot % 2 == 1 { 7 } else { 6 };
        let mut per_joint = |low: f64, high: f64| -> Vec<f64> {
            (0..joint_count).map(|_| rng.range(low, high)).collect()
        };
        JointStatesPublisher {
            names: ARM_JOINTS[..joint_count]
                .iter()
                .map(|name| name.to_string())
                .collect(),
            amplitudes: per_joint(0.2, 1.4),
            frequencies: per_joint(0.1, 1.5),
            phases: per_joint(0.0, TAU),
            offsets: per_joint(-1.0, 1.0),
            position: Vec::with_capacity(joint_count),
            velocity: Vec::with_capacity(joint_count),
            effort: Vec::with_capacity(joint_count),
            sum_position_0: 0.0,
            sum_velocity_0: 0.0,
            empty_effort_count: 0,
            max_abs_effort: 0.0,
        }
    }

    fn encode(&mut self, rng: &mut Rng, t: f64, cdr: &mut Cdr) {
        self.position.clear();
        self.velocity.clear();
        self.effort.clear();
        // Some driver cycles come without torque readings (effort empty), as real arms do.
        let effort_present = !rng.chance(0.03);
        let spike = if rng.chance(0.002) {
            rng.range(4.0, 6.0)
        } else {
            1.0
        };
        for joint in 0..self.names.len() {
            let angle = self.frequencies[joint] * t + self.phases[joint];
            let position = self.offsets[joint] + self.amplitudes[joint] * sine(angle);
            let velocity = self.amplitudes[joint] * self.frequencies[joint] * cosine(angle);
            // Whole encoder ticks, in float64 as drivers publish them.
            self.position
                .push((position / JOINT_ENCODER_TICK).round() * JOINT_ENCODER_TICK);
            self.velocity
                .push(reading(velocity + rng.noise(0.002), JOINT_VELOCITY_LSB));
            if effort_present {
                let gravity = 9.0 * cosine(position) / (joint + 1) as f64;
                let effort = reading((gravity + rng.noise(0.15)) * spike, JOINT_EFFORT_LSB);
                self.max_abs_effort = self.max_abs_effort.max(effort.abs());
                self.effort.push(effort);
            }
        }
        if !effort_present {
            self.empty_effort_count += 1;
        }
        self.sum_position_0 += self.position[0];
        self.sum_velocity_0 += self.velocity[0];
        cdr.string_sequence(&self.names);
        cdr.f64_sequence(&self.position);
        cdr.f64_sequence(&self.velocity);
        cdr.f64_sequence(&self.effort);
    }

    fn truth(&self, fields: &mut Map<String, Value>) {
        fields.insert("joint_count".into(), json!(self.names.len()));
        insert_fields!(fields, self => sum_position_0, sum_velocity_0);
        insert_fields!(fields, self => empty_effort_count, max_abs_effort);
    }
}

struct ImuPublisher {
    motion: Motion,
    sum_linear_acceleration_z: f64,
    sum_angular_velocity_z: f64,
}

impl ImuPublisher {
    fn encode(&mut self, rng: &mut Rng, t: f64, cdr: &mut Cdr) {
        let half_yaw = (self.motion.yaw(t) + rng.noise(0.002)) / 2.0;
        cdr.f64_array(&[
            0.0,
            0.0,
            reading(sine(half_yaw), QUATERNION_LSB),
            reading(cosine(half_yaw), QUATERNION_LSB),
        ]);
        cdr.f64_array(&diagonal_covariance::<9>(&[0.0025, 0.0025, 0.0025]));
        let angular_velocity_z = reading(self.motion.yaw_rate(t) + rng.noise(0.01), GYRO_LSB);
        cdr.xyz(
            reading(rng.noise(0.01), GYRO_LSB),
            reading(rng.noise(0.01), GYRO_LSB),
            angular_velocity_z,
        );
        cdr.f64_array(&diagonal_covariance::<9>(&[0.0004, 0.0004, 0.0004]));
        let speed = self.motion.speed(t);
        let linear_acceleration_z = reading(9.80665 + rng.noise(0.05), ACCEL_LSB);
        cdr.xyz(
            reading(self.motion.acceleration(t) + rng.noise(0.04), ACCEL_LSB),
            reading(speed * self.motion.yaw_rate(t) + rng.noise(0.04), ACCEL_LSB),
            linear_acceleration_z,
        );
        cdr.f64_array(&diagonal_covariance::<9>(&[0.01, 0.01, 0.01]));
        self.sum_linear_acceleration_z += linear_acceleration_z;
        self.sum_angular_velocity_z += angular_velocity_z;
    }

    fn truth(&self, fields: &mut Map<String, Value>) {
        insert_fields!(fields, self => sum_linear_acceleration_z, sum_angular_velocity_z);
    }
}

const ODOM_CHILD_FRAME_IDS: &[&str] = &["base_link", "base_footprint"];

struct OdometryPublisher {
    motion: Motion,
    child_frame_id: &'static str,
    x: f64,
    y: f64,
    last_t: f64,
    sum_pose_position_x: f64,
    sum_twist_linear_x: f64,
}

impl OdometryPublisher {
    fn encode(&mut self, rng: &mut Rng, t: f64, cdr: &mut Cdr) {
        let motion = self.motion;
        // Dead reckoning, as a wheel-odometry node integrates its encoder speed.
        let dt = t - self.last_t;
        self.last_t = t;
        let yaw = motion.yaw(t);
        let speed = reading(motion.speed(t) + rng.noise(0.01), WHEEL_SPEED_LSB);
        self.x += speed * cosine(yaw) * dt;
        self.y += speed * sine(yaw) * dt;
        cdr.string(self.child_frame_id);
        cdr.xyz(self.x, self.y, 0.0);
        cdr.yaw_quaternion(yaw);
        cdr.f64_array(&diagonal_covariance::<36>(&[
            0.001, 0.001, 1e6, 1e6, 1e6, 0.03,
        ]));
        let yaw_rate = reading(motion.yaw_rate(t) + rng.noise(0.005), WHEEL_SPEED_LSB);
        cdr.xyz(speed, 0.0, 0.0);
        cdr.xyz(0.0, 0.0, yaw_rate);
        cdr.f64_array(&diagonal_covariance::<36>(&[
            0.002, 0.002, 1e6, 1e6, 1e6, 0.01,
        ]));
        self.sum_pose_position_x += self.x;
        self.sum_twist_linear_x += speed;
    }

    fn truth(&self, fields: &mut Map<String, Value>) {
        insert_fields!(fields, self => child_frame_id, sum_pose_position_x, sum_twist_linear_x);
        fields.insert("last_pose_position_x".into(), json!(self.x));
    }
}

struct LaserScanPublisher {
    /// Per beam: cos and sin of its angle, computed once.
    beam_directions: Vec<(f64, f64)>,
    angle_min: f32,
    angle_max: f32,
    angle_increment: f32,
    /// The robot scans inside a rectangular hall of these half-sizes (metres).
    half_width: f64,
    half_depth: f64,
    /// Beams in [glass_from, glass_to) look through a window: no return (+inf) half the time.
    glass_from: usize,
    glass_to: usize,
    has_intensities: bool,
    ranges: Vec<f32>,
    intensities: Vec<f32>,
    pos_inf_count: u64,
    neg_inf_count: u64,
    nan_count: u64,
    sum_finite_ranges: f64,
    min_finite_range: f64,
    empty_intensities_count: u64,
}

const SCAN_RANGE_MIN: f32 = 0.12;
const SCAN_RANGE_MAX: f32 = 12.0;

impl LaserScanPublisher {
    fn new(robot: usize, rng: &mut Rng) -> Self {
        let beams = rng.pick(&[270usize, 360, 361, 450, 541]);
        let field_of_view = if beams % 2 == 1 { 1.5 * PI } else { TAU };
        let angle_min = -field_of_view / 2.0;
        let angle_increment = field_of_view / beams as f64;
        let beam_directions = (0..beams)
            .map(|beam| {
                let angle = angle_min + angle_increment * beam as f64;
                (cosine(angle), sine(angle))
            })
            .collect();
        let glass_from = rng.below(beams as u64 / 2) as usize;
        LaserScanPublisher {
            beam_directions,
            angle_min: angle_min as f32,
            angle_max: (angle_min + angle_increment * (beams - 1) as f64) as f32,
            angle_increment: angle_increment as f32,
            half_width: rng.range(4.0, 16.0),
            half_depth: rng.range(3.0, 8.0),
            glass_from,
            glass_to: glass_from + beams / 12,
            has_intensities: !robot.is_multiple_of(3),
            ranges: Vec::with_capacity(beams),
            intensities: Vec::with_capacity(beams),
            pos_inf_count: 0,
            neg_inf_count: 0,
            nan_count: 0,
            sum_finite_ranges: 0.0,
            min_finite_range: f64::INFINITY,
            empty_intensities_count: 0,
        }
    }

    /// Distance from (x, y) along (dx, dy) to the wall of the hall.
    fn wall_distance(&self, x: f64, y: f64, dx: f64, dy: f64) -> f64 {
        let along = |position: f64, direction: f64, half: f64| {
            if direction > 1e-9 {
                (half - position) / direction
            } else if direction < -1e-9 {
                (-half - position) / direction
            } else {
                f64::INFINITY
            }
        };
        along(x, dx, self.half_width).min(along(y, dy, self.half_depth))
    }

    fn encode(&mut self, rng: &mut Rng, t: f64, cdr: &mut Cdr) {
        // Wander inside the hall; lidar heading ignored (the hall is symmetric enough).
        let x = 0.6 * self.half_width * sine(0.031 * t);
        let y = 0.6 * self.half_depth * sine(0.047 * t + 1.0);
        self.ranges.clear();
        self.intensities.clear();
        // Some scans arrive without intensities even on sensors that have them.
        let with_intensities = self.has_intensities && !rng.chance(0.05);
        for beam in 0..self.beam_directions.len() {
            let (dx, dy) = self.beam_directions[beam];
            let distance = self.wall_distance(x, y, dx, dy) + rng.noise(0.01);
            let through_glass = (self.glass_from..self.glass_to).contains(&beam) && rng.chance(0.5);
            // REP 117: +inf no return within range, -inf closer than range_min, NaN invalid.
            let range = if through_glass || distance > SCAN_RANGE_MAX as f64 {
                f32::INFINITY
            } else if rng.chance(0.004) {
                f32::NEG_INFINITY
            } else if rng.chance(0.01) {
                f32::NAN
            } else {
                // Millimetre resolution, like most 2D lidars.
                ((distance * 1000.0).round() / 1000.0).max(SCAN_RANGE_MIN as f64) as f32
            };
            if range.is_nan() {
                self.nan_count += 1;
            } else if range == f32::INFINITY {
                self.pos_inf_count += 1;
            } else if range == f32::NEG_INFINITY {
                self.neg_inf_count += 1;
            } else {
                self.sum_finite_ranges += range as f64;
                self.min_finite_range = self.min_finite_range.min(range as f64);
            }
            self.ranges.push(range);
            if with_intensities {
                let intensity = if range.is_finite() {
                    3000.0 / (1.0 + range as f64)
                } else {
                    0.0
                };
                self.intensities
                    .push((intensity + rng.range(0.0, 40.0)).round() as f32);
            }
        }
        if !with_intensities {
            self.empty_intensities_count += 1;
        }
        for value in [
            self.angle_min,
            self.angle_max,
            self.angle_increment,
            0.1 / self.beam_directions.len() as f32,
            0.1,
            SCAN_RANGE_MIN,
            SCAN_RANGE_MAX,
        ] {
            cdr.f32(value);
        }
        cdr.f32_sequence(&self.ranges);
        cdr.f32_sequence(&self.intensities);
    }

    fn truth(&self, fields: &mut Map<String, Value>, message_count: u64) {
        let beams = self.beam_directions.len() as u64;
        fields.insert("beam_count".into(), json!(beams));
        fields.insert("ranges_total".into(), json!(beams * message_count));
        insert_fields!(fields, self => pos_inf_count, neg_inf_count, nan_count);
        insert_fields!(fields, self => sum_finite_ranges, min_finite_range);
        insert_fields!(fields, self => empty_intensities_count);
    }
}

struct BatteryPublisher {
    start_percentage: f64,
    drain_per_second: f64,
    cell_count: usize,
    cell_voltages: Vec<f32>,
    /// Robots without a temperature sensor report NaN always; others now and then.
    temperature_nan_probability: f64,
    serial_number: String,
    sum_percentage: f64,
    min_percentage: f64,
    last_percentage: f64,
    below_0_2_count: u64,
    nan_temperature_count: u64,
}

impl BatteryPublisher {
    fn new(robot: usize, rng: &mut Rng) -> Self {
        let cells = rng.pick(&[4usize, 6, 7, 12, 13]);
        BatteryPublisher {
            start_percentage: rng.range(0.21, 0.97),
            // 1–25 points per recording: robots that start low cross 20 %.
            drain_per_second: rng.range(0.01, 0.25) / DEFAULT_SECONDS as f64,
            cell_count: cells,
            cell_voltages: Vec::with_capacity(cells),
            temperature_nan_probability: if robot % 7 == 3 { 1.0 } else { 0.04 },
            serial_number: format!("BAT-{robot:02}-{:06X}", rng.below(1 << 24)),
            sum_percentage: 0.0,
            min_percentage: f64::INFINITY,
            last_percentage: f64::NAN,
            below_0_2_count: 0,
            nan_temperature_count: 0,
        }
    }

    fn encode(&mut self, rng: &mut Rng, t: f64, cdr: &mut Cdr) {
        let percentage = (self.start_percentage - self.drain_per_second * t + rng.noise(0.001))
            .clamp(0.0, 1.0) as f32;
        self.cell_voltages.clear();
        for _ in 0..self.cell_count {
            self.cell_voltages
                .push((3.3 + 0.85 * percentage as f64 + rng.noise(0.01)) as f32);
        }
        let voltage: f32 = self.cell_voltages.iter().sum();
        let temperature = if rng.chance(self.temperature_nan_probability) {
            self.nan_temperature_count += 1;
            f32::NAN
        } else {
            (31.0 + 4.0 * (1.0 - percentage as f64) + rng.noise(0.3)) as f32
        };
        let capacity = 20.0f32;
        for value in [
            voltage,
            temperature,
            (-2.5 + rng.noise(0.4)) as f32,
            percentage * capacity,
            capacity,
            22.0,
            percentage,
        ] {
            cdr.f32(value);
        }
        cdr.u8(2); // power_supply_status: DISCHARGING
        cdr.u8(if temperature > 34.5 { 2 } else { 1 }); // health: OVERHEAT or GOOD
        cdr.u8(2); // technology: LION
        cdr.bool(true);
        cdr.f32_sequence(&self.cell_voltages);
        cdr.f32_sequence(&[]); // cell_temperature: not measured per cell
        cdr.string("slot0");
        cdr.string(&self.serial_number);
        let percentage = percentage as f64;
        self.sum_percentage += percentage;
        self.min_percentage = self.min_percentage.min(percentage);
        self.last_percentage = percentage;
        if percentage < 0.2 {
            self.below_0_2_count += 1;
        }
    }

    fn truth(&self, fields: &mut Map<String, Value>, message_count: u64) {
        insert_fields!(fields, self => sum_percentage, min_percentage, last_percentage);
        insert_fields!(fields, self => below_0_2_count, nan_temperature_count, cell_count);
        fields.insert(
            "cell_voltage_total".into(),
            json!(self.cell_count as u64 * message_count),
        );
        fields.insert("empty_cell_temperature_count".into(), json!(message_count));
    }
}

const IMAGE_WIDTH: usize = 64;
const IMAGE_HEIGHT: usize = 48;

struct ImagePublisher {
    motion: Motion,
    pixels: Vec<u8>,
    data_bytes: u64,
}

/// Sensor noise: each byte gets a uniform value in 0..=IMAGE_NOISE_MASK added.
const IMAGE_NOISE_MASK: u64 = 1;

impl ImagePublisher {
    fn encode(&mut self, rng: &mut Rng, t: f64, cdr: &mut Cdr) {
        // A corridor: a wall with doors above the horizon, a tiled floor below, panning as the
        // robot turns, plus sensor noise; compresses about as much as a small real frame does.
        let pan = (self.motion.yaw(t) * 40.0).round() as i64;
        let mut noise_bits = 0u64;
        let mut noise_left = 0;
        self.pixels.clear();
        for row in 0..IMAGE_HEIGHT {
            for column in 0..IMAGE_WIDTH {
                let x = (column as i64 + pan).rem_euclid(256) as usize;
                let shade = row as u8;
                let colour: [u8; 3] = if row < 22 {
                    if x % 64 < 14 && row > 4 {
                        [140, 90, 50]
                    } else {
                        [200 - shade, 196 - shade, 185]
                    }
                } else if (x / 8 + row / 4).is_multiple_of(2) {
                    [90, 92, 95]
                } else {
                    [120, 122, 118]
                };
                for channel in colour {
                    if noise_left == 0 {
                        noise_bits = rng.next_u64();
                        noise_left = 16;
                    }
                    self.pixels
                        .push(channel + (noise_bits & IMAGE_NOISE_MASK) as u8);
                    noise_bits >>= 4;
                    noise_left -= 1;
                }
            }
        }
        cdr.u32(IMAGE_HEIGHT as u32);
        cdr.u32(IMAGE_WIDTH as u32);
        cdr.string("rgb8");
        cdr.u8(0);
        cdr.u32((IMAGE_WIDTH * 3) as u32);
        cdr.byte_sequence(&self.pixels);
        self.data_bytes += self.pixels.len() as u64;
    }

    fn truth(&self, fields: &mut Map<String, Value>) {
        fields.insert("width".into(), json!(IMAGE_WIDTH));
        fields.insert("height".into(), json!(IMAGE_HEIGHT));
        fields.insert("encoding".into(), json!("rgb8"));
        insert_fields!(fields, self => data_bytes);
    }
}

struct CompressedImagePublisher {
    jpeg: Vec<u8>,
    data_bytes: u64,
}

const JPEG_FORMAT: &str = "rgb8; jpeg compressed bgr8";

impl CompressedImagePublisher {
    fn encode(&mut self, rng: &mut Rng, cdr: &mut Cdr) {
        // JPEG-shaped bytes: SOI + JFIF APP0, entropy-coded-looking filler, EOI. Nothing decodes
        // the picture; what matters is a realistic, incompressible blob of varying size.
        const JFIF_START: &[u8] =
            b"\xFF\xD8\xFF\xE0\x00\x10JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00";
        let filler = rng.range(1200.0, 2000.0) as usize;
        self.jpeg.clear();
        self.jpeg.extend_from_slice(JFIF_START);
        while self.jpeg.len() < JFIF_START.len() + filler {
            self.jpeg.extend_from_slice(&rng.next_u64().to_le_bytes());
        }
        self.jpeg.extend_from_slice(&[0xFF, 0xD9]);
        cdr.string(JPEG_FORMAT);
        cdr.byte_sequence(&self.jpeg);
        self.data_bytes += self.jpeg.len() as u64;
    }

    fn truth(&self, fields: &mut Map<String, Value>) {
        fields.insert("format".into(), json!(JPEG_FORMAT));
        insert_fields!(fields, self => data_bytes);
    }
}

/// A ROS node that logs to /rosout: its logger name, source file and function.
#[derive(Clone, Copy)]
struct LoggingNode {
    name: &'static str,
    file: &'static str,
    function: &'static str,
}

const LOGGING_NODES: &[LoggingNode] = &[
    LoggingNode {
        name: "controller_manager",
        file: "/opt/ros/jazzy/src/controller_manager/src/controller_manager.cpp",
        function: "update",
    },
    LoggingNode {
        name: "bt_navigator",
        file: "/opt/ros/jazzy/src/nav2_bt_navigator/src/bt_navigator.cpp",
        function: "onGoalPoseReceived",
    },
    LoggingNode {
        name: "lidar_driver",
        file: "/ws/src/lidar_driver/src/driver_node.cpp",
        function: "publishScan",
    },
    LoggingNode {
        name: "battery_monitor",
        file: "/ws/src/fleet_bringup/battery_monitor.py",
        function: "on_timer",
    },
    LoggingNode {
        name: "camera.camera_driver",
        file: "/ws/src/camera_driver/src/camera.cpp",
        function: "grabFrame",
    },
    LoggingNode {
        name: "planner_server",
        file: "/opt/ros/jazzy/src/nav2_planner/src/planner_server.cpp",
        function: "computePlan",
    },
];

/// The five rcl_interfaces/Log levels and the message templates each uses.
const LOG_LEVELS: [(u8, &[&str]); 5] = [
    (10, &["tick {n}", "state machine in IDLE after {n} us"]),
    (
        20,
        &[
            "Goal reached in {n} ms",
            "Loaded parameter set {n}",
            "Publishing at {n} Hz",
        ],
    ),
    (
        30,
        &[
            "Control loop missed its deadline by {n} us",
            "Message queue depth {n}",
        ],
    ),
    (
        40,
        &[
            "Failed to read sensor: timeout after {n} ms",
            "Planning failed: no path ({n} tries)",
        ],
    ),
    (50, &["Emergency stop: motor driver fault {n}"]),
];

struct LogPublisher {
    level_counts: [u64; 5],
    error_count_by_node: BTreeMap<&'static str, u64>,
}

impl LogPublisher {
    fn encode(&mut self, rng: &mut Rng, stamp_ns: u64, cdr: &mut Cdr) {
        let draw = rng.unit();
        let level_index = match draw {
            d if d < 0.08 => 0,
            d if d < 0.70 => 1,
            d if d < 0.88 => 2,
            d if d < 0.985 => 3,
            _ => 4,
        };
        let (level, templates) = LOG_LEVELS[level_index];
        let node = rng.pick(LOGGING_NODES);
        let text = rng
            .pick(templates)
            .replace("{n}", &rng.below(5000).to_string());
        cdr.time(stamp_ns); // Log has a bare stamp, no Header
        cdr.u8(level);
        cdr.string(node.name);
        cdr.string(&text);
        cdr.string(node.file);
        cdr.string(node.function);
        cdr.u32(40 + rng.below(900) as u32);
        self.level_counts[level_index] += 1;
        if level == 40 {
            *self.error_count_by_node.entry(node.name).or_insert(0) += 1;
        }
    }

    fn truth(&self, fields: &mut Map<String, Value>) {
        let level_counts: Map<String, Value> = LOG_LEVELS
            .iter()
            .zip(self.level_counts)
            .map(|((level, _), count)| (level.to_string(), json!(count)))
            .collect();
        fields.insert("level_counts".into(), Value::Object(level_counts));
        fields.insert(
            "error_count_by_node".into(),
            json!(self.error_count_by_node),
        );
    }
}

/// (name suffix, hardware id suffix, keys reported) of the diagnostic components.
const DIAGNOSTIC_COMPONENTS: &[(&str, &str, &[&str])] = &[
    (
        "motors: Left wheel",
        "motor_l",
        &["temperature_c", "current_a", "rpm"],
    ),
    (
        "motors: Right wheel",
        "motor_r",
        &["temperature_c", "current_a", "rpm"],
    ),
    (
        "sensors: Lidar",
        "lidar",
        &["frequency_hz", "dropped_scans"],
    ),
    (
        "sensors: IMU",
        "imu",
        &["frequency_hz", "bias_x", "bias_y", "bias_z"],
    ),
    (
        "power: Battery",
        "bms",
        &["voltage_v", "cycles", "cell_delta_mv", "balancing", "fw"],
    ),
    (
        "compute: Main board",
        "jetson",
        &["cpu_percent", "gpu_percent", "temperature_c"],
    ),
];

struct DiagnosticsPublisher {
    robot_name: String,
    status_count: u64,
    key_value_count: u64,
    status_level_counts: [u64; 4],
}

impl DiagnosticsPublisher {
    fn encode(&mut self, rng: &mut Rng, cdr: &mut Cdr) {
        // 3 to 6 components report each cycle: the aggregator sends what it heard from.
        let reporting = 3 + rng.below(4) as usize;
        cdr.count(reporting);
        for (name, hardware, keys) in &DIAGNOSTIC_COMPONENTS[..reporting] {
            let level = match rng.unit() {
                d if d < 0.85 => 0u8,
                d if d < 0.95 => 1,
                d if d < 0.99 => 2,
                _ => 3,
            };
            let message = ["OK", "Degraded", "Error", "Stale"][level as usize];
            cdr.u8(level);
            cdr.string(&format!("{}/{name}", self.robot_name));
            cdr.string(message);
            cdr.string(&format!("{}_{hardware}", self.robot_name));
            // A component with a problem adds one extra "reason" entry.
            let extra = usize::from(level != 0);
            cdr.count(keys.len() + extra);
            for key in keys.iter() {
                cdr.string(key);
                cdr.string(&format!("{:.2}", rng.range(0.0, 100.0)));
            }
            if extra == 1 {
                cdr.string("reason");
                cdr.string(message);
            }
            self.status_count += 1;
            self.key_value_count += (keys.len() + extra) as u64;
            self.status_level_counts[level as usize] += 1;
        }
    }

    fn truth(&self, fields: &mut Map<String, Value>) {
        let level_counts: Map<String, Value> = (0..4)
            .map(|level| (level.to_string(), json!(self.status_level_counts[level])))
            .collect();
        insert_fields!(fields, self => status_count, key_value_count);
        fields.insert("status_level_counts".into(), Value::Object(level_counts));
    }
}

enum Publisher {
    JointStates(JointStatesPublisher),
    Imu(ImuPublisher),
    Odometry(OdometryPublisher),
    LaserScan(LaserScanPublisher),
    Battery(BatteryPublisher),
    Image(ImagePublisher),
    CompressedImage(CompressedImagePublisher),
    Log(LogPublisher),
    Diagnostics(DiagnosticsPublisher),
}

impl Publisher {
    fn new(kind: TopicKind, robot: usize, motion: Motion, rng: &mut Rng) -> Publisher {
        match kind {
            TopicKind::JointStates => Publisher::JointStates(JointStatesPublisher::new(robot, rng)),
            TopicKind::Imu => Publisher::Imu(ImuPublisher {
                motion,
                sum_linear_acceleration_z: 0.0,
                sum_angular_velocity_z: 0.0,
            }),
            TopicKind::Odometry => Publisher::Odometry(OdometryPublisher {
                motion,
                child_frame_id: rng.pick(ODOM_CHILD_FRAME_IDS),
                x: 0.0,
                y: 0.0,
                last_t: 0.0,
                sum_pose_position_x: 0.0,
                sum_twist_linear_x: 0.0,
            }),
            TopicKind::LaserScan => Publisher::LaserScan(LaserScanPublisher::new(robot, rng)),
            TopicKind::BatteryState => Publisher::Battery(BatteryPublisher::new(robot, rng)),
            TopicKind::Image => Publisher::Image(ImagePublisher {
                motion,
                pixels: Vec::with_capacity(IMAGE_WIDTH * IMAGE_HEIGHT * 3),
                data_bytes: 0,
            }),
            TopicKind::CompressedImage => Publisher::CompressedImage(CompressedImagePublisher {
                jpeg: Vec::new(),
                data_bytes: 0,
            }),
            TopicKind::Log => Publisher::Log(LogPublisher {
                level_counts: [0; 5],
                error_count_by_node: BTreeMap::new(),
            }),
            TopicKind::Diagnostics => Publisher::Diagnostics(DiagnosticsPublisher {
                robot_name: robot_name(robot),
                status_count: 0,
                key_value_count: 0,
                status_level_counts: [0; 4],
            }),
        }
    }

    /// Writes the message stamped `stamp_ns` (t seconds after the robot's start) into `cdr`.
    fn encode(&mut self, rng: &mut Rng, stamp_ns: u64, t: f64, frame_id: &str, cdr: &mut Cdr) {
        cdr.start();
        if !matches!(self, Publisher::Log(_)) {
            cdr.header(stamp_ns, frame_id);
        }
        match self {
            Publisher::JointStates(publisher) => publisher.encode(rng, t, cdr),
            Publisher::Imu(publisher) => publisher.encode(rng, t, cdr),
            Publisher::Odometry(publisher) => publisher.encode(rng, t, cdr),
            Publisher::LaserScan(publisher) => publisher.encode(rng, t, cdr),
            Publisher::Battery(publisher) => publisher.encode(rng, t, cdr),
            Publisher::Image(publisher) => publisher.encode(rng, t, cdr),
            Publisher::CompressedImage(publisher) => publisher.encode(rng, cdr),
            Publisher::Log(publisher) => publisher.encode(rng, stamp_ns, cdr),
            Publisher::Diagnostics(publisher) => publisher.encode(rng, cdr),
        }
    }

    fn truth(&self, fields: &mut Map<String, Value>, message_count: u64) {
        match self {
            Publisher::JointStates(publisher) => publisher.truth(fields),
            Publisher::Imu(publisher) => publisher.truth(fields),
            Publisher::Odometry(publisher) => publisher.truth(fields),
            Publisher::LaserScan(publisher) => publisher.truth(fields, message_count),
            Publisher::Battery(publisher) => publisher.truth(fields, message_count),
            Publisher::Image(publisher) => publisher.truth(fields),
            Publisher::CompressedImage(publisher) => publisher.truth(fields),
            Publisher::Log(publisher) => publisher.truth(fields),
            Publisher::Diagnostics(publisher) => publisher.truth(fields),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// One robot's recording

fn robot_name(robot: usize) -> String {
    format!("robot{robot:02}")
}

/// One topic of one robot: its schedule, channel, publisher and counters.
struct Stream {
    spec: &'static TopicSpec,
    channel_id: u16,
    frame_id: &'static str,
    rng: Rng,
    publisher: Publisher,
    next_stamp_ns: u64,
    next_log_time_ns: u64,
    message_count: u64,
    first_log_time_ns: u64,
    last_log_time_ns: u64,
    payload_bytes: u64,
}

impl Stream {
    fn next_interval_ns(&mut self) -> u64 {
        if self.spec.kind == TopicKind::Log {
            // Logging is bursty: anywhere from 20 ms to twice the mean interval.
            20 * NS_PER_MS + self.rng.below(2 * self.spec.period_ns)
        } else {
            self.spec.period_ns
        }
    }

    fn schedule(&mut self, stamp_ns: u64) {
        let (low, high) = self.spec.latency_ns;
        self.next_stamp_ns = stamp_ns;
        self.next_log_time_ns = stamp_ns + low + self.rng.below(high - low);
    }

    fn truth(&self) -> Value {
        let mut fields = Map::new();
        fields.insert("message_type".into(), json!(self.spec.schema_name));
        insert_fields!(fields, self => message_count, first_log_time_ns, last_log_time_ns);
        insert_fields!(fields, self => payload_bytes, frame_id);
        self.publisher.truth(&mut fields, self.message_count);
        Value::Object(fields)
    }
}

/// The `serialized_metadata` YAML rosbag2 stores in its `rosbag2` Metadata record.
fn rosbag2_metadata_yaml(name: &str, streams: &[Stream], start_ns: u64, end_ns: u64) -> String {
    let message_count: u64 = streams.iter().map(|stream| stream.message_count).sum();
    let duration_ns = end_ns - start_ns;
    let mut yaml = format!(
        "rosbag2_bagfile_information:
  version: 9
  storage_identifier: mcap
  duration:
    nanoseconds: {duration_ns}
  starting_time:
    nanoseconds_since_epoch: {start_ns}
  message_count: {message_count}
  topics_with_message_count:
"
    );
    for stream in streams {
        let spec = stream.spec;
        // The QoS YAML is itself a string field here; a JSON string literal is valid YAML.
        let qos = Value::String(offered_qos_profiles(spec.reliability, spec.durability));
        yaml.push_str(&format!(
            "    - topic_metadata:
        name: {}
        type: {}
        serialization_format: cdr
        offered_qos_profiles: {qos}
        type_description_hash: \"\"
      message_count: {}
",
            spec.topic, spec.schema_name, stream.message_count
        ));
    }
    yaml.push_str(&format!(
        "  compression_format: \"\"
  compression_mode: \"\"
  relative_file_paths:
    - {name}.mcap
  files:
    - path: {name}.mcap
      starting_time:
        nanoseconds_since_epoch: {start_ns}
      duration:
        nanoseconds: {duration_ns}
      message_count: {message_count}
  custom_data: ~
  ros_distro: {ROS_DISTRO}"
    ));
    yaml
}

/// Writes robot `robot`'s recording and returns its entry of fleet_truth.json.
fn write_robot(options: &Options, robot: usize) -> Value {
    let name = robot_name(robot);
    let path = options.out_dir.join(format!("{name}.mcap"));
    let file =
        File::create(&path).unwrap_or_else(|e| panic!("cannot create {}: {e}", path.display()));
    let write_options = mcap::WriteOptions::new()
        .profile("ros2")
        .library("brewric mcap_fleet (mcap-rs 0.26)")
        .compression(options.compression())
        .chunk_size(Some(options.chunk_size))
        // Robots are written in parallel already; one zstd thread keeps output reproducible.
        .compression_threads(0);
    let mut writer = write_options
        .create(BufWriter::with_capacity(1 << 20, file))
        .expect("cannot start the MCAP writer");

    let robot_index = robot as u64;
    let mut robot_rng = Rng::derive(options.seed, &[robot_index]);
    let start_ns =
        FLEET_EPOCH_NS + (robot_index - 1) * ROBOT_STAGGER_NS + robot_rng.below(NS_PER_S);
    let end_ns = start_ns + options.seconds * NS_PER_S;
    let motion = Motion::new(&mut robot_rng);

    let mut schema_ids: BTreeMap<&str, u16> = BTreeMap::new();
    let mut streams: Vec<Stream> = Vec::new();
    for (topic_index, spec) in robot_topics(robot).enumerate() {
        let schema_id = match schema_ids.get(spec.schema_name) {
            Some(&id) => id,
            None => {
                let text = ros2msg_schema_text(spec.schema_name);
                let id = writer
                    .add_schema(spec.schema_name, "ros2msg", text.as_bytes())
                    .expect("cannot write a schema");
                schema_ids.insert(spec.schema_name, id);
                id
            }
        };
        let metadata = BTreeMap::from([(
            "offered_qos_profiles".to_string(),
            offered_qos_profiles(spec.reliability, spec.durability),
        )]);
        let channel_id = writer
            .add_channel(schema_id, spec.topic, "cdr", &metadata)
            .expect("cannot write a channel");
        let mut rng = Rng::derive(options.seed, &[robot_index, spec.kind as u64 + 1]);
        let frame_id = rng.pick(spec.frame_ids);
        let publisher = Publisher::new(spec.kind, robot, motion, &mut rng);
        let mut stream = Stream {
            spec,
            channel_id,
            frame_id,
            rng,
            publisher,
            next_stamp_ns: 0,
            next_log_time_ns: 0,
            message_count: 0,
            first_log_time_ns: 0,
            last_log_time_ns: 0,
            payload_bytes: 0,
        };
        // Topics start at seeded phases within their first period, as nodes come up unaligned.
        let phase = stream.rng.below(spec.period_ns) + topic_index as u64;
        stream.schedule(start_ns + phase);
        streams.push(stream);
    }

    let mut cdr = Cdr::new();
    // Next, the stream whose next message arrives first; ties go to the earlier topic. Eight
    // streams: a linear scan beats a heap.
    while let Some(stream) = streams
        .iter_mut()
        .filter(|stream| stream.next_stamp_ns < end_ns)
        .min_by_key(|stream| stream.next_log_time_ns)
    {
        let stamp_ns = stream.next_stamp_ns;
        let log_time_ns = stream.next_log_time_ns;
        let t = (stamp_ns - start_ns) as f64 / NS_PER_S as f64;
        stream
            .publisher
            .encode(&mut stream.rng, stamp_ns, t, stream.frame_id, &mut cdr);
        let header = MessageHeader {
            channel_id: stream.channel_id,
            sequence: SEQUENCE_START + stream.message_count as u32,
            log_time: log_time_ns,
            publish_time: log_time_ns,
        };
        writer
            .write_to_known_channel(&header, &cdr.bytes)
            .expect("cannot write a message");
        if stream.message_count == 0 {
            stream.first_log_time_ns = log_time_ns;
        }
        stream.message_count += 1;
        stream.last_log_time_ns = log_time_ns;
        stream.payload_bytes += cdr.bytes.len() as u64;
        let interval = stream.next_interval_ns();
        stream.schedule(stamp_ns + interval);
    }

    let first_ns = streams
        .iter()
        .map(|s| s.first_log_time_ns)
        .min()
        .unwrap_or(start_ns);
    let last_ns = streams
        .iter()
        .map(|s| s.last_log_time_ns)
        .max()
        .unwrap_or(start_ns);
    let metadata = mcap::records::Metadata {
        name: "rosbag2".to_string(),
        metadata: BTreeMap::from([
            ("ROS_DISTRO".to_string(), ROS_DISTRO.to_string()),
            (
                "serialized_metadata".to_string(),
                rosbag2_metadata_yaml(&name, &streams, first_ns, last_ns),
            ),
        ]),
    };
    writer
        .write_metadata(&metadata)
        .expect("cannot write the rosbag2 metadata");
    writer.finish().expect("cannot finish the MCAP file");
    drop(writer);
    let file_bytes = std::fs::metadata(&path)
        .unwrap_or_else(|e| panic!("cannot stat {}: {e}", path.display()))
        .len();

    let topics: Map<String, Value> = streams
        .iter()
        .map(|stream| (stream.spec.topic.to_string(), stream.truth()))
        .collect();
    json!({
        "recording": name,
        "file": format!("{name}.mcap"),
        "file_bytes": file_bytes,
        "message_count": streams.iter().map(|s| s.message_count).sum::<u64>(),
        "start_time_ns": first_ns,
        "end_time_ns": last_ns,
        "topics": topics,
    })
}

// ---------------------------------------------------------------------------------------------
// The fleet

/// Writes every robot, `available_parallelism` at a time; returns the entries in robot order.
fn write_fleet(options: &Options) -> Vec<Value> {
    let next_robot = AtomicUsize::new(1);
    let workers = std::thread::available_parallelism()
        .map_or(2, |n| n.get())
        .min(options.robots);
    let mut entries: Vec<(usize, Value)> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..workers)
            .map(|_| {
                scope.spawn(|| {
                    let mut written = Vec::new();
                    loop {
                        let robot = next_robot.fetch_add(1, Ordering::Relaxed);
                        if robot > options.robots {
                            return written;
                        }
                        written.push((robot, write_robot(options, robot)));
                    }
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|handle| handle.join().expect("a robot writer panicked"))
            .collect()
    });
    entries.sort_by_key(|(robot, _)| *robot);
    entries.into_iter().map(|(_, entry)| entry).collect()
}

fn sum_field(files: &[Value], field: &str) -> u64 {
    files.iter().filter_map(|file| file[field].as_u64()).sum()
}

fn main() {
    let options = parse_options();
    std::fs::create_dir_all(&options.out_dir)
        .unwrap_or_else(|e| panic!("cannot create {}: {e}", options.out_dir.display()));
    let started = Instant::now();
    let files = write_fleet(&options);
    let elapsed = started.elapsed();

    let mut messages_per_topic: BTreeMap<String, u64> = BTreeMap::new();
    let mut payload_bytes = 0;
    for file in &files {
        for (topic, truth) in file["topics"].as_object().into_iter().flatten() {
            *messages_per_topic.entry(topic.clone()).or_insert(0) +=
                truth["message_count"].as_u64().unwrap_or(0);
            payload_bytes += truth["payload_bytes"].as_u64().unwrap_or(0);
        }
    }
    let file_bytes = sum_field(&files, "file_bytes");
    let message_count = sum_field(&files, "message_count");
    let truth = json!({
        "generator": "mcap_fleet",
        "seed": options.seed,
        "robots": options.robots,
        "seconds": options.seconds,
        "compression": options.compression_name,
        "chunk_size": options.chunk_size,
        "start_time_ns": FLEET_EPOCH_NS,
        "sequence_start": SEQUENCE_START,
        "totals": {
            "files": files.len(),
            "file_bytes": file_bytes,
            "message_count": message_count,
            "payload_bytes": payload_bytes,
            "messages_per_topic": messages_per_topic,
        },
        "files": files,
    });
    let truth_path = options.out_dir.join("fleet_truth.json");
    write_json(&truth_path, &truth);

    println!(
        "wrote {} recordings to {}: {:.1} MB ({} bytes), {} messages, \
         {:.1} MB of CDR payload, in {:.1} s",
        files.len(),
        options.out_dir.display(),
        file_bytes as f64 / 1e6,
        file_bytes,
        message_count,
        payload_bytes as f64 / 1e6,
        elapsed.as_secs_f64()
    );
    for (topic, count) in &messages_per_topic {
        println!("  {topic:<26} {count:>9} messages");
    }
    println!("truth: {}", truth_path.display());
}

fn write_json(path: &Path, value: &Value) {
    let file =
        File::create(path).unwrap_or_else(|e| panic!("cannot create {}: {e}", path.display()));
    let mut out = BufWriter::new(file);
    serde_json::to_writer_pretty(&mut out, value)
        .unwrap_or_else(|e| panic!("cannot write {}: {e}", path.display()));
    out.flush()
        .unwrap_or_else(|e| panic!("cannot write {}: {e}", path.display()));
}

// ---------------------------------------------------------------------------------------------
// .msg texts, verbatim from ros2/common_interfaces and ros2/rcl_interfaces (Apache-2.0; copies
// in shared/reference/ros2-msg/), keyed by the name rosbag2 writes after `MSG: `.

const MSG_DEFINITIONS: &[(&str, &str)] = &[
    (
        "std_msgs/Header",
        r#"# Standard metadata for higher-level stamped data types.
# This is generally used to communicate timestamped data
# in a particular coordinate frame.

# Two-integer timestamp that is expressed as seconds and nanoseconds.
builtin_interfaces/Time stamp

# Transform frame with which this data is associated.
string frame_id
"#,
    ),
    (
        "builtin_interfaces/Time",
        r#"# This message communicates ROS Time defined here:
# https://design.ros2.org/articles/clock_and_time.html

# The seconds component, valid over all int32 values.
int32 sec

# The nanoseconds component, valid in the range [0, 1e9).
uint32 nanosec
"#,
    ),
    (
        "geometry_msgs/Point",
        r#"# This contains the position of a point in free space
float64 x
float64 y
float64 z
"#,
    ),
    (
        "geometry_msgs/Quaternion",
        r#"# This represents an orientation in free space in quaternion form.

float64 x 0
float64 y 0
float64 z 0
float64 w 1
"#,
    ),
    (
        "geometry_msgs/Vector3",
        r#"# This represents a vector in free space.

# This is semantically different than a point.
# A vector is always anchored at the origin.
# When a transform is applied to a vector, only the rotational component is applied.

float64 x
float64 y
float64 z
"#,
    ),
    (
        "geometry_msgs/Pose",
        r#"# A representation of pose in free space, composed of position and orientation.

Point position
Quaternion orientation
"#,
    ),
    (
        "geometry_msgs/Twist",
        r#"# This expresses velocity in free space broken into its linear and angular parts.

Vector3  linear
Vector3  angular
"#,
    ),
    (
        "geometry_msgs/PoseWithCovariance",
        r#"# This represents a pose in free space with uncertainty.

Pose pose

# Row-major representation of the 6x6 covariance matrix
# The orientation parameters use a fixed-axis representation.
# In order, the parameters are:
# (x, y, z, rotation about X axis, rotation about Y axis, rotation about Z axis)
float64[36] covariance
"#,
    ),
    (
        "geometry_msgs/TwistWithCovariance",
        r#"# This expresses velocity in free space with uncertainty.

Twist twist

# Row-major representation of the 6x6 covariance matrix
# The orientation parameters use a fixed-axis representation.
# In order, the parameters are:
# (x, y, z, rotation about X axis, rotation about Y axis, rotation about Z axis)
float64[36] covariance
"#,
    ),
    (
        "sensor_msgs/JointState",
        r#"# This is a message that holds data to describe the state of a set of torque controlled joints.
#
# The state of each joint (revolute or prismatic) is defined by:
#  * the position of the joint (rad or m),
#  * the velocity of the joint (rad/s or m/s) and
#  * the effort that is applied in the joint (Nm or N).
#
# Each joint is uniquely identified by its name
# The header specifies the time at which the joint states were recorded. All the joint states
# in one message have to be recorded at the same time.
#
# This message consists of a multiple arrays, one for each part of the joint state.
# The goal is to make each of the fields optional. When e.g. your joints have no
# effort associated with them, you can leave the effort array empty.
#
# All arrays in this message should have the same size, or be empty.
# This is the only way to uniquely associate the joint name with the correct
# states.

std_msgs/Header header

string[] name
float64[] position
float64[] velocity
float64[] effort
"#,
    ),
    (
        "sensor_msgs/Imu",
        r#"# This is a message to hold data from an IMU (Inertial Measurement Unit)
#
# Accelerations should be in m/s^2 (not in g's), and rotational velocity should be in rad/sec
#
# If the covariance of the measurement is known, it should be filled in (if all you know is the
# variance of each measurement, e.g. from the datasheet, just put those along the diagonal)
# A covariance matrix of all zeros will be interpreted as "covariance unknown", and to use the
# data a covariance will have to be assumed or gotten from some other source
#
# If you have no estimate for one of the data elements (e.g. your IMU doesn't produce an
# orientation estimate), please set element 0 of the associated covariance matrix to -1
# If you are interpreting this message, please check for a value of -1 in the first element of each
# covariance matrix, and disregard the associated estimate.

std_msgs/Header header

geometry_msgs/Quaternion orientation
float64[9] orientation_covariance # Row major about x, y, z axes

geometry_msgs/Vector3 angular_velocity
float64[9] angular_velocity_covariance # Row major about x, y, z axes

geometry_msgs/Vector3 linear_acceleration
float64[9] linear_acceleration_covariance # Row major x, y z
"#,
    ),
    (
        "nav_msgs/Odometry",
        r#"# This represents an estimate of a position and velocity in free space.
# The pose in this message should be specified in the coordinate frame given by header.frame_id
# The twist in this message should be specified in the coordinate frame given by the child_frame_id

# Includes the frame id of the pose parent.
std_msgs/Header header

# Frame id the pose points to. The twist is in this coordinate frame.
string child_frame_id

# Estimated pose that is typically relative to a fixed world frame.
geometry_msgs/PoseWithCovariance pose

# Estimated linear and angular velocity relative to child_frame_id.
geometry_msgs/TwistWithCovariance twist
"#,
    ),
    (
        "sensor_msgs/LaserScan",
        r#"# Single scan from a planar laser range-finder
#
# If you have another ranging device with different behavior (e.g. a sonar
# array), please find or create a different message, since applications
# will make fairly laser-specific assumptions about this data

std_msgs/Header header # timestamp in the header is the acquisition time of
                             # the first ray in the scan.
                             #
                             # in frame frame_id, angles are measured around
                             # the positive Z axis (counterclockwise, if Z is up)
                             # with zero angle being forward along the x axis

float32 angle_min            # start angle of the scan [rad]
float32 angle_max            # end angle of the scan [rad]
float32 angle_increment      # angular distance between measurements [rad]

float32 time_increment       # time between measurements [seconds] - if your scanner
                             # is moving, this will be used in interpolating position
                             # of 3d points
float32 scan_time            # time between scans [seconds]

float32 range_min            # minimum range value [m]
float32 range_max            # maximum range value [m]

float32[] ranges             # range data [m]
                             # (Note: values < range_min or > range_max should be discarded)
float32[] intensities        # intensity data [device-specific units].  If your
                             # device does not provide intensities, please leave
                             # the array empty.
"#,
    ),
    (
        "sensor_msgs/BatteryState",
        r#"
# Constants are chosen to match the enums in the linux kernel
# defined in include/linux/power_supply.h as of version 3.7
# The one difference is for style reasons the constants are
# all uppercase not mixed case.

# Power supply status constants
uint8 POWER_SUPPLY_STATUS_UNKNOWN = 0
uint8 POWER_SUPPLY_STATUS_CHARGING = 1
uint8 POWER_SUPPLY_STATUS_DISCHARGING = 2
uint8 POWER_SUPPLY_STATUS_NOT_CHARGING = 3
uint8 POWER_SUPPLY_STATUS_FULL = 4

# Power supply health constants
uint8 POWER_SUPPLY_HEALTH_UNKNOWN = 0
uint8 POWER_SUPPLY_HEALTH_GOOD = 1
uint8 POWER_SUPPLY_HEALTH_OVERHEAT = 2
uint8 POWER_SUPPLY_HEALTH_DEAD = 3
uint8 POWER_SUPPLY_HEALTH_OVERVOLTAGE = 4
uint8 POWER_SUPPLY_HEALTH_UNSPEC_FAILURE = 5
uint8 POWER_SUPPLY_HEALTH_COLD = 6
uint8 POWER_SUPPLY_HEALTH_WATCHDOG_TIMER_EXPIRE = 7
uint8 POWER_SUPPLY_HEALTH_SAFETY_TIMER_EXPIRE = 8

# Power supply technology (chemistry) constants
uint8 POWER_SUPPLY_TECHNOLOGY_UNKNOWN = 0 # Unknown battery technology
uint8 POWER_SUPPLY_TECHNOLOGY_NIMH = 1    # Nickel-Metal Hydride battery
uint8 POWER_SUPPLY_TECHNOLOGY_LION = 2    # Lithium-ion battery
uint8 POWER_SUPPLY_TECHNOLOGY_LIPO = 3    # Lithium Polymer battery
uint8 POWER_SUPPLY_TECHNOLOGY_LIFE = 4    # Lithium Iron Phosphate battery
uint8 POWER_SUPPLY_TECHNOLOGY_NICD = 5    # Nickel-Cadmium battery
uint8 POWER_SUPPLY_TECHNOLOGY_LIMN = 6    # Lithium Manganese Dioxide battery
uint8 POWER_SUPPLY_TECHNOLOGY_TERNARY = 7 # Ternary Lithium battery
uint8 POWER_SUPPLY_TECHNOLOGY_VRLA = 8    # Valve Regulated Lead-Acid battery

std_msgs/Header  header
float32 voltage          # Voltage in Volts (Mandatory)
float32 temperature      # Temperature in Degrees Celsius (If unmeasured NaN)
float32 current          # Negative when discharging (A)  (If unmeasured NaN)
float32 charge           # Current charge in Ah  (If unmeasured NaN)
float32 capacity         # Capacity in Ah (last full capacity)  (If unmeasured NaN)
float32 design_capacity  # Capacity in Ah (design capacity)  (If unmeasured NaN)
float32 percentage       # Charge percentage on 0 to 1 range  (If unmeasured NaN)
uint8   power_supply_status     # The charging status as reported. Values defined above
uint8   power_supply_health     # The battery health metric. Values defined above
uint8   power_supply_technology # The battery chemistry. Values defined above
bool    present          # True if the battery is present

float32[] cell_voltage   # An array of individual cell voltages for each cell in the pack
                         # If individual voltages unknown but number of cells known set each to NaN
float32[] cell_temperature # An array of individual cell temperatures for each cell in the pack
                           # If individual temperatures unknown but number of cells known set each to NaN
string location          # The location into which the battery is inserted. (slot number or plug)
string serial_number     # The best approximation of the battery serial number
"#,
    ),
    (
        "sensor_msgs/Image",
        r#"# This message contains an uncompressed image
# (0, 0) is at top-left corner of image

std_msgs/Header header # Header timestamp should be acquisition time of image
                             # Header frame_id should be optical frame of camera
                             # origin of frame should be optical center of cameara
                             # +x should point to the right in the image
                             # +y should point down in the image
                             # +z should point into to plane of the image
                             # If the frame_id here and the frame_id of the CameraInfo
                             # message associated with the image conflict
                             # the behavior is undefined

uint32 height                # image height, that is, number of rows
uint32 width                 # image width, that is, number of columns

# The legal values for encoding are in file include/sensor_msgs/image_encodings.hpp
# If you want to standardize a new string format, join
# ros-users@lists.ros.org and send an email proposing a new encoding.

string encoding       # Encoding of pixels -- channel meaning, ordering, size
                      # taken from the list of strings in include/sensor_msgs/image_encodings.hpp

uint8 is_bigendian    # is this data bigendian?
uint32 step           # Full row length in bytes
uint8[] data          # actual matrix data, size is (step * rows)
"#,
    ),
    (
        "sensor_msgs/CompressedImage",
        r#"# This message contains a compressed image.

std_msgs/Header header # Header timestamp should be acquisition time of image
                             # Header frame_id should be optical frame of camera
                             # origin of frame should be optical center of cameara
                             # +x should point to the right in the image
                             # +y should point down in the image
                             # +z should point into to plane of the image

string format                # Specifies the format of the data
                             # Acceptable values differ by the image transport used:
                             # - compressed_image_transport:
                             #     ORIG_PIXFMT; CODEC compressed [COMPRESSED_PIXFMT]
                             #   where:
                             #   - ORIG_PIXFMT is pixel format of the raw image, i.e.
                             #     the content of sensor_msgs/Image/encoding with
                             #     values from include/sensor_msgs/image_encodings.h
                             #   - CODEC is one of [jpeg, png, tiff]
                             #   - COMPRESSED_PIXFMT is only appended for color images
                             #     and is the pixel format used by the compression
                             #     algorithm. Valid values for jpeg encoding are:
                             #     [bgr8, rgb8]. Valid values for png encoding are:
                             #     [bgr8, rgb8, bgr16, rgb16].
                             #   If the field is empty or does not correspond to the
                             #   above pattern, the image is treated as bgr8 or mono8
                             #   jpeg image (depending on the number of channels).
                             # - compressed_depth_image_transport:
                             #     ORIG_PIXFMT; compressedDepth CODEC
                             #   where:
                             #   - ORIG_PIXFMT is pixel format of the raw image, i.e.
                             #     the content of sensor_msgs/Image/encoding with
                             #     values from include/sensor_msgs/image_encodings.h
                             #     It is usually one of [16UC1, 32FC1].
                             #   - CODEC is one of [png, rvl]
                             #   If the field is empty or does not correspond to the
                             #   above pattern, the image is treated as png image.
                             # - Other image transports can store whatever values they
                             #   need for successful decoding of the image. Refer to
                             #   documentation of the other transports for details.

uint8[] data                 # Compressed image buffer
"#,
    ),
    (
        "rcl_interfaces/Log",
        r#"##
## Severity level constants
## 
## These logging levels follow the Python Standard
## https://docs.python.org/3/library/logging.html#logging-levels
## And are implemented in rcutils as well
## https://github.com/ros2/rcutils/blob/35f29850064e0c33a4063cbc947ebbfeada11dba/include/rcutils/logging.h#L164-L172
## This leaves space for other standard logging levels to be inserted in the middle in the future,
## as well as custom user defined levels.
## Since there are several other logging enumeration standard for different implementations,
## other logging implementations may need to provide level mappings to match their internal implementations.
##

# Debug is for pedantic information, which is useful when debugging issues.
uint8 DEBUG=10

# Info is the standard informational level and is used to report expected
# information.
uint8 INFO=20

# Warning is for information that may potentially cause issues or possibly unexpected
# behavior.
uint8 WARN=30

# Error is for information that this node cannot resolve.
uint8 ERROR=40

# Information about a impending node shutdown.
uint8 FATAL=50

##
## Fields
##

# Timestamp when this message was generated by the node.
builtin_interfaces/Time stamp

# Corresponding log level, see above definitions.
uint8 level

# The name representing the logger this message came from.
string name

# The full log message.
string msg

# The file the message came from.
string file

# The function the message came from.
string function

# The line in the file the message came from.
uint32 line
"#,
    ),
    (
        "diagnostic_msgs/DiagnosticArray",
        r#"# This message is used to send diagnostic information about the state of the robot.
std_msgs/Header header # for timestamp
DiagnosticStatus[] status # an array of components being reported on
"#,
    ),
    (
        "diagnostic_msgs/DiagnosticStatus",
        r#"# This message holds the status of an individual component of the robot.

# Possible levels of operations.
byte OK=0
byte WARN=1
byte ERROR=2
byte STALE=3

# Level of operation enumerated above.
byte level
# A description of the test/component reporting.
string name
# A description of the status.
string message
# A hardware unique string.
string hardware_id
# An array of values associated with the status.
KeyValue[] values

"#,
    ),
    (
        "diagnostic_msgs/KeyValue",
        r#"# What to label this value when viewing.
string key
# A value to track over time.
string value
"#,
    ),
];
