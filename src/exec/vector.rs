//! Column vectors and batches: the unit of data every operator and kernel
//! works on. A `Column` is one typed, contiguous array plus an optional
//! validity bitmap (absent = no NULLs); a `Batch` is up to `BATCH_ROWS` rows
//! of equal-length columns shared by `Arc`, so scans hand out memtable blocks
//! without copying.
//! Must not: interpret SQL, or loop over `Datum`s on a hot path (`Datum`
//! accessors here exist for constants, results and tests).

use std::sync::Arc;

use crate::types::{DataType, Datum, Interval, Numeric, PhysicalType};

/// Rows per batch handed between operators.
pub const BATCH_ROWS: usize = 2048;

/// A validity (or selection) bitmap: bit i set = row i is valid (not NULL).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Bitmap {
    words: Vec<u64>,
    len: usize,
}

impl Bitmap {
    pub fn new_set(len: usize) -> Self {
        let mut words = vec![u64::MAX; len.div_ceil(64)];
        if !len.is_multiple_of(64) {
            if let Some(last) = words.last_mut() {
                *last = (1u64 << (len % 64)) - 1;
            }
        }
        Bitmap { words, len }
    }
    pub fn new_unset(len: usize) -> Self {
        Bitmap {
            words: vec![0; len.div_ceil(64)],
            len,
        }
    }
    pub fn from_bools(bits: &[bool]) -> Self {
        let mut b = Bitmap::new_unset(bits.len());
        for (i, &v) in bits.iter().enumerate() {
            if v {
                b.set(i);
            }
        }
        b
    }
    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    #[inline]
    pub fn get(&self, i: usize) -> bool {
        debug_assert!(i < self.len);
        (self.words[i >> 6] >> (i & 63)) & 1 == 1
    }
    #[inline]
    pub fn set(&mut self, i: usize) {
        self.words[i >> 6] |= 1 << (i & 63);
    }
    #[inline]
    pub fn unset(&mut self, i: usize) {
        self.words[i >> 6] &= !(1 << (i & 63));
    }
    pub fn push(&mut self, v: bool) {
        if self.len.is_multiple_of(64) {
            self.words.push(0);
        }
        self.len += 1;
        if v {
            self.set(self.len - 1);
        }
    }
    pub fn words(&self) -> &[u64] {
        &self.words
    }
    pub fn count_set(&self) -> usize {
        self.words.iter().map(|w| w.count_ones() as usize).sum()
    }
    pub fn all_set(&self) -> bool {
        self.count_set() == self.len
    }
    /// Bitwise AND of two equal-length bitmaps.
    pub fn and(&self, other: &Bitmap) -> Bitmap {
        debug_assert_eq!(self.len, other.len);
        Bitmap {
            words: self
                .words
                .iter()
                .zip(&other.words)
                .map(|(a, b)| a & b)
                .collect(),
            len: self.len,
        }
    }
    /// Bits `[offset, offset + len)`.
    pub fn slice(&self, offset: usize, len: usize) -> Bitmap {
        assert!(offset + len <= self.len, "bitmap slice out of range");
        let (first, shift) = (offset / 64, offset % 64);
        let mut words: Vec<u64> = (0..len.div_ceil(64))
            .map(|w| {
                let lo = self.words[first + w] >> shift;
                let hi = match (shift, self.words.get(first + w + 1)) {
                    (0, _) | (_, None) => 0,
                    (_, Some(next)) => next << (64 - shift),
                };
                lo | hi
            })
            .collect();
        if !len.is_multiple_of(64) {
            if let Some(last) = words.last_mut() {
                *last &= (1u64 << (len % 64)) - 1;
            }
        }
        Bitmap { words, len }
    }
    pub fn extend_from(&mut self, other: &Bitmap) {
        for i in 0..other.len {
            self.push(other.get(i));
        }
    }
}

/// Variable-length values (text, varchar, bpchar, bytea, jsonb): one byte
/// buffer and `len + 1` offsets into it.
#[derive(Debug, Clone, PartialEq)]
pub struct BytesColumn {
    pub offsets: Vec<u32>,
    pub data: Vec<u8>,
}

impl Default for BytesColumn {
    fn default() -> Self {
        BytesColumn {
            offsets: vec![0],
            data: Vec::new(),
        }
    }
}

impl BytesColumn {
    pub fn with_capacity(rows: usize, bytes: usize) -> Self {
        let mut offsets = Vec::with_capacity(rows + 1);
        offsets.push(0);
        BytesColumn {
            offsets,
            data: Vec::with_capacity(bytes),
        }
    }
    #[inline]
    pub fn len(&self) -> usize {
        self.offsets.len() - 1
    }
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    #[inline]
    pub fn get(&self, i: usize) -> &[u8] {
        &self.data[self.offsets[i] as usize..self.offsets[i + 1] as usize]
    }
    /// The value as UTF-8 text; text columns only ever hold valid UTF-8.
    #[inline]
    pub fn get_str(&self, i: usize) -> &str {
        std::str::from_utf8(self.get(i)).unwrap_or("")
    }
    #[inline]
    pub fn push(&mut self, v: &[u8]) {
        self.data.extend_from_slice(v);
        self.offsets.push(self.data.len() as u32);
    }
    pub fn iter(&self) -> impl Iterator<Item = &[u8]> + '_ {
        (0..self.len()).map(move |i| self.get(i))
    }
    /// `value` on each of `rows` rows.
    pub fn repeat(value: &[u8], rows: usize) -> Self {
        let mut out = BytesColumn::with_capacity(rows, rows * value.len());
        out.push_repeated(value, rows);
        out
    }
    /// Appends `value` on each of `rows` more rows.
    pub fn push_repeated(&mut self, value: &[u8], rows: usize) {
        self.data.reserve(rows * value.len());
        self.offsets.reserve(rows);
        for _ in 0..rows {
            self.push(value);
        }
    }
}

/// The values of a column, by physical type.
#[derive(Debug, Clone, PartialEq)]
pub enum ColumnData {
    Bool(Vec<bool>),
    Int16(Vec<i16>),
    Int32(Vec<i32>),
    Int64(Vec<i64>),
    Float32(Vec<f32>),
    Float64(Vec<f64>),
    Numeric(Vec<Numeric>),
    Bytes(BytesColumn),
    Interval(Vec<Interval>),
}

impl ColumnData {
    pub fn with_capacity(physical: PhysicalType, rows: usize) -> ColumnData {
        match physical {
            PhysicalType::Bool => ColumnData::Bool(Vec::with_capacity(rows)),
            PhysicalType::Int16 => ColumnData::Int16(Vec::with_capacity(rows)),
            PhysicalType::Int32 => ColumnData::Int32(Vec::with_capacity(rows)),
            PhysicalType::Int64 => ColumnData::Int64(Vec::with_capacity(rows)),
            PhysicalType::Float32 => ColumnData::Float32(Vec::with_capacity(rows)),
            PhysicalType::Float64 => ColumnData::Float64(Vec::with_capacity(rows)),
            PhysicalType::Numeric => ColumnData::Numeric(Vec::with_capacity(rows)),
            PhysicalType::Bytes => ColumnData::Bytes(BytesColumn::with_capacity(rows, rows * 8)),
            PhysicalType::Interval => ColumnData::Interval(Vec::with_capacity(rows)),
        }
    }
    pub fn len(&self) -> usize {
        match self {
            ColumnData::Bool(v) => v.len(),
            ColumnData::Int16(v) => v.len(),
            ColumnData::Int32(v) => v.len(),
            ColumnData::Int64(v) => v.len(),
            ColumnData::Float32(v) => v.len(),
            ColumnData::Float64(v) => v.len(),
            ColumnData::Numeric(v) => v.len(),
            ColumnData::Bytes(v) => v.len(),
            ColumnData::Interval(v) => v.len(),
        }
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// One column vector: a SQL type, its values, and which are NULL.
/// Slots that are NULL hold a default value (0, empty) so kernels can run
/// branch-free over all slots and apply validity afterwards.
#[derive(Debug, Clone, PartialEq)]
pub struct Column {
    pub data_type: DataType,
    pub data: ColumnData,
    /// `None` = every value is valid.
    pub validity: Option<Bitmap>,
}

pub type ColumnRef = Arc<Column>;

impl Column {
    pub fn new(data_type: DataType, data: ColumnData, validity: Option<Bitmap>) -> Column {
        debug_assert!(validity.as_ref().is_none_or(|v| v.len() == data.len()));
        Column {
            data_type,
            data,
            validity,
        }
    }
    pub fn empty(data_type: DataType) -> Column {
        Column::with_capacity(data_type, 0)
    }
    /// A variable-length column kept as one value (an MCAP batch's or a
    /// memtable block's repeated covariance array) spelled out on `rows` rows.
    /// Such a column holds one value and no NULLs.
    pub fn repeat_first(&self, rows: usize) -> Column {
        let ColumnData::Bytes(one) = &self.data else {
            unreachable!("only variable-length columns are kept as one value")
        };
        Column::new(self.data_type, ColumnData::Bytes(BytesColumn::repeat(one.get(0), rows)), None)
    }
    pub fn with_capacity(data_type: DataType, rows: usize) -> Column {
        Column {
            data_type,
            data: ColumnData::with_capacity(data_type.physical(), rows),
            validity: None,
        }
    }
    #[inline]
    pub fn len(&self) -> usize {
        self.data.len()
    }
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    #[inline]
    pub fn is_valid(&self, i: usize) -> bool {
        self.validity.as_ref().is_none_or(|v| v.get(i))
    }
    pub fn null_count(&self) -> usize {
        self.validity
            .as_ref()
            .map_or(0, |v| v.len() - v.count_set())
    }

    /// `value` (NULL allowed) repeated `len` times (a constant operand, a NULL column):
    /// the one value converted once, then its slot copied.
    pub fn from_datum(data_type: DataType, value: &Datum, len: usize) -> Column {
        if len == 0 {
            return Column::with_capacity(data_type, 0);
        }
        let mut one = Column::with_capacity(data_type, 1);
        one.push_datum(value);
        let data = match &one.data {
            ColumnData::Bool(v) => ColumnData::Bool(vec![v[0]; len]),
            ColumnData::Int16(v) => ColumnData::Int16(vec![v[0]; len]),
            ColumnData::Int32(v) => ColumnData::Int32(vec![v[0]; len]),
            ColumnData::Int64(v) => ColumnData::Int64(vec![v[0]; len]),
            ColumnData::Float32(v) => ColumnData::Float32(vec![v[0]; len]),
            ColumnData::Float64(v) => ColumnData::Float64(vec![v[0]; len]),
            ColumnData::Numeric(v) => ColumnData::Numeric(vec![v[0]; len]),
            ColumnData::Interval(v) => ColumnData::Interval(vec![v[0]; len]),
            ColumnData::Bytes(b) => {
                let v = b.get(0);
                let mut out = BytesColumn::with_capacity(len, v.len() * len);
                for _ in 0..len {
                    out.push(v);
                }
                ColumnData::Bytes(out)
            }
        };
        let validity = (!one.is_valid(0)).then(|| Bitmap::new_unset(len));
        Column::new(data_type, data, validity)
    }

    pub fn from_datums(data_type: DataType, values: &[Datum]) -> Column {
        let mut c = Column::with_capacity(data_type, values.len());
        for v in values {
            c.push_datum(v);
        }
        c
    }

    /// Appends one value; a `Datum` of the wrong physical kind appends NULL
    /// (the binder guarantees kinds match, so this only guards bugs).
    pub fn push_datum(&mut self, value: &Datum) {
        let row = self.len();
        let ok = match (&mut self.data, value) {
            (_, Datum::Null) => false,
            (ColumnData::Bool(v), Datum::Bool(x)) => {
                v.push(*x);
                true
            }
            (ColumnData::Int16(v), Datum::Int16(x)) => {
                v.push(*x);
                true
            }
            (ColumnData::Int32(v), Datum::Int32(x)) => {
                v.push(*x);
                true
            }
            (ColumnData::Int64(v), Datum::Int64(x)) => {
                v.push(*x);
                true
            }
            (ColumnData::Float32(v), Datum::Float32(x)) => {
                v.push(*x);
                true
            }
            (ColumnData::Float64(v), Datum::Float64(x)) => {
                v.push(*x);
                true
            }
            (ColumnData::Numeric(v), Datum::Numeric(x)) => {
                v.push(*x);
                true
            }
            (ColumnData::Bytes(v), Datum::Bytes(x)) => {
                v.push(x);
                true
            }
            (ColumnData::Interval(v), Datum::Interval(x)) => {
                v.push(*x);
                true
            }
            _ => false,
        };
        if !ok {
            self.push_default();
            let validity = self.validity.get_or_insert_with(|| Bitmap::new_set(row));
            validity.push(false);
        } else if let Some(validity) = &mut self.validity {
            validity.push(true);
        }
    }

    /// Appends a NULL.
    pub fn push_null(&mut self) {
        self.push_datum(&Datum::Null);
    }

    fn push_default(&mut self) {
        match &mut self.data {
            ColumnData::Bool(v) => v.push(false),
            ColumnData::Int16(v) => v.push(0),
            ColumnData::Int32(v) => v.push(0),
            ColumnData::Int64(v) => v.push(0),
            ColumnData::Float32(v) => v.push(0.0),
            ColumnData::Float64(v) => v.push(0.0),
            ColumnData::Numeric(v) => v.push(Numeric::ZERO),
            ColumnData::Bytes(v) => v.push(&[]),
            ColumnData::Interval(v) => v.push(Interval::default()),
        }
    }

    /// The value at row `i` as a `Datum` (for results, constants and tests).
    pub fn datum(&self, i: usize) -> Datum {
        if !self.is_valid(i) {
            return Datum::Null;
        }
        match &self.data {
            ColumnData::Bool(v) => Datum::Bool(v[i]),
            ColumnData::Int16(v) => Datum::Int16(v[i]),
            ColumnData::Int32(v) => Datum::Int32(v[i]),
            ColumnData::Int64(v) => Datum::Int64(v[i]),
            ColumnData::Float32(v) => Datum::Float32(v[i]),
            ColumnData::Float64(v) => Datum::Float64(v[i]),
            ColumnData::Numeric(v) => Datum::Numeric(v[i]),
            ColumnData::Bytes(v) => Datum::Bytes(v.get(i).to_vec()),
            ColumnData::Interval(v) => Datum::Interval(v[i]),
        }
    }

    /// Appends all rows of `other` (same physical type).
    pub fn extend(&mut self, other: &Column) {
        self.extend_range(other, 0, other.len());
    }

    /// Appends rows `offset..offset + len` of `other` (same physical type).
    pub fn extend_range(&mut self, other: &Column, offset: usize, len: usize) {
        let before = self.len();
        let range = offset..offset + len;
        match (&mut self.data, &other.data) {
            (ColumnData::Bool(a), ColumnData::Bool(b)) => a.extend_from_slice(&b[range]),
            (ColumnData::Int16(a), ColumnData::Int16(b)) => a.extend_from_slice(&b[range]),
            (ColumnData::Int32(a), ColumnData::Int32(b)) => a.extend_from_slice(&b[range]),
            (ColumnData::Int64(a), ColumnData::Int64(b)) => a.extend_from_slice(&b[range]),
            (ColumnData::Float32(a), ColumnData::Float32(b)) => a.extend_from_slice(&b[range]),
            (ColumnData::Float64(a), ColumnData::Float64(b)) => a.extend_from_slice(&b[range]),
            (ColumnData::Numeric(a), ColumnData::Numeric(b)) => a.extend_from_slice(&b[range]),
            (ColumnData::Interval(a), ColumnData::Interval(b)) => a.extend_from_slice(&b[range]),
            (ColumnData::Bytes(a), ColumnData::Bytes(b)) => {
                let base = a.data.len() as u32;
                let (from, to) = (b.offsets[offset], b.offsets[offset + len]);
                a.data.extend_from_slice(&b.data[from as usize..to as usize]);
                a.offsets.extend(b.offsets[offset + 1..=offset + len].iter().map(|o| o - from + base));
            }
            _ => {
                for i in range {
                    self.push_datum(&other.datum(i));
                }
                return;
            }
        }
        let part = match &other.validity {
            Some(b) if offset == 0 && len == other.len() => Some(std::borrow::Cow::Borrowed(b)),
            Some(b) => Some(std::borrow::Cow::Owned(b.slice(offset, len))),
            None => None,
        };
        match (&mut self.validity, part) {
            (None, None) => {}
            (Some(a), None) => a.extend_from(&Bitmap::new_set(len)),
            // All valid rows appended to all valid rows: still no bitmap.
            (None, Some(b)) if b.all_set() => {}
            (None, Some(b)) => {
                let mut v = Bitmap::new_set(before);
                v.extend_from(&b);
                self.validity = Some(v);
            }
            (Some(a), Some(b)) => a.extend_from(&b),
        }
    }

    /// Empties the column, keeping its buffers (and their capacity) for reuse.
    pub fn clear(&mut self) {
        match &mut self.data {
            ColumnData::Bool(v) => v.clear(),
            ColumnData::Int16(v) => v.clear(),
            ColumnData::Int32(v) => v.clear(),
            ColumnData::Int64(v) => v.clear(),
            ColumnData::Float32(v) => v.clear(),
            ColumnData::Float64(v) => v.clear(),
            ColumnData::Numeric(v) => v.clear(),
            ColumnData::Interval(v) => v.clear(),
            ColumnData::Bytes(b) => {
                b.offsets.truncate(1);
                b.data.clear();
            }
        }
        self.validity = None;
    }

    /// Makes room for `rows` more rows and, in a bytes column, `bytes` more
    /// bytes of values, at once (instead of growing step by step, each step
    /// a copy into fresh memory).
    pub fn reserve(&mut self, rows: usize, bytes: usize) {
        match &mut self.data {
            ColumnData::Bool(v) => v.reserve_exact(rows),
            ColumnData::Int16(v) => v.reserve_exact(rows),
            ColumnData::Int32(v) => v.reserve_exact(rows),
            ColumnData::Int64(v) => v.reserve_exact(rows),
            ColumnData::Float32(v) => v.reserve_exact(rows),
            ColumnData::Float64(v) => v.reserve_exact(rows),
            ColumnData::Numeric(v) => v.reserve_exact(rows),
            ColumnData::Interval(v) => v.reserve_exact(rows),
            ColumnData::Bytes(b) => {
                b.offsets.reserve_exact(rows);
                b.data.reserve_exact(bytes);
            }
        }
    }

    /// Bytes of values held by a bytes column, offsets not counted (0 for others).
    pub fn variable_bytes(&self) -> usize {
        match &self.data {
            ColumnData::Bytes(b) => b.data.len(),
            _ => 0,
        }
    }

    /// Appends row `row` of `other` `n` times (a value a memtable block
    /// keeps once, spelled out a segment block at a time).
    pub fn extend_repeated(&mut self, other: &Column, row: usize, n: usize) {
        if let (ColumnData::Bytes(a), ColumnData::Bytes(b), None, true) =
            (&mut self.data, &other.data, &self.validity, other.is_valid(row))
        {
            a.push_repeated(b.get(row), n);
            return;
        }
        for _ in 0..n {
            self.push_row(other, row);
        }
    }

    /// Appends row `row` of `other` (a column of the same type).
    pub fn push_row(&mut self, other: &Column, row: usize) {
        let before = self.len();
        match (&mut self.data, &other.data) {
            (ColumnData::Bool(a), ColumnData::Bool(b)) => a.push(b[row]),
            (ColumnData::Int16(a), ColumnData::Int16(b)) => a.push(b[row]),
            (ColumnData::Int32(a), ColumnData::Int32(b)) => a.push(b[row]),
            (ColumnData::Int64(a), ColumnData::Int64(b)) => a.push(b[row]),
            (ColumnData::Float32(a), ColumnData::Float32(b)) => a.push(b[row]),
            (ColumnData::Float64(a), ColumnData::Float64(b)) => a.push(b[row]),
            (ColumnData::Numeric(a), ColumnData::Numeric(b)) => a.push(b[row]),
            (ColumnData::Interval(a), ColumnData::Interval(b)) => a.push(b[row]),
            (ColumnData::Bytes(a), ColumnData::Bytes(b)) => a.push(b.get(row)),
            _ => return self.push_datum(&other.datum(row)),
        }
        match (&mut self.validity, other.is_valid(row)) {
            (Some(v), valid) => v.push(valid),
            (None, true) => {}
            (None, false) => {
                let mut v = Bitmap::new_set(before);
                v.push(false);
                self.validity = Some(v);
            }
        }
    }

    fn take_validity(&self, indices: &[u32]) -> Option<Bitmap> {
        self.validity.as_ref().and_then(|v| {
            let mut out = Bitmap::new_unset(indices.len());
            let mut any_null = false;
            for (j, &i) in indices.iter().enumerate() {
                if v.get(i as usize) {
                    out.set(j);
                } else {
                    any_null = true;
                }
            }
            any_null.then_some(out)
        })
    }

    /// The rows at `indices`, in that order (the gather behind filters, joins and sorts).
    pub fn take(&self, indices: &[u32]) -> Column {
        fn gather<T: Copy>(v: &[T], idx: &[u32]) -> Vec<T> {
            idx.iter().map(|&i| v[i as usize]).collect()
        }
        let data = match &self.data {
            ColumnData::Bool(v) => ColumnData::Bool(gather(v, indices)),
            ColumnData::Int16(v) => ColumnData::Int16(gather(v, indices)),
            ColumnData::Int32(v) => ColumnData::Int32(gather(v, indices)),
            ColumnData::Int64(v) => ColumnData::Int64(gather(v, indices)),
            ColumnData::Float32(v) => ColumnData::Float32(gather(v, indices)),
            ColumnData::Float64(v) => ColumnData::Float64(gather(v, indices)),
            ColumnData::Numeric(v) => ColumnData::Numeric(gather(v, indices)),
            ColumnData::Interval(v) => ColumnData::Interval(gather(v, indices)),
            ColumnData::Bytes(v) => {
                let bytes = indices.iter().map(|&i| v.get(i as usize).len()).sum();
                let mut out = BytesColumn::with_capacity(indices.len(), bytes);
                for &i in indices {
                    out.push(v.get(i as usize));
                }
                ColumnData::Bytes(out)
            }
        };
        Column {
            data_type: self.data_type,
            data,
            validity: self.take_validity(indices),
        }
    }

    /// Rows `[offset, offset + len)`.
    pub fn slice(&self, offset: usize, len: usize) -> Column {
        let range = offset..offset + len;
        let data = match &self.data {
            ColumnData::Bool(v) => ColumnData::Bool(v[range].to_vec()),
            ColumnData::Int16(v) => ColumnData::Int16(v[range].to_vec()),
            ColumnData::Int32(v) => ColumnData::Int32(v[range].to_vec()),
            ColumnData::Int64(v) => ColumnData::Int64(v[range].to_vec()),
            ColumnData::Float32(v) => ColumnData::Float32(v[range].to_vec()),
            ColumnData::Float64(v) => ColumnData::Float64(v[range].to_vec()),
            ColumnData::Numeric(v) => ColumnData::Numeric(v[range].to_vec()),
            ColumnData::Interval(v) => ColumnData::Interval(v[range].to_vec()),
            ColumnData::Bytes(v) => {
                let offsets = &v.offsets[offset..=offset + len];
                let base = offsets[0];
                ColumnData::Bytes(BytesColumn {
                    offsets: offsets.iter().map(|o| o - base).collect(),
                    data: v.data[base as usize..offsets[len] as usize].to_vec(),
                })
            }
        };
        // As `take`: no bitmap when the rows have no NULL.
        let validity = self
            .validity
            .as_ref()
            .map(|v| v.slice(offset, len))
            .filter(|v| !v.all_set());
        Column {
            data_type: self.data_type,
            data,
            validity,
        }
    }

    /// [`slice`](Self::slice) into `dst`, reusing its buffers: a loop that
    /// cuts many ranges (a segment's blocks) then allocates once instead of
    /// once per range (fresh memory the kernel must zero).
    pub fn slice_into(&self, offset: usize, len: usize, dst: &mut Column) {
        fn fill<T: Clone>(dst: &mut ColumnData, src: &[T], wrap: fn(Vec<T>) -> ColumnData, get: fn(&mut ColumnData) -> Option<&mut Vec<T>>) {
            match get(dst) {
                Some(v) => {
                    v.clear();
                    v.extend_from_slice(src);
                }
                None => *dst = wrap(src.to_vec()),
            }
        }
        let range = offset..offset + len;
        let dst_data = &mut dst.data;
        match &self.data {
            ColumnData::Bool(v) => fill(dst_data, &v[range], ColumnData::Bool, |d| match d { ColumnData::Bool(v) => Some(v), _ => None }),
            ColumnData::Int16(v) => fill(dst_data, &v[range], ColumnData::Int16, |d| match d { ColumnData::Int16(v) => Some(v), _ => None }),
            ColumnData::Int32(v) => fill(dst_data, &v[range], ColumnData::Int32, |d| match d { ColumnData::Int32(v) => Some(v), _ => None }),
            ColumnData::Int64(v) => fill(dst_data, &v[range], ColumnData::Int64, |d| match d { ColumnData::Int64(v) => Some(v), _ => None }),
            ColumnData::Float32(v) => fill(dst_data, &v[range], ColumnData::Float32, |d| match d { ColumnData::Float32(v) => Some(v), _ => None }),
            ColumnData::Float64(v) => fill(dst_data, &v[range], ColumnData::Float64, |d| match d { ColumnData::Float64(v) => Some(v), _ => None }),
            ColumnData::Numeric(v) => fill(dst_data, &v[range], ColumnData::Numeric, |d| match d { ColumnData::Numeric(v) => Some(v), _ => None }),
            ColumnData::Interval(v) => fill(dst_data, &v[range], ColumnData::Interval, |d| match d { ColumnData::Interval(v) => Some(v), _ => None }),
            ColumnData::Bytes(v) => {
                if !matches!(dst_data, ColumnData::Bytes(_)) {
                    *dst_data = ColumnData::Bytes(BytesColumn::default());
                }
                if let ColumnData::Bytes(d) = dst_data {
                    let offsets = &v.offsets[offset..=offset + len];
                    let base = offsets[0];
                    d.offsets.clear();
                    d.offsets.extend(offsets.iter().map(|o| o - base));
                    d.data.clear();
                    d.data.extend_from_slice(&v.data[base as usize..offsets[len] as usize]);
                }
            }
        }
        dst.data_type = self.data_type;
        dst.validity = self.validity.as_ref().map(|v| v.slice(offset, len)).filter(|v| !v.all_set());
    }

    /// Approximate bytes held (values, offsets, validity), for memory accounting.
    pub fn byte_size(&self) -> usize {
        self.value_bytes() + self.validity.as_ref().map_or(0, |v| v.len() / 8)
    }

    /// The values' bytes at their fixed widths (16 for numeric and interval),
    /// text and bytea with 4 per offset: also the WAL's encoded size of them.
    pub fn value_bytes(&self) -> usize {
        match &self.data {
            ColumnData::Bool(v) => v.len(),
            ColumnData::Int16(v) => v.len() * 2,
            ColumnData::Int32(v) => v.len() * 4,
            ColumnData::Float32(v) => v.len() * 4,
            ColumnData::Int64(v) => v.len() * 8,
            ColumnData::Float64(v) => v.len() * 8,
            ColumnData::Numeric(v) => v.len() * 16,
            ColumnData::Interval(v) => v.len() * 16,
            ColumnData::Bytes(b) => b.data.len() + b.offsets.len() * 4,
        }
    }

    /// Keeps the physical data but relabels the SQL type (varchar(n) → text and the like).
    pub fn with_type(mut self, data_type: DataType) -> Column {
        debug_assert_eq!(self.data_type.physical(), data_type.physical());
        self.data_type = data_type;
        self
    }
}

/// Rows as equal-length columns: up to `BATCH_ROWS` from memtables and
/// operators, up to `storage::segment::BLOCK_ROWS` from segment scans.
#[derive(Debug, Clone, PartialEq)]
pub struct Batch {
    pub columns: Vec<ColumnRef>,
    /// Row count; kept separately so a batch with no columns (`SELECT count(*)`) still has rows.
    pub len: usize,
}

impl Batch {
    pub fn new(columns: Vec<ColumnRef>, len: usize) -> Batch {
        debug_assert!(columns.iter().all(|c| c.len() == len));
        Batch { columns, len }
    }
    pub fn from_columns(columns: Vec<Column>) -> Batch {
        let len = columns.first().map_or(0, |c| c.len());
        Batch::new(columns.into_iter().map(Arc::new).collect(), len)
    }
    pub fn empty(types: &[DataType]) -> Batch {
        Batch::new(
            types.iter().map(|t| Arc::new(Column::empty(*t))).collect(),
            0,
        )
    }
    /// The batch with NULL columns after its own for each of `types` it
    /// lacks: rows written before an `ALTER TABLE … ADD COLUMN` read NULL
    /// there. A batch as wide as `types` (or wider) comes back as it is.
    pub fn padded_to(self, types: &[DataType]) -> Batch {
        if self.columns.len() >= types.len() {
            return self;
        }
        let len = self.len;
        let mut columns = self.columns;
        let missing = &types[columns.len()..];
        columns.extend(missing.iter().map(|&t| Arc::new(Column::from_datum(t, &Datum::Null, len))));
        Batch::new(columns, len)
    }
    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    pub fn column(&self, i: usize) -> &ColumnRef {
        &self.columns[i]
    }
    pub fn take(&self, indices: &[u32]) -> Batch {
        Batch::new(
            self.columns
                .iter()
                .map(|c| Arc::new(c.take(indices)))
                .collect(),
            indices.len(),
        )
    }
    pub fn slice(&self, offset: usize, len: usize) -> Batch {
        Batch::new(
            self.columns
                .iter()
                .map(|c| Arc::new(c.slice(offset, len)))
                .collect(),
            len,
        )
    }
    /// Approximate bytes held by the batch's columns.
    pub fn byte_size(&self) -> usize {
        self.columns.iter().map(|c| c.byte_size()).sum()
    }
    pub fn row(&self, i: usize) -> Vec<Datum> {
        self.columns.iter().map(|c| c.datum(i)).collect()
    }
    /// Concatenates batches of the same schema.
    pub fn concat(types: &[DataType], batches: &[Batch]) -> Batch {
        let total: usize = batches.iter().map(|b| b.len).sum();
        let mut cols: Vec<Column> = types
            .iter()
            .map(|t| Column::with_capacity(*t, total))
            .collect();
        for b in batches {
            for (c, src) in cols.iter_mut().zip(&b.columns) {
                c.extend(src);
            }
        }
        let mut out = Batch::from_columns(cols);
        out.len = total;
        out
    }
}

/// Array values written before the packed array form (segments of versions
/// 1–3, WAL format 1) are rewritten packed as they are read, so that every
/// array compares and hashes in one form (`types::array`).
pub fn repack_arrays(data_type: DataType, data: &mut ColumnData) {
    if let (DataType::Array(elem), ColumnData::Bytes(b)) = (data_type, &mut *data) {
        if let Some((offsets, bytes)) = crate::types::array::repack_values(&b.offsets, &b.data, elem) {
            *b = BytesColumn { offsets, data: bytes };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A constant column equals the value pushed row by row, NULL and a
    /// datum of the wrong kind (which becomes NULL) included.
    #[test]
    fn a_constant_column_equals_its_value_pushed_row_by_row() {
        let cases = [
            (DataType::Int32, Datum::Int32(7)),
            (DataType::Float64, Datum::Float64(-0.5)),
            (DataType::Text, Datum::text("abc")),
            (DataType::Text, Datum::text("")),
            (DataType::Bool, Datum::Null),
            (DataType::Float32, Datum::Null),
            (DataType::Int64, Datum::text("wrong kind")),
            (DataType::Interval, Datum::Interval(Interval { months: 1, days: 2, micros: 3 })),
        ];
        for (t, v) in cases {
            for len in [0, 1, 5] {
                let constant = Column::from_datum(t, &v, len);
                let pushed = Column::from_datums(t, &vec![v.clone(); len]);
                assert_eq!(constant.len(), len);
                for i in 0..len {
                    assert_eq!(constant.datum(i), pushed.datum(i), "{t:?} {v:?} row {i}");
                    assert_eq!(constant.is_valid(i), pushed.is_valid(i));
                }
            }
        }
    }

    /// `slice` copies ranges directly; it must agree with `take` of the same rows.
    #[test]
    fn slice_agrees_with_take_of_the_range() {
        let types = [DataType::Int64, DataType::Text, DataType::Float64, DataType::Bool];
        for n in [0usize, 1, 63, 64, 65, 200] {
            for t in types {
                let datums: Vec<Datum> = (0..n)
                    .map(|i| match (i % 7 == 3, t) {
                        (true, _) => Datum::Null,
                        (_, DataType::Int64) => Datum::Int64(i as i64 * 31),
                        (_, DataType::Text) => Datum::text("x".repeat(i % 5)),
                        (_, DataType::Float64) => Datum::Float64(i as f64 / 4.0),
                        _ => Datum::Bool(i % 2 == 0),
                    })
                    .collect();
                let col = Column::from_datums(t, &datums);
                for offset in [0, 1, 3, 63, 64, 70] {
                    for len in [0, 1, 2, 64, 65, 129] {
                        if offset + len > n {
                            continue;
                        }
                        let idx: Vec<u32> = (offset as u32..(offset + len) as u32).collect();
                        assert_eq!(col.slice(offset, len), col.take(&idx), "{t:?} n={n} offset={offset} len={len}");
                        // slice_into, into a buffer that held another type and other rows, agrees too.
                        let mut reused = Column::from_datums(DataType::Int32, &[Datum::Int32(7), Datum::Null]);
                        col.slice_into(offset, len, &mut reused);
                        assert_eq!(reused, col.slice(offset, len), "slice_into {t:?} n={n} offset={offset} len={len}");
                        col.slice_into(offset, len, &mut reused);
                        assert_eq!(reused, col.slice(offset, len), "slice_into again {t:?}");
                        // extend_range appends the same rows.
                        let mut appended = col.slice(0, offset.min(2));
                        appended.extend_range(&col, offset, len);
                        let mut expected = col.slice(0, offset.min(2));
                        expected.extend(&col.slice(offset, len));
                        assert_eq!(appended, expected, "extend_range {t:?} n={n} offset={offset} len={len}");
                    }
                }
                // push_row, row by row, agrees with take too.
                let mut pushed = Column::with_capacity(t, 0);
                for &i in &(0..n as u32).rev().collect::<Vec<_>>() {
                    pushed.push_row(&col, i as usize);
                }
                assert_eq!(pushed, col.take(&(0..n as u32).rev().collect::<Vec<_>>()), "push_row {t:?} n={n}");
            }
        }
    }

    #[test]
    fn a_repeated_value_is_appended_as_often_as_asked() {
        let values = Column::from_datums(DataType::Text, &[Datum::text("x".repeat(40)), Datum::Null]);
        let mut out = Column::from_datums(DataType::Text, &[Datum::text("a")]);
        out.extend_repeated(&values, 0, 3);
        out.extend_repeated(&values, 1, 2);
        out.extend_repeated(&values, 0, 1);
        let expected = [Datum::text("a")]
            .into_iter()
            .chain(std::iter::repeat_n(Datum::text("x".repeat(40)), 3))
            .chain([Datum::Null, Datum::Null, Datum::text("x".repeat(40))])
            .collect::<Vec<_>>();
        assert_eq!(out, Column::from_datums(DataType::Text, &expected));
    }
}
