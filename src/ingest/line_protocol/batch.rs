//! The per-measurement column batches line protocol parses into: one tag
//! column per tag key, one typed field column per field key, the time and
//! line-number columns, all exactly `rows` long (NULL where a line lacks the
//! column, back-filled when a column first appears), plus the private
//! index the parser uses to find a column without hashing.
//! Must not: parse bytes or decide whether a line is valid; it only appends
//! lines the parser has accepted whole.

use hashbrown::HashMap;

use super::scan::{
    append_bytes, class, unescape_name_into, unescape_string_into, KeyMatcher, NOT_PLAIN_IN_KEY,
    NOT_PLAIN_IN_MEASUREMENT,
};
use super::{null_bytes, null_field_data, null_validity, FieldKind};
use crate::exec::vector::{Bitmap, BytesColumn, ColumnData};

/// One tag key's values (text; NULL where a line lacks the tag).
#[derive(Debug, Clone, PartialEq)]
pub struct TagColumn {
    pub key: String,
    pub values: BytesColumn,
    pub validity: Bitmap,
}

/// One field key's values. `data` is `Float64` (float), `Int64` (integer
/// and unsigned), `Bool` (boolean) or `Bytes` (string).
#[derive(Debug, Clone, PartialEq)]
pub struct FieldColumn {
    pub key: String,
    pub kind: FieldKind,
    pub data: ColumnData,
    pub validity: Bitmap,
}

/// The accepted lines of one measurement, as columns.
#[derive(Debug, Clone)]
pub struct MeasurementBatch {
    pub name: String,
    pub rows: usize,
    /// Nanoseconds since the Unix epoch.
    pub time: Vec<i64>,
    /// The line number each row came from.
    pub line_numbers: Vec<u64>,
    pub tags: Vec<TagColumn>,
    pub fields: Vec<FieldColumn>,
    pub(super) index: BatchIndex,
}

/// Where a key lives in a batch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Slot {
    Tag(u32),
    Field(u32),
    /// Not in the batch (or no batch yet).
    New,
}

/// What the parser keeps beside a batch to find columns fast.
#[derive(Debug, Clone, Default)]
pub(super) struct BatchIndex {
    pub by_key: HashMap<Box<[u8]>, Slot>,
    pub tag_meta: Vec<ColumnMeta>,
    pub field_meta: Vec<ColumnMeta>,
    /// The last accepted line's tags and fields, by position: a line whose
    /// i-th key matches entry i in place needs no scan and no hash.
    pub tag_pos: Vec<Option<PositionEntry>>,
    pub field_pos: Vec<Option<PositionEntry>>,
    /// The name, when it is spelled on the wire as it is.
    pub name_matcher: Option<KeyMatcher>,
    /// Columns whose `validity` is explicit (not `lazy_valid`).
    pub non_lazy: usize,
    /// At least the byte length of any text column (each row adds at most
    /// its line's length to a column): while this stays below `u32::MAX`,
    /// no offset can overflow and no per-value check is needed.
    pub text_bound: usize,
}

/// One position of the position caches: `key=`, its column and (fields)
/// the column's kind.
#[derive(Debug, Clone, Copy)]
pub(super) struct PositionEntry {
    pub matcher: KeyMatcher,
    pub slot: u32,
    pub kind: FieldKind,
}

#[derive(Debug, Clone)]
pub(super) struct ColumnMeta {
    /// Matches `key=` in place, when the key needs no escaping and is short.
    pub matcher: Option<KeyMatcher>,
    /// No NULL so far: `validity` holds only set bits and may lag behind the
    /// values (filled in by `sync_validity`).
    pub lazy_valid: bool,
}

impl ColumnMeta {
    fn new(key: &str, lazy_valid: bool) -> Self {
        let plain = key.bytes().all(|c| class(c) & NOT_PLAIN_IN_KEY == 0);
        let matcher = if plain && key.len() < KeyMatcher::MAX_LEN {
            let mut k = [0u8; KeyMatcher::MAX_LEN];
            k[..key.len()].copy_from_slice(key.as_bytes());
            k[key.len()] = b'=';
            KeyMatcher::new(&k[..key.len() + 1])
        } else {
            None
        };
        ColumnMeta {
            matcher,
            lazy_valid,
        }
    }
}

fn name_matcher(name: &str) -> Option<KeyMatcher> {
    if name
        .bytes()
        .all(|c| class(c) & NOT_PLAIN_IN_MEASUREMENT == 0)
    {
        KeyMatcher::new(name.as_bytes())
    } else {
        None
    }
}

/// A parsed field value, borrowing string bodies from the input.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum FieldValue<'a> {
    Float(f64),
    Integer(i64),
    Unsigned(u64),
    Boolean(bool),
    Str { raw: &'a [u8], escaped: bool },
}

impl FieldValue<'_> {
    pub fn kind(&self) -> FieldKind {
        match self {
            FieldValue::Float(_) => FieldKind::Float,
            FieldValue::Integer(_) => FieldKind::Integer,
            FieldValue::Unsigned(_) => FieldKind::Unsigned,
            FieldValue::Boolean(_) => FieldKind::Boolean,
            FieldValue::Str { .. } => FieldKind::String,
        }
    }
}

/// Extends a bitmap whose bits are all set to `to` set bits; rebuilds it
/// when that at least doubles it, so the cost per bit stays constant.
fn extend_set(bitmap: &mut Bitmap, to: usize) {
    let have = bitmap.len();
    if have >= to {
        return;
    }
    if to - have >= have {
        *bitmap = Bitmap::new_set(to);
    } else {
        for _ in have..to {
            bitmap.push(true);
        }
    }
}

fn field_data_len(data: &ColumnData) -> usize {
    safe_len(data).unwrap_or(0)
}

/// A column's length without trusting a caller-edited `BytesColumn`.
fn safe_len(data: &ColumnData) -> Option<usize> {
    match data {
        ColumnData::Bytes(b) => b.offsets.len().checked_sub(1),
        d => Some(d.len()),
    }
}

/// Value `i` of a possibly caller-edited `BytesColumn`, if it is well formed.
fn bytes_at(col: &BytesColumn, i: usize) -> Option<&[u8]> {
    let start = *col.offsets.get(i)? as usize;
    let end = *col.offsets.get(i + 1)? as usize;
    col.data.get(start..end)
}

fn data_matches_kind(data: &ColumnData, kind: FieldKind) -> bool {
    matches!(
        (data, kind),
        (ColumnData::Float64(_), FieldKind::Float)
            | (
                ColumnData::Int64(_),
                FieldKind::Integer | FieldKind::Unsigned
            )
            | (ColumnData::Bool(_), FieldKind::Boolean)
            | (ColumnData::Bytes(_), FieldKind::String)
    )
}

/// Appends a tag value's bytes (no validity bit).
#[inline(always)]
pub(super) fn push_tag_value(
    col: &mut TagColumn,
    input: &[u8],
    at: usize,
    len: usize,
    escaped: bool,
) {
    if escaped {
        unescape_name_into(input.get(at..at + len).unwrap_or(&[]), &mut col.values.data);
    } else {
        append_bytes(&mut col.values.data, input, at, len);
    }
    col.values.offsets.push(col.values.data.len() as u32);
}

/// Appends a field value (no validity bit); false if the column holds
/// another kind (nothing appended then).
#[inline(always)]
pub(super) fn push_field_value(col: &mut FieldColumn, value: &FieldValue<'_>) -> bool {
    match (&mut col.data, *value) {
        (ColumnData::Float64(d), FieldValue::Float(x)) => d.push(x),
        (ColumnData::Int64(d), FieldValue::Integer(x)) => d.push(x),
        // The parser refuses values above i64::MAX before this.
        (ColumnData::Int64(d), FieldValue::Unsigned(x)) => {
            d.push(i64::try_from(x).unwrap_or(i64::MAX))
        }
        (ColumnData::Bool(d), FieldValue::Boolean(x)) => d.push(x),
        (ColumnData::Bytes(d), FieldValue::Str { raw, escaped }) => {
            if escaped {
                unescape_string_into(raw, &mut d.data);
            } else {
                d.data.extend_from_slice(raw);
            }
            d.offsets.push(d.data.len() as u32);
        }
        _ => return false,
    }
    true
}

/// Cuts a tag column back to `rows` values (undoing an optimistic append).
pub(super) fn truncate_tag(col: &mut TagColumn, rows: usize) {
    if let Some(&end) = col.values.offsets.get(rows) {
        col.values.offsets.truncate(rows + 1);
        col.values.data.truncate(end as usize);
    }
}

/// Cuts a field column back to `rows` values.
pub(super) fn truncate_field(col: &mut FieldColumn, rows: usize) {
    match &mut col.data {
        ColumnData::Float64(d) => d.truncate(rows),
        ColumnData::Int64(d) => d.truncate(rows),
        ColumnData::Bool(d) => d.truncate(rows),
        ColumnData::Bytes(d) => {
            if let Some(&end) = d.offsets.get(rows) {
                d.offsets.truncate(rows + 1);
                d.data.truncate(end as usize);
            }
        }
        _ => {}
    }
}

impl MeasurementBatch {
    /// An empty batch, with room for about `expected_rows`.
    pub(super) fn new(name: String, expected_rows: usize) -> Self {
        MeasurementBatch {
            index: BatchIndex {
                name_matcher: name_matcher(&name),
                ..BatchIndex::default()
            },
            name,
            rows: 0,
            time: Vec::with_capacity(expected_rows),
            line_numbers: Vec::with_capacity(expected_rows),
            tags: Vec::new(),
            fields: Vec::new(),
        }
    }

    /// The tag column `key`, if any.
    pub fn tag(&self, key: &str) -> Option<&TagColumn> {
        match self.index.by_key.get(key.as_bytes()) {
            Some(Slot::Tag(s)) => self.tags.get(*s as usize),
            _ => self.tags.iter().find(|t| t.key == key),
        }
    }

    /// The field column `key`, if any.
    pub fn field(&self, key: &str) -> Option<&FieldColumn> {
        match self.index.by_key.get(key.as_bytes()) {
            Some(Slot::Field(s)) => self.fields.get(*s as usize),
            _ => self.fields.iter().find(|f| f.key == key),
        }
    }

    #[inline]
    pub(super) fn lookup(&self, key: &[u8]) -> Slot {
        self.index.by_key.get(key).copied().unwrap_or(Slot::New)
    }

    /// Restores the invariants the parser relies on (every column `rows`
    /// long and of its kind's variant, the index in step with the columns)
    /// if the caller changed the public fields between calls.
    pub(super) fn ensure_consistent(&mut self) {
        let mut repaired = false;
        if self.time.len() != self.rows || self.line_numbers.len() != self.rows {
            self.rows = self.time.len();
            self.line_numbers.resize(self.rows, 0);
            repaired = true;
        }
        let rows = self.rows;
        for t in &mut self.tags {
            let old_len = t.values.offsets.len().saturating_sub(1);
            if old_len != rows || t.validity.len() != rows {
                let mut values = null_bytes(0);
                let mut validity = Bitmap::new_unset(0);
                for i in 0..rows {
                    let value = bytes_at(&t.values, i)
                        .filter(|_| i < t.validity.len() && t.validity.get(i));
                    values.push(value.unwrap_or(&[]));
                    validity.push(value.is_some());
                }
                t.values = values;
                t.validity = validity;
                repaired = true;
            }
        }
        for f in &mut self.fields {
            if !data_matches_kind(&f.data, f.kind) {
                f.data = null_field_data(f.kind, rows);
                f.validity = null_validity(rows);
                repaired = true;
            } else if safe_len(&f.data) != Some(rows) || f.validity.len() != rows {
                // Shorter: pad with NULLs; longer: keep the first `rows`.
                let old_len = safe_len(&f.data).unwrap_or(0);
                let mut data = null_field_data(f.kind, 0);
                let mut validity = Bitmap::new_unset(0);
                for i in 0..rows {
                    let ok = i < old_len && i < f.validity.len() && f.validity.get(i);
                    match (&mut data, &f.data) {
                        (ColumnData::Float64(d), ColumnData::Float64(s)) => {
                            d.push(if ok { s[i] } else { 0.0 })
                        }
                        (ColumnData::Int64(d), ColumnData::Int64(s)) => {
                            d.push(if ok { s[i] } else { 0 })
                        }
                        (ColumnData::Bool(d), ColumnData::Bool(s)) => d.push(ok && s[i]),
                        (ColumnData::Bytes(d), ColumnData::Bytes(s)) => {
                            d.push(bytes_at(s, i).filter(|_| ok).unwrap_or(&[]))
                        }
                        _ => {}
                    }
                    validity.push(ok);
                }
                f.data = data;
                f.validity = validity;
                repaired = true;
            }
        }
        let index = &self.index;
        if repaired
            || index.tag_meta.len() != self.tags.len()
            || index.field_meta.len() != self.fields.len()
            || index.by_key.len() != self.tags.len() + self.fields.len()
        {
            self.rebuild_index();
        }
    }

    fn rebuild_index(&mut self) {
        let mut index = BatchIndex {
            name_matcher: name_matcher(&self.name),
            ..BatchIndex::default()
        };
        for (i, t) in self.tags.iter().enumerate() {
            index
                .by_key
                .entry(t.key.as_bytes().into())
                .or_insert(Slot::Tag(i as u32));
            index.tag_meta.push(ColumnMeta::new(&t.key, false));
        }
        for (i, f) in self.fields.iter().enumerate() {
            index
                .by_key
                .entry(f.key.as_bytes().into())
                .or_insert(Slot::Field(i as u32));
            index.field_meta.push(ColumnMeta::new(&f.key, false));
        }
        let text: usize = self.tags.iter().map(|t| t.values.data.len()).sum::<usize>()
            + self
                .fields
                .iter()
                .map(|f| match &f.data {
                    ColumnData::Bytes(b) => b.data.len(),
                    _ => 0,
                })
                .sum::<usize>();
        index.text_bound = text;
        index.non_lazy = self.tags.len() + self.fields.len();
        self.index = index;
    }

    /// Adds a tag column, NULL for the rows so far, with room for
    /// `more_rows` values of about `value_len` bytes.
    pub(super) fn add_tag(&mut self, key: String, more_rows: usize, value_len: usize) -> u32 {
        let slot = self.tags.len() as u32;
        self.index
            .by_key
            .insert(key.as_bytes().into(), Slot::Tag(slot));
        self.index
            .tag_meta
            .push(ColumnMeta::new(&key, self.rows == 0));
        self.index.non_lazy += usize::from(self.rows > 0);
        let mut values = null_bytes(self.rows);
        values.offsets.reserve(more_rows);
        values
            .data
            // Slack: other series' values are often a little longer (host_9, host_10).
            .reserve(more_rows.saturating_mul(value_len + value_len / 4 + 2).min(1 << 24));
        self.tags.push(TagColumn {
            key,
            values,
            validity: null_validity(self.rows),
        });
        slot
    }

    /// Adds a field column of `kind`, NULL for the rows so far, with room
    /// for `more_rows` values.
    pub(super) fn add_field(&mut self, key: String, kind: FieldKind, more_rows: usize) -> u32 {
        let slot = self.fields.len() as u32;
        self.index
            .by_key
            .insert(key.as_bytes().into(), Slot::Field(slot));
        self.index
            .field_meta
            .push(ColumnMeta::new(&key, self.rows == 0));
        self.index.non_lazy += usize::from(self.rows > 0);
        let mut data = null_field_data(kind, self.rows);
        match &mut data {
            ColumnData::Float64(v) => v.reserve(more_rows),
            ColumnData::Int64(v) => v.reserve(more_rows),
            ColumnData::Bool(v) => v.reserve(more_rows),
            ColumnData::Bytes(v) => v.offsets.reserve(more_rows),
            _ => {}
        }
        self.fields.push(FieldColumn {
            key,
            kind,
            data,
            validity: null_validity(self.rows),
        });
        slot
    }

    /// The position-cache entry for a tag or field slot (None: its key
    /// cannot be matched in place).
    pub(super) fn position_entry(&self, slot: Slot) -> Option<PositionEntry> {
        match slot {
            Slot::Tag(s) => {
                self.index
                    .tag_meta
                    .get(s as usize)?
                    .matcher
                    .map(|matcher| PositionEntry {
                        matcher,
                        slot: s,
                        kind: FieldKind::String,
                    })
            }
            Slot::Field(s) => {
                let matcher = self.index.field_meta.get(s as usize)?.matcher?;
                Some(PositionEntry {
                    matcher,
                    slot: s,
                    kind: self.fields.get(s as usize)?.kind,
                })
            }
            Slot::New => None,
        }
    }

    /// Bytes a text column of this slot already holds (offsets are u32).
    pub(super) fn tag_bytes(&self, slot: u32) -> usize {
        self.tags[slot as usize].values.data.len()
    }

    pub(super) fn field_bytes(&self, slot: u32) -> usize {
        match &self.fields[slot as usize].data {
            ColumnData::Bytes(b) => b.data.len(),
            _ => 0,
        }
    }

    /// Appends tag value `input[at..at + len]` (unescaping it if `escaped`).
    #[inline]
    pub(super) fn push_tag(
        &mut self,
        slot: u32,
        input: &[u8],
        at: usize,
        len: usize,
        escaped: bool,
    ) {
        let col = &mut self.tags[slot as usize];
        push_tag_value(col, input, at, len, escaped);
        if !self.index.tag_meta[slot as usize].lazy_valid {
            col.validity.push(true);
        }
    }

    #[inline]
    pub(super) fn push_field(&mut self, slot: u32, value: &FieldValue<'_>) {
        let col = &mut self.fields[slot as usize];
        if !push_field_value(col, value) {
            // Kinds are checked before appending; never store a wrong value.
            self.push_field_null(slot);
        } else if !self.index.field_meta[slot as usize].lazy_valid {
            col.validity.push(true);
        }
    }

    fn push_tag_null(&mut self, slot: usize) {
        let col = &mut self.tags[slot];
        let meta = &mut self.index.tag_meta[slot];
        let len = col.values.len();
        if meta.lazy_valid {
            extend_set(&mut col.validity, len);
            meta.lazy_valid = false;
            self.index.non_lazy += 1;
        }
        col.values.offsets.push(col.values.data.len() as u32);
        col.validity.push(false);
    }

    fn push_field_null(&mut self, slot: u32) {
        let slot = slot as usize;
        let col = &mut self.fields[slot];
        let meta = &mut self.index.field_meta[slot];
        let len = field_data_len(&col.data);
        if meta.lazy_valid {
            extend_set(&mut col.validity, len);
            meta.lazy_valid = false;
            self.index.non_lazy += 1;
        }
        match &mut col.data {
            ColumnData::Float64(d) => d.push(0.0),
            ColumnData::Int64(d) => d.push(0),
            ColumnData::Bool(d) => d.push(false),
            ColumnData::Bytes(d) => d.offsets.push(d.data.len() as u32),
            // Other variants are replaced by `ensure_consistent`.
            _ => {}
        }
        col.validity.push(false);
    }

    /// Ends a row: columns the line did not write get a NULL. `written` is
    /// how many distinct columns it wrote.
    #[inline]
    pub(super) fn finish_row(&mut self, time: i64, line: u64, written: usize) {
        let rows = self.rows;
        if written != self.tags.len() + self.fields.len() {
            for i in 0..self.tags.len() {
                if self.tags[i].values.len() == rows {
                    self.push_tag_null(i);
                }
            }
            for i in 0..self.fields.len() {
                if field_data_len(&self.fields[i].data) == rows {
                    self.push_field_null(i as u32);
                }
            }
        }
        self.time.push(time);
        self.line_numbers.push(line);
        self.rows += 1;
    }

    /// Brings the lazily kept validity bitmaps up to `rows`.
    pub(super) fn sync_validity(&mut self) {
        let rows = self.rows;
        for (t, meta) in self.tags.iter_mut().zip(&self.index.tag_meta) {
            if meta.lazy_valid {
                extend_set(&mut t.validity, rows);
            }
        }
        for (f, meta) in self.fields.iter_mut().zip(&self.index.field_meta) {
            if meta.lazy_valid {
                extend_set(&mut f.validity, rows);
            }
        }
    }
}
