//! From records to column batches: the schema and channel registry
//! ([`Channels`], each channel's [`ChannelPlan`] compiled once per schema
//! and shared), and [`Decoder`], one per worker, which appends every
//! message to its topic's column builders and hands them out as
//! [`TopicBatch`]es.
//!
//! Column builders are grouped by physical type (`TableColumns`: one
//! vector of `Vec<f64>`s, one of `Vec<i64>`s, …) so a decode op pushes to
//! a typed vector by slot without matching on a column's type; they become
//! `Column`s in layout order when a batch is taken. A message that fails to
//! decode leaves nothing behind: every table of its topic is truncated back
//! to its row count before the message. A variable-length value of 32
//! bytes or more that every row of a batch repeats (covariance arrays, joint
//! name lists) is written once (`TableColumns::keep_once`) and the column
//! marked in [`TableBatch::repeated`]: readers of a batch either honour the
//! mark or call [`TableBatch::spell_out`].
//!
//! Must not: read container bytes (that is `reader`) or decide table
//! existence, widening or storage (the caller's).

use std::collections::HashMap;
use std::sync::Arc;

use crate::exec::vector::{Bitmap, BytesColumn, Column, ColumnData};
use crate::types::{DataType, PhysicalType};

use super::cdr::{DecodeOut, Fail, FailKind, Program};
use super::json::JsonProgram;
use super::layout::{ros2_layout, table_name_for_topic, TableLayout, TopicLayout};
use super::reader::{MESSAGE_PAYLOAD_OFFSET, ChannelRecord, IndexedFile, MessageRecord, Record, RecordAt, SchemaRecord};
use super::ros2msg::parse_ros2msg;
use super::{Location, McapError, McapResult};

/// What the decoder does with payloads.
#[derive(Debug, Clone, Default)]
pub struct DecodeOptions {
    /// The `recording` column's value.
    pub recording: String,
    /// uint8 sequences (and raw payloads) longer than this are not copied
    /// into their bytea column: the column gets an empty value and the
    /// batch a [`BlobRef`] (camera frames). `None`: always copy.
    pub blob_threshold: Option<usize>,
}

/// How a channel's messages are decoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Encoding {
    /// `cdr` with a `ros2msg` schema: typed columns and child tables.
    Cdr,
    /// `json` with a `jsonschema` schema: typed columns from the schema's
    /// properties.
    Json,
    /// `json` without a usable schema: one `data jsonb` column.
    JsonDocument,
    /// Anything else: one `data bytea` column holding the payload, and a
    /// warning in [`ChannelPlan::warning`].
    Raw,
}

/// A Schema record, kept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchemaEntry {
    pub id: u16,
    pub name: String,
    pub encoding: String,
    pub data: Vec<u8>,
}

/// A schema's decoder, shared by every channel of that type.
#[derive(Debug)]
pub(crate) enum MessageDecoder {
    Cdr(Program),
    Json(JsonProgram),
    Raw,
}

#[derive(Debug)]
struct Compiled {
    /// Table names relative (see [`TopicLayout::for_table`]).
    layout: TopicLayout,
    decoder: MessageDecoder,
    encoding: Encoding,
}

/// Everything needed to turn one channel's messages into rows.
#[derive(Debug)]
pub struct ChannelPlan {
    pub channel_id: u16,
    pub topic: String,
    pub message_encoding: String,
    pub metadata: Vec<(String, String)>,
    /// `None` for schema id 0.
    pub schema: Option<Arc<SchemaEntry>>,
    pub encoding: Encoding,
    /// [`table_name_for_topic`] of the topic.
    pub table_name: String,
    /// The topic's tables, named from `table_name`.
    pub layout: TopicLayout,
    /// For the caller to pass on (a NOTICE): why the channel is stored raw.
    pub warning: Option<String>,
    compiled: Arc<Compiled>,
}

impl ChannelPlan {
    /// The schema's name (`sensor_msgs/msg/Imu`), empty without one.
    pub fn schema_name(&self) -> &str {
        self.schema.as_ref().map_or("", |s| &s.name)
    }
    pub fn schema_encoding(&self) -> &str {
        self.schema.as_ref().map_or("", |s| &s.encoding)
    }
}

/// Schemas and channels as the file defines them, each channel with its
/// plan. Cheap to clone (plans are shared): give each worker a clone.
#[derive(Debug, Clone, Default)]
pub struct Channels {
    options: Arc<DecodeOptions>,
    schemas: HashMap<u16, Arc<SchemaEntry>>,
    channels: HashMap<u16, Arc<ChannelPlan>>,
    compiled: HashMap<(u16, String), Arc<Compiled>>,
}

impl Channels {
    /// Decoders made from these channels leave byte sequences longer than
    /// `threshold` in the recording (see [`DecodeOptions::blob_threshold`]).
    pub fn set_blob_threshold(&mut self, threshold: Option<usize>) {
        let mut options = (*self.options).clone();
        options.blob_threshold = threshold;
        self.options = Arc::new(options);
    }

    pub fn new(options: DecodeOptions) -> Self {
        Channels {
            options: Arc::new(options),
            ..Default::default()
        }
    }

    /// Every schema and channel of an indexed file's summary.
    pub fn from_indexed(file: &IndexedFile<'_>, options: DecodeOptions) -> McapResult<Self> {
        let mut channels = Channels::new(options);
        for (at, s) in &file.schemas {
            channels.add_schema(s, *at)?;
        }
        for (at, c) in &file.channels {
            channels.add_channel(c, *at)?;
        }
        Ok(channels)
    }

    pub fn options(&self) -> &DecodeOptions {
        &self.options
    }

    /// Registers a Schema record. The same id again must have the same
    /// content (the summary repeats schemas). Id 0 is reserved ("no
    /// schema") and ignored.
    pub fn add_schema(&mut self, s: &SchemaRecord<'_>, at: Location) -> McapResult<()> {
        if s.id == 0 {
            return Ok(());
        }
        if let Some(old) = self.schemas.get(&s.id) {
            if old.name != s.name || old.encoding != s.encoding || old.data != s.data {
                return Err(McapError::Conflict {
                    at,
                    detail: format!(
                        "schema {} ({}) is defined again with different content",
                        s.id, s.name
                    ),
                });
            }
            return Ok(());
        }
        self.schemas.insert(
            s.id,
            Arc::new(SchemaEntry {
                id: s.id,
                name: s.name.to_string(),
                encoding: s.encoding.to_string(),
                data: s.data.to_vec(),
            }),
        );
        Ok(())
    }

    /// Registers a Channel record and compiles its plan (once per schema
    /// and message encoding). A schema that does not parse is an error
    /// here, naming the channel.
    pub fn add_channel(
        &mut self,
        c: &ChannelRecord<'_>,
        at: Location,
    ) -> McapResult<Arc<ChannelPlan>> {
        if let Some(old) = self.channels.get(&c.id) {
            let same = old.topic == c.topic
                && old.message_encoding == c.message_encoding
                && old.schema.as_ref().map_or(0, |s| s.id) == c.schema_id
                && old.metadata.len() == c.metadata.len()
                && old
                    .metadata
                    .iter()
                    .zip(&c.metadata)
                    .all(|((a, b), (x, y))| a == x && b == y);
            if !same {
                return Err(McapError::Conflict {
                    at,
                    detail: format!(
                        "channel {} ({}) is defined again with different content",
                        c.id, c.topic
                    ),
                });
            }
            return Ok(old.clone());
        }
        let schema = match c.schema_id {
            0 => None,
            id => Some(
                self.schemas
                    .get(&id)
                    .cloned()
                    .ok_or(McapError::UnknownSchema { schema_id: id })
                    .map_err(|e| e.in_channel(at, c.id, c.topic))?,
            ),
        };
        let key = (c.schema_id, c.message_encoding.to_string());
        let compiled = match self.compiled.get(&key) {
            Some(x) => x.clone(),
            None => {
                let x = Arc::new(
                    compile(schema.as_deref(), c.message_encoding)
                        .map_err(|e| e.in_channel(at, c.id, c.topic))?,
                );
                self.compiled.insert(key, x.clone());
                x
            }
        };
        let table_name = table_name_for_topic(c.topic);
        let warning = (compiled.encoding == Encoding::Raw).then(|| {
            format!(
                "topic {} (message encoding {:?}, schema {:?} encoding {:?}) is not decoded: its messages are stored whole in the bytea column \"data\" of table {}",
                c.topic,
                c.message_encoding,
                schema.as_ref().map_or("", |s| s.name.as_str()),
                schema.as_ref().map_or("", |s| s.encoding.as_str()),
                table_name
            )
        });
        let plan = Arc::new(ChannelPlan {
            channel_id: c.id,
            topic: c.topic.to_string(),
            message_encoding: c.message_encoding.to_string(),
            metadata: c
                .metadata
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            schema,
            encoding: compiled.encoding,
            layout: compiled.layout.for_table(&table_name),
            table_name,
            warning,
            compiled,
        });
        self.channels.insert(c.id, plan.clone());
        Ok(plan)
    }

    pub fn channel(&self, id: u16) -> Option<&Arc<ChannelPlan>> {
        self.channels.get(&id)
    }

    /// Every channel's plan, by id.
    pub fn plans(&self) -> Vec<Arc<ChannelPlan>> {
        let mut v: Vec<_> = self.channels.values().cloned().collect();
        v.sort_by_key(|p| p.channel_id);
        v
    }

    pub fn schemas(&self) -> Vec<Arc<SchemaEntry>> {
        let mut v: Vec<_> = self.schemas.values().cloned().collect();
        v.sort_by_key(|s| s.id);
        v
    }
}

fn compile(schema: Option<&SchemaEntry>, message_encoding: &str) -> McapResult<Compiled> {
    let schema_encoding = schema.map_or("", |s| s.encoding.as_str());
    match (message_encoding, schema_encoding) {
        ("cdr", "ros2msg") => {
            let s = schema.ok_or(McapError::UnknownSchema { schema_id: 0 })?;
            let text = std::str::from_utf8(&s.data).map_err(|e| McapError::Schema {
                schema: s.name.clone(),
                line: 0,
                detail: format!("the schema text is not valid UTF-8 ({e})"),
            })?;
            let parsed = parse_ros2msg(&s.name, text)?;
            let (layout, steps) = ros2_layout(&parsed)?;
            let program = Program::compile(&layout, &steps);
            Ok(Compiled {
                layout,
                decoder: MessageDecoder::Cdr(program),
                encoding: Encoding::Cdr,
            })
        }
        ("json", "jsonschema") => {
            let s = schema.ok_or(McapError::UnknownSchema { schema_id: 0 })?;
            let (layout, program) = super::json::compile(&s.name, &s.data)?;
            Ok(Compiled {
                layout,
                decoder: MessageDecoder::Json(program),
                encoding: Encoding::Json,
            })
        }
        ("json", _) => {
            let (layout, program) = super::json::document();
            Ok(Compiled {
                layout,
                decoder: MessageDecoder::Json(program),
                encoding: Encoding::JsonDocument,
            })
        }
        _ => Ok(Compiled {
            layout: raw_layout(),
            decoder: MessageDecoder::Raw,
            encoding: Encoding::Raw,
        }),
    }
}

fn raw_layout() -> TopicLayout {
    let mut t = super::layout::TableBuilder::topic_table();
    t.add(
        "data",
        DataType::Bytea,
        super::layout::ColumnRole::Field,
        "",
        "",
    );
    TopicLayout {
        tables: vec![t.table],
    }
}

// ---------------------------------------------------------------------------
// Column builders
// ---------------------------------------------------------------------------

/// A column's typed vector family.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Store {
    Bool,
    I16,
    I32,
    I64,
    F32,
    F64,
    Bytes,
}

/// Per column of a table, its store and slot (slots numbered per store
/// in column order).
pub(crate) fn slot_map(table: &TableLayout) -> Vec<(Store, u32)> {
    let mut counts = [0u32; 7];
    table
        .columns
        .iter()
        .map(|c| {
            let store = match c.data_type.physical() {
                PhysicalType::Bool => Store::Bool,
                PhysicalType::Int16 => Store::I16,
                PhysicalType::Int32 => Store::I32,
                PhysicalType::Int64 => Store::I64,
                PhysicalType::Float32 => Store::F32,
                PhysicalType::Float64 => Store::F64,
                // Layouts only hold the types above and bytes-backed ones.
                _ => Store::Bytes,
            };
            let slot = counts[store as usize];
            counts[store as usize] += 1;
            (store, slot)
        })
        .collect()
}

/// One table's columns while they fill.
#[derive(Debug, Clone)]
pub(crate) struct TableColumns {
    pub bools: Vec<Vec<bool>>,
    pub i16s: Vec<Vec<i16>>,
    pub i32s: Vec<Vec<i32>>,
    pub i64s: Vec<Vec<i64>>,
    pub f32s: Vec<Vec<f32>>,
    pub f64s: Vec<Vec<f64>>,
    pub bytes: Vec<BytesColumn>,
    /// Per column, validity so far; empty while the column has no NULL.
    nulls: Vec<Vec<bool>>,
    slots: Vec<(Store, u32)>,
    /// Per bytes slot, whether it holds one value for every row so far.
    repeats: Vec<Repeat>,
    /// Complete rows.
    pub rows: usize,
}

/// Whether a bytes column keeps one value for all its rows (see
/// [`TableColumns::keep_once`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Repeat {
    /// No value pushed through `keep_once` yet.
    Fresh,
    /// The column holds one value standing for this many rows (the
    /// table's complete rows, and the row being decoded once it reached
    /// the column).
    One(usize),
    /// One value per row.
    Plain,
}

/// Values shorter than this are written on every row (text tags, short
/// arrays): spelling them out on every scan would cost more than they save.
/// Covariance arrays are 92 and 308 bytes; joint name arrays ~60–100.
const KEEP_ONCE_MIN_BYTES: usize = 32;

impl TableColumns {
    pub fn new(layout: &TableLayout) -> Self {
        let slots = slot_map(layout);
        let count = |s: Store| slots.iter().filter(|(x, _)| *x == s).count();
        TableColumns {
            bools: vec![Vec::new(); count(Store::Bool)],
            i16s: vec![Vec::new(); count(Store::I16)],
            i32s: vec![Vec::new(); count(Store::I32)],
            i64s: vec![Vec::new(); count(Store::I64)],
            f32s: vec![Vec::new(); count(Store::F32)],
            f64s: vec![Vec::new(); count(Store::F64)],
            bytes: vec![BytesColumn::default(); count(Store::Bytes)],
            repeats: vec![Repeat::Fresh; count(Store::Bytes)],
            nulls: vec![Vec::new(); slots.len()],
            slots,
            rows: 0,
        }
    }

    pub fn slot(&self, column: usize) -> (Store, u32) {
        self.slots[column]
    }

    /// Called right after a value was pushed to bytes slot `s` for row
    /// `self.rows`: while every row of the batch holds the same value of
    /// `KEEP_ONCE_MIN_BYTES` or more, the column keeps it once (the value just
    /// pushed is taken back off, so the column's memory does not grow); the
    /// first different value spells the earlier rows out. An op calls this
    /// for every row or for none.
    #[inline]
    pub fn keep_once(&mut self, s: usize) {
        let col = &mut self.bytes[s];
        match self.repeats[s] {
            Repeat::Plain => {}
            Repeat::Fresh => {
                let first = self.rows == 0 && col.len() == 1 && col.data.len() >= KEEP_ONCE_MIN_BYTES;
                self.repeats[s] = if first { Repeat::One(1) } else { Repeat::Plain };
            }
            Repeat::One(n) => {
                debug_assert_eq!(col.len(), 2);
                let split = col.offsets[1] as usize;
                let (first, new) = col.data.split_at(split);
                if first == new {
                    col.data.truncate(split);
                    col.offsets.pop();
                    self.repeats[s] = Repeat::One(n + 1);
                } else {
                    self.spell_out(s);
                }
            }
        }
    }

    /// Whether bytes slot `s` keeps one value for its rows that is a
    /// `head`-byte prefix followed by `tail`: the row being decoded then
    /// repeats it, is counted, and nothing is written (a caller that knows
    /// the prefix is the same for the same `tail` skips encoding the value).
    #[inline]
    pub fn repeats_tail(&mut self, s: usize, head: usize, tail: &[u8]) -> bool {
        let Repeat::One(n) = self.repeats[s] else { return false };
        let col = &self.bytes[s];
        let same = col.len() == 1 && col.data.len() == head + tail.len() && &col.data[head..] == tail;
        if same {
            self.repeats[s] = Repeat::One(n + 1);
        }
        same
    }

    /// Writes a kept-once value of slot `s` on each row it stands for,
    /// followed by a value pushed after it, in the column's own buffers (the
    /// capacity the last batch left them is kept).
    fn spell_out(&mut self, s: usize) {
        let Repeat::One(rows) = std::mem::replace(&mut self.repeats[s], Repeat::Plain) else {
            return;
        };
        let col = &mut self.bytes[s];
        let split = col.offsets[1] as usize;
        let has_pushed = col.len() == 2;
        let pushed = col.data.split_off(split);
        col.offsets.truncate(2);
        col.data.reserve(split * (rows - 1) + pushed.len());
        col.offsets.reserve(rows);
        for _ in 1..rows {
            col.data.extend_from_within(..split);
            col.offsets.push(col.data.len() as u32);
        }
        if has_pushed {
            col.push(&pushed);
        }
    }

    /// The largest bytes column's size once spelled out.
    pub fn largest_bytes_column(&self) -> usize {
        self.bytes
            .iter()
            .zip(&self.repeats)
            .map(|(b, r)| match r {
                Repeat::One(n) => b.offsets[1] as usize * n,
                _ => b.data.len(),
            })
            .max()
            .unwrap_or(0)
    }

    /// Marks the value just pushed to `column` (at row `self.rows`) NULL.
    pub fn set_null(&mut self, column: usize) {
        if let (Store::Bytes, s) = self.slots[column] {
            self.spell_out(s as usize);
        }
        let mask = &mut self.nulls[column];
        if mask.is_empty() {
            mask.resize(self.rows, true);
        }
        mask.push(false);
    }

    /// Marks the value just pushed to `column` valid (only needed once the
    /// column has a NULL).
    #[inline]
    pub fn set_valid(&mut self, column: usize) {
        let mask = &mut self.nulls[column];
        if !mask.is_empty() {
            mask.push(true);
        }
    }

    /// Drops everything past `rows` complete rows (a failed message).
    pub fn truncate(&mut self, rows: usize) {
        for v in &mut self.bools {
            v.truncate(rows);
        }
        for v in &mut self.i16s {
            v.truncate(rows);
        }
        for v in &mut self.i32s {
            v.truncate(rows);
        }
        for v in &mut self.i64s {
            v.truncate(rows);
        }
        for v in &mut self.f32s {
            v.truncate(rows);
        }
        for v in &mut self.f64s {
            v.truncate(rows);
        }
        for (b, repeat) in self.bytes.iter_mut().zip(&mut self.repeats) {
            match repeat {
                Repeat::One(n) if rows > 0 => {
                    *n = (*n).min(rows);
                    b.offsets.truncate(2);
                }
                _ => {
                    b.offsets.truncate(rows + 1);
                    if rows == 0 {
                        *repeat = Repeat::Fresh;
                    }
                }
            }
            let end = b.offsets.last().copied().unwrap_or(0) as usize;
            b.data.truncate(end);
        }
        for m in &mut self.nulls {
            if m.len() > rows {
                m.truncate(rows);
            }
            if m.iter().all(|&v| v) {
                m.clear();
            }
        }
        self.rows = rows;
    }

    /// Bytes held (for flushing by size).
    pub fn byte_size(&self) -> usize {
        let rows = self.rows;
        rows * (self.bools.len()
            + 2 * self.i16s.len()
            + 4 * self.i32s.len()
            + 8 * self.i64s.len()
            + 4 * self.f32s.len()
            + 8 * self.f64s.len())
            + self
                .bytes
                .iter()
                .map(|b| b.data.len() + 4 * b.offsets.len())
                .sum::<usize>()
    }

    /// The columns in layout order, and which of them keep one value for
    /// every row (see [`TableBatch::repeated`]); the builders start over
    /// (keeping their capacity's size for the next batch).
    pub fn take(&mut self, layout: &TableLayout) -> (Vec<Column>, Vec<bool>) {
        // Room for a batch a little larger than this one (a child table's
        // rows and a variable-length column's bytes vary from batch to
        // batch): outgrowing a buffer copies all of it.
        fn room(len: usize) -> usize {
            len + len / 4
        }
        fn take_vec<T>(v: &mut Vec<T>) -> Vec<T> {
            let cap = room(v.len());
            std::mem::replace(v, Vec::with_capacity(cap))
        }
        let mut out = Vec::with_capacity(self.slots.len());
        let mut repeated = vec![false; self.slots.len()];
        for (c, col) in layout.columns.iter().enumerate() {
            let (store, slot) = self.slots[c];
            let s = slot as usize;
            let data = match store {
                Store::Bool => ColumnData::Bool(take_vec(&mut self.bools[s])),
                Store::I16 => ColumnData::Int16(take_vec(&mut self.i16s[s])),
                Store::I32 => ColumnData::Int32(take_vec(&mut self.i32s[s])),
                Store::I64 => ColumnData::Int64(take_vec(&mut self.i64s[s])),
                Store::F32 => ColumnData::Float32(take_vec(&mut self.f32s[s])),
                Store::F64 => ColumnData::Float64(take_vec(&mut self.f64s[s])),
                Store::Bytes => {
                    if let Repeat::One(n) = std::mem::replace(&mut self.repeats[s], Repeat::Fresh) {
                        debug_assert_eq!(n, self.rows);
                        repeated[c] = self.rows > 1;
                    }
                    let b = &mut self.bytes[s];
                    ColumnData::Bytes(std::mem::replace(
                        b,
                        BytesColumn::with_capacity(room(b.len()), room(b.data.len())),
                    ))
                }
            };
            let mask = std::mem::take(&mut self.nulls[c]);
            let validity = (!mask.is_empty()).then(|| Bitmap::from_bools(&mask));
            out.push(Column::new(col.data_type, data, validity));
        }
        self.rows = 0;
        (out, repeated)
    }
}

/// The per-message values of the leading columns.
#[derive(Debug, Clone, Copy)]
pub(crate) struct MessageCtx<'a> {
    pub recording: &'a [u8],
    pub log_time: i64,
    pub publish_time: i64,
    pub sequence: i64,
    /// File offset of payload byte 0, when the payload lies in the file.
    pub payload_file_offset: Option<u64>,
    /// Inside a chunk: the chunk record's file offset and payload byte 0's
    /// offset in the chunk's uncompressed records.
    pub payload_in_chunk: Option<(u64, u64)>,
}

/// The leading columns of a topic table (always its first four columns:
/// bytes slot 0, i64 slots 0–2).
pub(crate) fn push_leading(t: &mut TableColumns, ctx: &MessageCtx<'_>) {
    t.bytes[0].push(ctx.recording);
    t.i64s[0].push(ctx.log_time);
    t.i64s[1].push(ctx.publish_time);
    t.i64s[2].push(ctx.sequence);
}

/// A large byte sequence left in the recording instead of copied: the
/// bytea value at (`table`, `column`, `row`) of the batch is empty and
/// stands for `len` bytes at `offset` in the message payload.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlobRef {
    /// Index into the topic layout's tables.
    pub table: usize,
    pub column: usize,
    /// Row within this batch's table.
    pub row: usize,
    /// Offset in the message payload (encapsulation header included).
    pub offset: usize,
    pub len: usize,
    /// Where the bytes are in the file, when the payload lies there
    /// verbatim (not inside a compressed chunk).
    pub file_offset: Option<u64>,
    /// Inside a chunk: the chunk record's file offset and the bytes' offset
    /// in the chunk's uncompressed records.
    pub in_chunk: Option<(u64, u64)>,
}

/// One table's rows of a batch.
#[derive(Debug, Clone)]
pub struct TableBatch {
    /// Index into the topic layout's tables (0 = the topic's table).
    pub table: usize,
    pub rows: usize,
    /// A column marked in `repeated` holds one value standing for all
    /// `rows` rows (a variable-length value without NULLs that every row
    /// repeated: a covariance array, a list of joint names); the others hold
    /// `rows` values. [`TableBatch::spell_out`] writes them out.
    pub columns: Vec<Column>,
    pub repeated: Vec<bool>,
}

impl TableBatch {
    /// Column `c`'s value on `row`, if both exist.
    pub fn datum(&self, c: usize, row: usize) -> Option<crate::types::Datum> {
        let column = self.columns.get(c)?;
        let row = if self.repeated[c] { 0 } else { row };
        (row < column.len()).then(|| column.datum(row))
    }

    /// Writes each repeated column's value on every row.
    pub fn spell_out(&mut self) {
        for (column, repeated) in self.columns.iter_mut().zip(&mut self.repeated) {
            if std::mem::take(repeated) {
                *column = column.repeat_first(self.rows);
            }
        }
    }
}

/// The decoded messages of one channel since the last take.
#[derive(Debug, Clone)]
pub struct TopicBatch {
    pub plan: Arc<ChannelPlan>,
    /// Every table of the layout, in layout order (some may have 0 rows).
    pub tables: Vec<TableBatch>,
    pub blobs: Vec<BlobRef>,
    pub messages: usize,
    /// Strings whose invalid UTF-8 or NUL bytes were replaced by U+FFFD.
    pub repaired_strings: u64,
}

/// One channel's builders.
#[derive(Debug)]
struct TopicColumns {
    plan: Arc<ChannelPlan>,
    tables: Vec<TableColumns>,
    blobs: Vec<BlobRef>,
    messages: usize,
    repaired_strings: u64,
    /// Row counts before the current message (reused).
    rows_before: Vec<usize>,
    /// Payload bytes decoded since the last take (see `BYTES_CHECK_AFTER`).
    payload_bytes: usize,
}

/// A bytes column's offsets are 32-bit: once this many payload bytes are
/// in a batch (an int8 sequence can grow 6-fold as smallint[]), every
/// message checks that no bytes column passed 4 GiB.
const BYTES_CHECK_AFTER: usize = (u32::MAX / 8) as usize;

impl TopicColumns {
    fn new(plan: Arc<ChannelPlan>) -> Self {
        let tables = plan.layout.tables.iter().map(TableColumns::new).collect();
        TopicColumns {
            plan,
            tables,
            blobs: Vec::new(),
            messages: 0,
            repaired_strings: 0,
            rows_before: Vec::new(),
            payload_bytes: 0,
        }
    }

    fn decode(
        &mut self,
        msg: &MessageRecord<'_>,
        at: Location,
        recording: &[u8],
        blob_threshold: Option<usize>,
    ) -> McapResult<()> {
        let time = |v: u64, field: &str| {
            i64::try_from(v).map_err(|_| McapError::Message {
                field: field.to_string(),
                offset: 0,
                detail: format!("the record's {field} {v} is out of range for timestamptz"),
            })
        };
        let plan = &self.plan;
        let ctx = MessageCtx {
            recording,
            log_time: time(msg.log_time, "log_time")
                .map_err(|e| e.in_channel(at, plan.channel_id, &plan.topic))?,
            publish_time: time(msg.publish_time, "publish_time")
                .map_err(|e| e.in_channel(at, plan.channel_id, &plan.topic))?,
            sequence: msg.sequence as i64,
            payload_file_offset: msg.data_file_offset,
            payload_in_chunk: match at {
                Location::InChunk { chunk, offset } => Some((chunk, offset + MESSAGE_PAYLOAD_OFFSET)),
                Location::File(_) => None,
            },
        };
        self.rows_before.clear();
        self.rows_before.extend(self.tables.iter().map(|t| t.rows));
        let blobs_before = self.blobs.len();
        let result = match &plan.compiled.decoder {
            MessageDecoder::Cdr(program) => {
                let mut out = DecodeOut {
                    blob_threshold,
                    blobs: &mut self.blobs,
                    repaired_strings: 0,
                };
                let r = program.decode(msg.data, &ctx, &mut self.tables, &mut out);
                self.repaired_strings += out.repaired_strings;
                r.map_err(|f| cdr_error(program, f, msg.data.len()))
            }
            MessageDecoder::Json(program) => program.decode(
                msg.data,
                &ctx,
                &mut self.tables[0],
                &mut self.repaired_strings,
            ),
            MessageDecoder::Raw => {
                let t = &mut self.tables[0];
                push_leading(t, &ctx);
                match blob_threshold {
                    Some(limit) if msg.data.len() > limit => {
                        t.bytes[1].push(&[]);
                        self.blobs.push(BlobRef {
                            table: 0,
                            column: 4,
                            row: t.rows,
                            offset: 0,
                            len: msg.data.len(),
                            file_offset: msg.data_file_offset,
                            in_chunk: ctx.payload_in_chunk,
                        });
                    }
                    _ => t.bytes[1].push(msg.data),
                }
                t.rows += 1;
                Ok(())
            }
        };
        self.payload_bytes += msg.data.len();
        let result = result.and_then(|()| {
            let overfull = self.payload_bytes > BYTES_CHECK_AFTER
                && self
                    .tables
                    .iter()
                    .any(|t| t.largest_bytes_column() > u32::MAX as usize);
            if overfull {
                return Err(McapError::TooLarge {
                    at,
                    what: "the batch of one topic (take batches sooner)",
                    size: self.payload_bytes as u64,
                    limit: u32::MAX as u64,
                });
            }
            Ok(())
        });
        match result {
            Ok(()) => {
                self.messages += 1;
                Ok(())
            }
            Err(e) => {
                for (t, &rows) in self.tables.iter_mut().zip(&self.rows_before) {
                    t.truncate(rows);
                }
                self.blobs.truncate(blobs_before);
                Err(e.in_channel(at, plan.channel_id, &plan.topic))
            }
        }
    }

    fn rows(&self) -> usize {
        self.tables.iter().map(|t| t.rows).sum()
    }

    fn take(&mut self) -> TopicBatch {
        let tables = self
            .tables
            .iter_mut()
            .zip(&self.plan.layout.tables)
            .enumerate()
            .map(|(i, (t, layout))| {
                let rows = t.rows;
                let (columns, repeated) = t.take(layout);
                TableBatch {
                    table: i,
                    rows,
                    columns,
                    repeated,
                }
            })
            .collect();
        let batch = TopicBatch {
            plan: self.plan.clone(),
            tables,
            blobs: std::mem::take(&mut self.blobs),
            messages: self.messages,
            repaired_strings: self.repaired_strings,
        };
        self.messages = 0;
        self.repaired_strings = 0;
        self.payload_bytes = 0;
        batch
    }
}

fn cdr_error(program: &Program, f: Fail, payload_len: usize) -> McapError {
    let field = program.field_path(f.op, f.field as usize).to_string();
    match f.kind {
        FailKind::Overflow(value) => McapError::Overflow { field, value },
        FailKind::Short { need } => McapError::Message {
            field,
            offset: f.offset,
            detail: format!(
                "the message ({payload_len} bytes) is shorter than its schema says: this field needs {need} bytes here"
            ),
        },
        FailKind::Count { count, left } => McapError::Message {
            field,
            offset: f.offset,
            detail: format!(
                "sequence length {count} does not fit in the {left} bytes left in the message"
            ),
        },
        FailKind::Encapsulation(kind) => McapError::Message {
            field,
            offset: 0,
            detail: format!(
                "CDR encapsulation {:02x} {:02x} ({}) is not supported: only plain CDR, little- or big-endian (00 01, 00 00)",
                kind[0],
                kind[1],
                match kind {
                    [0, 2] => "PL_CDR_BE",
                    [0, 3] => "PL_CDR_LE",
                    [0, 6] | [0, 7] => "XCDR2 plain",
                    [0, 8] | [0, 9] => "XCDR2 delimited",
                    [0, 10] | [0, 11] => "XCDR2 parameter list",
                    _ => "unknown",
                }
            ),
        },
    }
}

/// Decodes messages into per-topic column batches. One per worker: give
/// each a clone of the [`Channels`] read from the summary (chunk-internal
/// Schema and Channel records then only confirm what is known), or, for a
/// linear read, start empty and let [`record`](Self::record) register them
/// in file order.
#[derive(Debug)]
pub struct Decoder {
    channels: Channels,
    recording: Vec<u8>,
    blob_threshold: Option<usize>,
    topics: Vec<TopicColumns>,
    /// Channel id → index into `topics` + 1 (0 = none yet), directly for
    /// the small ids writers hand out, hashed above [`DIRECT_CHANNEL_IDS`].
    by_channel: Vec<u32>,
    by_large_channel: HashMap<u16, u32>,
    /// See [`Decoder::cut_batches_at`].
    batch_limit: Option<(usize, usize)>,
    /// Batches cut at the limit, in the order they were cut.
    ready: Vec<TopicBatch>,
}

/// Channel ids below this are looked up in a vector.
const DIRECT_CHANNEL_IDS: usize = 1024;

impl Decoder {
    pub fn new(channels: Channels) -> Self {
        let recording = channels.options.recording.as_bytes().to_vec();
        let blob_threshold = channels.options.blob_threshold;
        Decoder {
            channels,
            recording,
            blob_threshold,
            topics: Vec::new(),
            by_channel: Vec::new(),
            by_large_channel: HashMap::new(),
            batch_limit: None,
            ready: Vec::new(),
        }
    }

    /// Cuts a topic's batch as soon as one of its tables holds `rows` rows
    /// or the topic `bytes` bytes (checked every 64 rows), instead of
    /// letting it grow until the next take: batches the size of a memtable
    /// block are stored without being copied into blocks.
    pub fn cut_batches_at(&mut self, rows: usize, bytes: usize) {
        self.batch_limit = Some((rows.max(1), bytes.max(1)));
    }

    pub fn channels(&self) -> &Channels {
        &self.channels
    }

    /// Handles one record: Schema and Channel records are registered,
    /// messages decoded; everything else is the caller's (or ignored).
    pub fn record(&mut self, rec: &RecordAt<'_>) -> McapResult<()> {
        match &rec.record {
            Record::Message(m) => self.message(m, rec.at),
            Record::Schema(s) => self.channels.add_schema(s, rec.at),
            Record::Channel(c) => self.channels.add_channel(c, rec.at).map(|_| ()),
            _ => Ok(()),
        }
    }

    /// Decodes one message onto its channel's builders. On error nothing of
    /// the message remains.
    pub fn message(&mut self, msg: &MessageRecord<'_>, at: Location) -> McapResult<()> {
        let id = msg.channel_id as usize;
        let mut slot = match self.by_channel.get(id) {
            Some(&s) => s,
            None if id < DIRECT_CHANNEL_IDS => 0,
            None => self
                .by_large_channel
                .get(&msg.channel_id)
                .copied()
                .unwrap_or(0),
        };
        if slot == 0 {
            let plan = self.channels.channel(msg.channel_id).cloned().ok_or(
                McapError::UnknownChannel {
                    at,
                    channel_id: msg.channel_id,
                },
            )?;
            self.topics.push(TopicColumns::new(plan));
            slot = self.topics.len() as u32;
            if id < DIRECT_CHANNEL_IDS {
                if self.by_channel.len() <= id {
                    self.by_channel.resize(id + 1, 0);
                }
                self.by_channel[id] = slot;
            } else {
                self.by_large_channel.insert(msg.channel_id, slot);
            }
        }
        let topic = &mut self.topics[slot as usize - 1];
        topic.decode(msg, at, &self.recording, self.blob_threshold)?;
        if let Some((rows, bytes)) = self.batch_limit {
            let full = topic.tables.iter().any(|t| t.rows >= rows)
                || (topic.tables[0].rows.is_multiple_of(64) && topic.tables.iter().map(|t| t.byte_size()).sum::<usize>() >= bytes);
            if full {
                self.ready.push(topic.take());
            }
        }
        Ok(())
    }

    /// Rows buffered across all topics and tables.
    pub fn buffered_rows(&self) -> usize {
        let ready: usize = self.ready.iter().flat_map(|b| &b.tables).map(|t| t.rows).sum();
        ready + self.topics.iter().map(|t| t.rows()).sum::<usize>()
    }

    /// Bytes buffered across all topics (flush before a bytes column nears
    /// 4 GiB: offsets are 32-bit).
    pub fn buffered_bytes(&self) -> usize {
        let ready: usize = self.ready.iter().flat_map(|b| &b.tables).flat_map(|t| &t.columns).map(|c| c.byte_size()).sum();
        ready + self
            .topics
            .iter()
            .flat_map(|t| &t.tables)
            .map(|t| t.byte_size())
            .sum::<usize>()
    }

    /// Takes the batches of every topic that has decoded messages since
    /// the last take.
    pub fn take_batches(&mut self) -> Vec<TopicBatch> {
        self.take_batches_over(1, 1)
    }

    /// Takes the batches of topics holding at least `min_rows` rows or
    /// `min_bytes` bytes (all tables counted). Sized like a memtable block,
    /// a batch is stored as one without being copied.
    pub fn take_batches_over(&mut self, min_rows: usize, min_bytes: usize) -> Vec<TopicBatch> {
        let mut out = std::mem::take(&mut self.ready);
        let rest = self
            .topics
            .iter_mut()
            .filter(|t| {
                t.messages > 0
                    && (t.rows() >= min_rows.max(1) || t.tables.iter().map(|t| t.byte_size()).sum::<usize>() >= min_bytes)
            })
            .map(|t| t.take());
        out.extend(rest);
        out
    }
}
