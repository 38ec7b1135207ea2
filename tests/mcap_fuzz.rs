//! A bounded, seeded fuzz loop over the MCAP reader, the CDR decoder and
//! the ros2msg parser that runs on stable Rust in CI (the coverage-guided
//! targets live in `fuzz/`: `mcap_cdr`, `ros2msg`). A xorshift mutator
//! (bit flips, truncations, insertions of the bytes and tokens the formats
//! care about, overwritten lengths and counts, splices between seeds) over:
//!
//! - CDR payloads, generated at random but valid for a set of schemas by a
//!   schema-driven encoder here. Every case: no panic, and a message either
//!   decodes into exactly one more topic row or leaves every table as it
//!   was; taken batches have equal-length columns (a value kept once aside), UTF-8 text without NUL,
//!   and arrays PostgreSQL's binary array decoder accepts.
//! - whole MCAP files written by the `mcap` crate in each container mode.
//!   Every case: no panic, the same outcome whatever piece sizes the stream
//!   is fed in, buffered bytes bounded by the configured record cap.
//! - ros2msg schema texts. Every case: no panic, and a schema that parses
//!   and compiles decodes random valid messages of its own type.

use std::collections::BTreeMap;
use std::io::Cursor;
use std::time::{Duration, Instant};

use brewric::exec::vector::ColumnData;
use brewric::ingest::mcap::{
    parse_ros2msg, BaseType, ChannelRecord, Channels, DecodeOptions, Decoder, IndexedFile,
    Location, McapStream, MessageRecord, MessageSchema, Multiplicity, Primitive, ReaderOptions,
    SchemaRecord,
};
use brewric::types::array::{ArrayElem, ArrayValue};
use brewric::types::DataType;

const ITERATIONS: usize = 40_000;
/// Stop early rather than hold CI up on a slow machine.
const TIME_LIMIT: Duration = Duration::from_secs(20);

const HEADER: &str = "builtin_interfaces/Time stamp\nstring frame_id\n";

/// (schema name, ros2msg text): the benchmark's types, compact.
fn schemas() -> Vec<(&'static str, String)> {
    let sep =
        "\n================================================================================\n";
    let header = format!("{sep}MSG: std_msgs/Header\n{HEADER}");
    vec![
        (
            "sensor_msgs/msg/Imu",
            format!(
                "std_msgs/Header header\ngeometry_msgs/Quaternion orientation\nfloat64[9] orientation_covariance\n\
                 geometry_msgs/Vector3 angular_velocity\nfloat64[9] angular_velocity_covariance\n\
                 geometry_msgs/Vector3 linear_acceleration\nfloat64[9] linear_acceleration_covariance\n\
                 {header}{sep}MSG: geometry_msgs/Quaternion\nfloat64 x 0\nfloat64 y 0\nfloat64 z 0\nfloat64 w 1\n\
                 {sep}MSG: geometry_msgs/Vector3\nfloat64 x\nfloat64 y\nfloat64 z\n"
            ),
        ),
        (
            "sensor_msgs/msg/JointState",
            format!("std_msgs/Header header\nstring[] name\nfloat64[] position\nfloat64[] velocity\nfloat64[] effort\n{header}"),
        ),
        (
            "sensor_msgs/msg/LaserScan",
            format!(
                "std_msgs/Header header\nfloat32 angle_min\nfloat32 angle_max\nfloat32 angle_increment\n\
                 float32 time_increment\nfloat32 scan_time\nfloat32 range_min\nfloat32 range_max\n\
                 float32[] ranges\nfloat32[] intensities\n{header}"
            ),
        ),
        (
            "sensor_msgs/msg/BatteryState",
            format!(
                "uint8 POWER_SUPPLY_STATUS_UNKNOWN = 0\nstd_msgs/Header header\nfloat32 voltage\nfloat32 temperature\n\
                 float32 percentage\nuint8 power_supply_status\nbool present\nfloat32[] cell_voltage\n\
                 float32[] cell_temperature\nstring location\nstring serial_number\n{header}"
            ),
        ),
        (
            "rcl_interfaces/msg/Log",
            "uint8 DEBUG=10\nbuiltin_interfaces/Time stamp\nuint8 level\nstring name\nstring msg\nstring file\nstring function\nuint32 line\n".to_string(),
        ),
        (
            "diagnostic_msgs/msg/DiagnosticArray",
            format!(
                "std_msgs/Header header\nDiagnosticStatus[] status\n{header}\
                 {sep}MSG: diagnostic_msgs/DiagnosticStatus\nbyte OK=0\nbyte level\nstring name\nstring message\n\
                 string hardware_id\nKeyValue[] values\n{sep}MSG: diagnostic_msgs/KeyValue\nstring key\nstring value\n"
            ),
        ),
        (
            "sensor_msgs/msg/CompressedImage",
            format!("std_msgs/Header header\nstring format\nuint8[] data\n{header}"),
        ),
        (
            "test_msgs/msg/Edge",
            "bool a\nchar c\nint8 i8\nuint16 u16\nuint64 u64\nint64 i64\nbuiltin_interfaces/Duration d\n\
             builtin_interfaces/Time[] times\nbool[] flags\nuint16[3] triple\nstring<=8[<=4] words\n\
             wstring w\nwstring[] ws\nuint8[4] quad\nEmpty e\nInner[2] pair\nInner[] inners\nfloat64 last\n\
             ===\nMSG: test_msgs/Empty\n===\nMSG: test_msgs/Inner\nint8 x\nEmpty[] nothing\nstring s\n"
                .to_string(),
        ),
    ]
}

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// Writes a random message valid for `ty` of `schema`, in plain CDR with
/// the given byte order (alignment from the first byte after the
/// encapsulation header). `None` when the type is too large to write.
struct Writer<'a> {
    schema: &'a MessageSchema,
    out: Vec<u8>,
    be: bool,
    rng: &'a mut Rng,
}

impl Writer<'_> {
    fn align(&mut self, n: usize) {
        while !(self.out.len() - 4).is_multiple_of(n) {
            self.out.push(0);
        }
    }
    fn put(&mut self, le: &[u8]) {
        self.align(le.len());
        if self.be {
            self.out.extend(le.iter().rev());
        } else {
            self.out.extend_from_slice(le);
        }
    }
    fn u32(&mut self, v: u32) {
        self.put(&v.to_le_bytes());
    }
    fn value(&mut self, base: BaseType, depth: usize) -> Option<()> {
        if self.out.len() > 1 << 16 || depth > 40 {
            return None;
        }
        match base {
            BaseType::Primitive(p) => {
                let mut b =
                    (self.rng.next() as u128 | (self.rng.next() as u128) << 64).to_le_bytes();
                if p == Primitive::Bool {
                    b[0] &= 1;
                }
                if p == Primitive::UInt64 {
                    b[7] &= 0x7F;
                }
                self.put(&b[..p.size()]);
            }
            BaseType::String { .. } => {
                let n = self.rng.below(12);
                self.u32(n as u32 + 1);
                for _ in 0..n {
                    let c = b"abc xyz_/\xc3\xa9"[self.rng.below(9)];
                    self.out.push(c);
                }
                self.out.push(0);
            }
            BaseType::WString { .. } => {
                let n = self.rng.below(4);
                self.u32(n as u32);
                for _ in 0..n {
                    let c = 0x41 + self.rng.below(0x3000) as u32;
                    self.u32(c);
                }
            }
            BaseType::Time | BaseType::Duration => {
                let sec = self.rng.next() as i32;
                let nanosec = self.rng.below(1_000_000_000) as u32;
                self.put(&sec.to_le_bytes());
                self.put(&nanosec.to_le_bytes());
            }
            BaseType::Message(t) => {
                let fields = &self.schema.types[t].fields;
                if fields.is_empty() {
                    self.out.push(0);
                }
                for f in fields.clone() {
                    match f.multiplicity {
                        Multiplicity::Single => self.value(f.base, depth + 1)?,
                        Multiplicity::Fixed(n) => {
                            if n > 64 {
                                return None;
                            }
                            for _ in 0..n {
                                self.value(f.base, depth + 1)?;
                            }
                        }
                        Multiplicity::Sequence { .. } => {
                            let n = self.rng.below(4);
                            self.u32(n as u32);
                            for _ in 0..n {
                                self.value(f.base, depth + 1)?;
                            }
                        }
                    }
                }
            }
        }
        Some(())
    }
}

fn random_message(schema: &MessageSchema, rng: &mut Rng, be: bool) -> Option<Vec<u8>> {
    let mut w = Writer {
        schema,
        out: vec![0, if be { 0 } else { 1 }, 0, 0],
        be,
        rng,
    };
    w.value(BaseType::Message(schema.root), 0)?;
    Some(w.out)
}

const SPECIAL: &[u8] = b"\0\x01\x7f\x80\xff[]<=/#\n =0123456789abcxyzMSG:";

fn mutate(rng: &mut Rng, input: &mut Vec<u8>, others: &[Vec<u8>], max_len: usize) {
    for _ in 0..1 + rng.below(4) {
        let at = rng.below(input.len() + 1);
        match rng.below(8) {
            0 if !input.is_empty() => {
                let i = rng.below(input.len());
                input[i] ^= 1 << rng.below(8);
            }
            1 => input.insert(at, SPECIAL[rng.below(SPECIAL.len())]),
            2 if !input.is_empty() => {
                input.remove(rng.below(input.len()));
            }
            3 if !others.is_empty() => {
                let other = &others[rng.below(others.len())];
                let from = rng.below(other.len() + 1);
                let to = from + rng.below((other.len() - from).min(64) + 1);
                input.splice(at..at, other[from..to].iter().copied());
            }
            4 => input.truncate(at),
            5 if input.len() >= 4 => {
                // A length or count: huge, zero, or off by a little.
                let i = rng.below(input.len() - 3);
                let v: u32 = match rng.below(4) {
                    0 => u32::MAX,
                    1 => 0x7FFF_FFFF,
                    2 => 0,
                    _ => u32::from_le_bytes([input[i], input[i + 1], input[i + 2], input[i + 3]])
                        .wrapping_add(rng.below(9) as u32)
                        .wrapping_sub(4),
                };
                input[i..i + 4].copy_from_slice(&v.to_le_bytes());
            }
            6 if input.len() >= 8 => {
                let i = rng.below(input.len() - 7);
                let v: u64 = [u64::MAX, 1 << 40, 1 << 31, 0][rng.below(4)];
                input[i..i + 8].copy_from_slice(&v.to_le_bytes());
            }
            _ => {
                let from = rng.below(input.len() + 1);
                let to = from + rng.below((input.len() - from).min(40) + 1);
                let run = input[from..to].to_vec();
                input.splice(at..at, run);
            }
        }
    }
    input.truncate(max_len);
}

fn channels_for(name: &str, text: &[u8]) -> Result<Channels, String> {
    let mut channels = Channels::new(DecodeOptions {
        recording: "fuzz".into(),
        blob_threshold: Some(16),
    });
    channels
        .add_schema(
            &SchemaRecord {
                id: 1,
                name,
                encoding: "ros2msg",
                data: text,
            },
            Location::File(0),
        )
        .map_err(|e| e.to_string())?;
    channels
        .add_channel(
            &ChannelRecord {
                id: 7,
                schema_id: 1,
                topic: "/fuzz",
                message_encoding: "cdr",
                metadata: vec![],
            },
            Location::File(0),
        )
        .map_err(|e| e.to_string())?;
    Ok(channels)
}

fn message(data: &[u8]) -> MessageRecord<'_> {
    MessageRecord {
        channel_id: 7,
        sequence: 1,
        log_time: 5,
        publish_time: 6,
        data,
        data_file_offset: Some(100),
    }
}

/// Taken batches are well formed: equal lengths (a value kept once aside), text UTF-8 without NUL,
/// arrays readable by the array codec.
fn check_batches(decoder: &mut Decoder) {
    for batch in decoder.take_batches() {
        for t in &batch.tables {
            let layout = &batch.plan.layout.tables[t.table];
            for ((c, l), &once) in t.columns.iter().zip(&layout.columns).zip(&t.repeated) {
                // A value every row repeats is kept once, without NULLs.
                assert_eq!(c.len(), if once { 1 } else { t.rows }, "{}.{}", layout.name, l.name);
                assert!(!once || c.validity.is_none(), "{}.{}", layout.name, l.name);
                let ColumnData::Bytes(b) = &c.data else {
                    continue;
                };
                assert!(b.offsets.windows(2).all(|w| w[0] <= w[1]));
                assert_eq!(*b.offsets.last().unwrap() as usize, b.data.len());
                for v in b.iter() {
                    match l.data_type {
                        DataType::Text => {
                            assert!(
                                std::str::from_utf8(v).is_ok() && !v.contains(&0),
                                "{}",
                                l.name
                            )
                        }
                        DataType::Array(e) => {
                            let a = ArrayValue::decode(v, e)
                                .unwrap_or_else(|e| panic!("{}: {e:?}", l.name));
                            if e == ArrayElem::Text {
                                assert!(a.elems.iter().all(|d| matches!(d, brewric::types::Datum::Bytes(s) if !s.contains(&0))));
                            }
                        }
                        _ => {}
                    }
                }
            }
        }
        for blob in &batch.blobs {
            assert!(blob.len > 16);
            assert!(blob.row < batch.tables[blob.table].rows);
        }
    }
}

/// CDR payloads: decode or roll back.
fn cdr_case(
    rng: &mut Rng,
    compiled: &[(MessageSchema, Channels)],
    decoders: &mut [Decoder],
) -> bool {
    let k = rng.below(compiled.len());
    let (schema, _) = &compiled[k];
    let be = rng.below(4) == 0;
    let Some(mut payload) = random_message(schema, rng, be) else {
        return false;
    };
    if rng.below(5) != 0 {
        mutate(rng, &mut payload, &[], 1 << 16);
    }
    let decoder = &mut decoders[k];
    let before = decoder.buffered_rows();
    let ok = decoder
        .message(&message(&payload), Location::File(0))
        .is_ok();
    let after = decoder.buffered_rows();
    if ok {
        assert!(after > before, "a decoded message adds its row");
    } else {
        assert_eq!(after, before, "a failed message leaves nothing");
    }
    assert!(decoder.buffered_bytes() < 64 << 20);
    if rng.below(64) == 0 {
        check_batches(decoder);
    }
    ok
}

/// Small MCAP files of every container mode, a few channels each.
fn mcap_seeds(rng: &mut Rng) -> Vec<Vec<u8>> {
    let all = schemas();
    let parsed: Vec<MessageSchema> = all
        .iter()
        .map(|(n, t)| parse_ros2msg(n, t).unwrap())
        .collect();
    let modes: Vec<mcap::WriteOptions> = vec![
        mcap::WriteOptions::new()
            .compression(Some(mcap::Compression::Zstd))
            .chunk_size(Some(700)),
        // lz4 frames cost their decoder a 192 KiB window each: few chunks.
        mcap::WriteOptions::new()
            .compression(Some(mcap::Compression::Lz4))
            .chunk_size(Some(4000)),
        mcap::WriteOptions::new()
            .compression(None)
            .chunk_size(Some(600)),
        mcap::WriteOptions::new().use_chunks(false),
        mcap::WriteOptions::new()
            .compression(None)
            .emit_chunk_indexes(false)
            .emit_message_indexes(false),
    ];
    let mut files = Vec::new();
    for (m, options) in modes.into_iter().enumerate() {
        let mut w = options
            .profile("ros2")
            .create(Cursor::new(Vec::new()))
            .unwrap();
        let mut ids = Vec::new();
        for k in [m % all.len(), (m + 3) % all.len(), 7] {
            let s = w
                .add_schema(all[k].0, "ros2msg", all[k].1.as_bytes())
                .unwrap();
            ids.push((
                k,
                w.add_channel(s, &format!("/t{k}"), "cdr", &BTreeMap::new())
                    .unwrap(),
            ));
        }
        for i in 0..12u32 {
            let (k, id) = ids[i as usize % ids.len()];
            let Some(p) = random_message(&parsed[k], rng, false) else {
                continue;
            };
            w.write_to_known_channel(
                &mcap::records::MessageHeader {
                    channel_id: id,
                    sequence: i,
                    log_time: 1000 + i as u64,
                    publish_time: 1000,
                },
                &p,
            )
            .unwrap();
        }
        w.finish().unwrap();
        files.push(w.into_inner().into_inner());
    }
    files
}

fn small_reader() -> ReaderOptions {
    ReaderOptions {
        max_record_bytes: 256 << 10,
        max_chunk_bytes: 256 << 10,
        verify_crcs: true,
    }
}

/// Streams `file` cut at `cuts`; the outcome as comparable text.
fn stream_outcome(file: &[u8], cuts: &[usize]) -> String {
    let mut stream = McapStream::new(small_reader());
    let mut decoder = Decoder::new(Channels::new(DecodeOptions::default()));
    let mut log = String::new();
    let mut taken = 0;
    let ends: Vec<usize> = cuts.iter().copied().chain([file.len()]).collect();
    for end in ends {
        stream.feed(&file[taken..end]);
        taken = end;
        loop {
            match stream.next_record() {
                Ok(Some(rec)) => {
                    if let Err(e) = decoder.record(&rec) {
                        log.push_str(&format!("decode error: {e}\n"));
                    }
                }
                Ok(None) => break,
                Err(e) => {
                    log.push_str(&format!("read error: {e}\n"));
                    return log;
                }
            }
        }
        assert!(
            stream.buffered() <= 2 * (256 << 10) + file.len().min(1 << 20) + 64,
            "{}",
            stream.buffered()
        );
    }
    let rows: usize = decoder.buffered_rows();
    log.push_str(&format!("rows {rows}, ending {:?}\n", stream.finish()));
    log
}

fn container_case(rng: &mut Rng, seeds: &[Vec<u8>]) -> bool {
    let mut file = seeds[rng.below(seeds.len())].clone();
    mutate(rng, &mut file, seeds, 1 << 16);
    let whole = stream_outcome(&file, &[]);
    let mut cuts = vec![rng.below(file.len() + 1), rng.below(file.len() + 1)];
    cuts.sort();
    let split = stream_outcome(&file, &cuts);
    assert_eq!(whole, split, "cuts {cuts:?}");
    if let Ok(Some(indexed)) = IndexedFile::open(&file, &small_reader()) {
        let _ = indexed.verify_data_crc();
        if let Ok(channels) = Channels::from_indexed(&indexed, DecodeOptions::default()) {
            let mut buffer = brewric::ingest::mcap::ChunkBuffer::new();
            let mut decoder = Decoder::new(channels);
            for chunk in &indexed.chunks {
                let Ok(records) = indexed.chunk_records(chunk, &mut buffer) else {
                    continue;
                };
                for rec in records {
                    let Ok(rec) = rec else { break };
                    let _ = decoder.record(&rec);
                }
            }
            check_batches(&mut decoder);
        }
    }
    !whole.contains("error")
}

const TOKENS: &[&str] = &[
    "uint8",
    "int64",
    "float32",
    "string",
    "string<=3",
    "wstring",
    "bool",
    "char",
    "byte",
    "[]",
    "[3]",
    "[<=2]",
    "[0]",
    "[99999999999]",
    " ",
    "\n",
    "#",
    "=",
    " = 5",
    " 1",
    "===\n",
    "MSG: ",
    "MSG: p/T\n",
    "std_msgs/Header",
    "Header",
    "builtin_interfaces/Time",
    "builtin_interfaces/msg/Duration",
    "p/msg/T",
    "/",
    "x",
    "T",
    "\r\n",
];

fn schema_case(rng: &mut Rng, texts: &[(&'static str, String)]) -> (bool, bool) {
    let (name, text) = &texts[rng.below(texts.len())];
    let mut bytes = text.as_bytes().to_vec();
    for _ in 0..1 + rng.below(2) {
        if rng.below(4) != 0 {
            let t = TOKENS[rng.below(TOKENS.len())];
            // Insert at a line start or anywhere.
            let at = if rng.below(2) == 0 {
                let lines: Vec<usize> = bytes
                    .iter()
                    .enumerate()
                    .filter(|(_, &b)| b == b'\n')
                    .map(|(i, _)| i + 1)
                    .collect();
                lines.get(rng.below(lines.len())).copied().unwrap_or(0)
            } else {
                rng.below(bytes.len() + 1)
            };
            bytes.splice(at..at, t.bytes());
        } else {
            mutate(rng, &mut bytes, &[], 8192);
        }
    }
    let text = String::from_utf8_lossy(&bytes).into_owned();
    let Ok(parsed) = parse_ros2msg(name, &text) else {
        return (false, false);
    };
    let Ok(channels) = channels_for(name, text.as_bytes()) else {
        return (true, false);
    };
    let mut decoder = Decoder::new(channels);
    for _ in 0..3 {
        let be = rng.below(2) == 0;
        if let Some(payload) = random_message(&parsed, rng, be) {
            if let Err(e) = decoder.message(&message(&payload), Location::File(0)) {
                panic!("a valid message of a compiled schema fails: {e}\nschema:\n{text}");
            }
        }
    }
    let garbage: Vec<u8> = (0..rng.below(200)).map(|_| rng.next() as u8).collect();
    let _ = decoder.message(&message(&garbage), Location::File(0));
    check_batches(&mut decoder);
    (true, true)
}

#[test]
fn mutated_mcap_cdr_and_schemas_keep_invariants() {
    let started = Instant::now();
    // MCAP_FUZZ_SEED and MCAP_FUZZ_CASES run other or longer rounds locally.
    let env = |name: &str| std::env::var(name).ok().and_then(|v| v.parse::<u64>().ok());
    let mut rng = Rng(env("MCAP_FUZZ_SEED").unwrap_or(0x6d63_6170_6364_7221) | 1);
    let iterations = env("MCAP_FUZZ_CASES").map_or(ITERATIONS, |n| n as usize);
    let time_limit = if iterations > ITERATIONS {
        Duration::MAX
    } else {
        TIME_LIMIT
    };
    let texts = schemas();
    let compiled: Vec<(MessageSchema, Channels)> = texts
        .iter()
        .map(|(n, t)| {
            (
                parse_ros2msg(n, t).unwrap(),
                channels_for(n, t.as_bytes()).unwrap(),
            )
        })
        .collect();
    let mut decoders: Vec<Decoder> = compiled
        .iter()
        .map(|(_, c)| Decoder::new(c.clone()))
        .collect();
    let seeds = mcap_seeds(&mut rng);
    let (
        mut cdr,
        mut cdr_ok,
        mut files,
        mut files_ok,
        mut texts_tried,
        mut parsed,
        mut compiled_ok,
    ) = (0, 0, 0, 0, 0, 0, 0);
    let mut done = 0;
    while done < iterations && started.elapsed() < time_limit {
        match done % 10 {
            0..=5 => {
                cdr += 1;
                cdr_ok += cdr_case(&mut rng, &compiled, &mut decoders) as usize;
            }
            6 => {
                files += 1;
                files_ok += container_case(&mut rng, &seeds) as usize;
            }
            _ => {
                texts_tried += 1;
                let (p, c) = schema_case(&mut rng, &texts);
                parsed += p as usize;
                compiled_ok += c as usize;
            }
        }
        done += 1;
    }
    for d in &mut decoders {
        check_batches(d);
    }
    eprintln!(
        "mcap fuzz: {done} cases in {:.1} s: {cdr} payloads ({cdr_ok} decoded), {files} files ({files_ok} clean), \
         {texts_tried} schemas ({parsed} parsed, {compiled_ok} compiled)",
        started.elapsed().as_secs_f64()
    );
    assert!(
        cdr >= 1000 && files >= 300 && texts_tried >= 500,
        "too few cases ran"
    );
    assert!(cdr_ok > 0 && cdr_ok < cdr, "both outcomes of decoding");
    assert!(files_ok > 0 && files_ok < files, "both outcomes of reading");
    assert!(
        parsed > 0 && parsed < texts_tried && compiled_ok > 0,
        "both outcomes of parsing"
    );
}

/// Writes the seed corpora of the cargo-fuzz targets (`fuzz/seeds/`):
/// `cargo test --test mcap_fuzz -- --ignored write_fuzz_seeds`.
#[test]
#[ignore]
fn write_fuzz_seeds() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/seeds");
    let cdr_dir = root.join("mcap_cdr");
    let msg_dir = root.join("ros2msg");
    std::fs::create_dir_all(&cdr_dir).unwrap();
    std::fs::create_dir_all(&msg_dir).unwrap();
    let mut rng = Rng(42);
    // Container seeds: control byte 1, then the file.
    for (i, file) in mcap_seeds(&mut rng).iter().enumerate() {
        let mut seed = vec![1u8];
        seed.extend_from_slice(file);
        std::fs::write(cdr_dir.join(format!("file_{i}.bin")), seed).unwrap();
    }
    // Payload seeds: control byte 0 (little-endian) or 2, u16 schema
    // length, schema name NUL schema text, payload.
    for (name, text) in schemas() {
        let schema = parse_ros2msg(name, &text).unwrap();
        for be in [false, true] {
            let payload = random_message(&schema, &mut rng, be).unwrap();
            let mut seed = vec![if be { 2u8 } else { 0 }];
            let head = format!("{name}\0{text}");
            seed.extend_from_slice(&(head.len() as u16).to_le_bytes());
            seed.extend_from_slice(head.as_bytes());
            seed.extend_from_slice(&payload);
            let short = name.rsplit('/').next().unwrap_or(name).to_lowercase();
            std::fs::write(
                cdr_dir.join(format!("{short}_{}.bin", if be { "be" } else { "le" })),
                seed,
            )
            .unwrap();
        }
        let short = name.rsplit('/').next().unwrap_or(name).to_lowercase();
        std::fs::write(
            msg_dir.join(format!("{short}.msg")),
            format!("{name}\n{text}"),
        )
        .unwrap();
    }
}
