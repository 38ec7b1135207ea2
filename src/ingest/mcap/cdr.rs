//! ROS 2 CDR (XCDR1, "plain CDR") payloads into columns.
//!
//! Owns the wire format: the 4-byte encapsulation header (`00 01` little-
//! endian, `00 00` big-endian; parameter-list and XCDR2 encapsulations are
//! refused by name), alignment of every primitive to its size counted from
//! the first byte after the header, strings (u32 length including the NUL),
//! wstrings (u32 count of 4-byte code units, as Fast DDS writes them),
//! sequences (u32 count, the first element aligned only when there is one,
//! as Fast-CDR does), fixed arrays, nested structs inline, the one padding
//! byte of an empty struct. Trailing bytes after the last field are ignored
//! (DDS implementations pad payloads to 4 bytes).
//!
//! A [`Program`] is compiled once per schema from the layout's wire
//! skeleton: a flat list of small `Copy` ops, each naming a typed column
//! slot (no per-field dynamic dispatch beyond one `match` over the op),
//! with sequences and fixed arrays of structs as loops over a body of ops
//! whose rows go to a child table. Decoding a message allocates nothing:
//! values are pushed onto the typed column vectors, arrays are written in
//! PostgreSQL's binary array format (`types/array.rs`; written here
//! directly, one element type at a time, rather than through `Datum`s)
//! straight into the bytes column, strings are validated in place.
//! Endianness is a const generic: one monomorphized decoder per byte order.
//!
//! Failures carry the op index, from which the caller names the field; the
//! caller rolls back the partial row (`decode.rs`).
//!
//! Must not: choose column names or types (that is `layout`), or know about
//! channels and records.

use memchr::memchr;

use super::decode::{slot_map, BlobRef, MessageCtx, Store, TableColumns};
use super::layout::{is_byte_array, Shape, TopicLayout, WireElem, WireStep};
use super::ros2msg::{Primitive, MAX_NESTING};
use crate::exec::vector::BytesColumn;
use crate::types::array::FLAG_PACKED;

/// Element OIDs of the array types written here.
mod oid {
    pub const BOOL: u32 = 16;
    pub const INT8: u32 = 20;
    pub const INT2: u32 = 21;
    pub const INT4: u32 = 23;
    pub const TEXT: u32 = 25;
    pub const FLOAT4: u32 = 700;
    pub const FLOAT8: u32 = 701;
    pub const TIMESTAMPTZ: u32 = 1184;
}

/// How many elements: a fixed count, or a u32 count on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Count {
    Fixed(u32),
    Wire,
}

/// One decode step. `slot` indexes the typed vectors of the current table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Recording(u32),
    LogTime(u32),
    PublishTime(u32),
    Sequence(u32),
    /// The position in the enclosing sequence at `depth`.
    Index {
        slot: u32,
        depth: u8,
    },
    Bool(u32),
    /// int8 → smallint.
    I8(u32),
    /// uint8, byte, char → smallint.
    U8(u32),
    I16(u32),
    /// uint16 → integer.
    U16(u32),
    I32(u32),
    /// uint32 → bigint.
    U32(u32),
    I64(u32),
    /// uint64 → bigint, refused above i64::MAX.
    U64(u32),
    F32(u32),
    F64(u32),
    /// `n` float32 fields in a row into slots `slot..slot + n` (a vector,
    /// LaserScan's angles): one alignment and one bounds check.
    F32Run {
        slot: u32,
        n: u32,
    },
    /// `n` float64 fields in a row (a point, a quaternion, a pose).
    F64Run {
        slot: u32,
        n: u32,
    },
    Time(u32),
    Duration(u32),
    Str(u32),
    WStr(u32),
    /// uint8/byte sequence or array → bytea; sequences above the blob
    /// threshold become a [`BlobRef`] (`column` names it).
    Bytes {
        slot: u32,
        column: u32,
        count: Count,
    },
    PrimArray {
        slot: u32,
        prim: Primitive,
        count: Count,
    },
    StrArray {
        slot: u32,
        count: Count,
    },
    WStrArray {
        slot: u32,
        count: Count,
    },
    TimeArray {
        slot: u32,
        count: Count,
    },
    DurationArray {
        slot: u32,
        count: Count,
    },
    /// An empty struct's padding byte.
    Pad,
    /// Rows of table `table`: the body is ops `pc + 1 .. end`; `min` is the
    /// fewest bytes one element takes (bounds a corrupt count early).
    Loop {
        table: u32,
        count: Count,
        end: u32,
        min: u32,
        depth: u8,
    },
}

/// A compiled decoder for one schema.
#[derive(Debug, Clone)]
pub(crate) struct Program {
    ops: Vec<Op>,
    /// Per op, the field path (for errors).
    paths: Vec<Box<str>>,
}

/// Why a payload failed, without allocating: the caller turns it into a
/// `McapError` naming the field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FailKind {
    /// The payload ends before the field (`need` bytes at the offset).
    Short {
        need: u64,
    },
    Overflow(u64),
    /// A sequence count larger than the rest of the payload can hold.
    Count {
        count: u32,
        left: usize,
    },
    /// An encapsulation this decoder does not read.
    Encapsulation([u8; 2]),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Fail {
    /// Op index (`usize::MAX` for the encapsulation header).
    pub op: usize,
    /// Which field of a run op (0 otherwise).
    pub field: u32,
    /// Byte offset in the payload (header included).
    pub offset: usize,
    pub kind: FailKind,
}

impl Program {
    /// The path of the `k`-th field of op `op` (runs hold several).
    pub fn field_path(&self, op: usize, k: usize) -> &str {
        match self.paths.get(op) {
            None => "(encapsulation header)",
            Some(p) => p.split('\n').nth(k).unwrap_or(p),
        }
    }

    /// Compiles the layout's wire skeleton.
    pub fn compile(layout: &TopicLayout, steps: &[WireStep]) -> Program {
        let slots: Vec<Vec<(Store, u32)>> = layout.tables.iter().map(slot_map).collect();
        let mut p = Program {
            ops: Vec::new(),
            paths: Vec::new(),
        };
        p.prefix(layout, &slots, 0);
        // (loop op index, table) of the open loops.
        let mut open: Vec<(usize, usize)> = Vec::new();
        let mut table = 0usize;
        for step in steps {
            match step {
                WireStep::Value {
                    column,
                    elem,
                    shape,
                    path,
                } => {
                    let slot = slots[table][*column].1;
                    let count = match shape {
                        Shape::Single => None,
                        Shape::Fixed(n) => Some(Count::Fixed(*n)),
                        Shape::Sequence => Some(Count::Wire),
                    };
                    let op = match (count, elem) {
                        (None, WireElem::Prim(prim)) => match prim {
                            Primitive::Bool => Op::Bool(slot),
                            Primitive::Int8 => Op::I8(slot),
                            Primitive::Byte | Primitive::Char | Primitive::UInt8 => Op::U8(slot),
                            Primitive::Int16 => Op::I16(slot),
                            Primitive::UInt16 => Op::U16(slot),
                            Primitive::Int32 => Op::I32(slot),
                            Primitive::UInt32 => Op::U32(slot),
                            Primitive::Int64 => Op::I64(slot),
                            Primitive::UInt64 => Op::U64(slot),
                            Primitive::Float32 => Op::F32(slot),
                            Primitive::Float64 => Op::F64(slot),
                        },
                        (None, WireElem::String) => Op::Str(slot),
                        (None, WireElem::WString) => Op::WStr(slot),
                        (None, WireElem::Time) => Op::Time(slot),
                        (None, WireElem::Duration) => Op::Duration(slot),
                        (Some(count), elem) if is_byte_array(*elem) => Op::Bytes {
                            slot,
                            column: *column as u32,
                            count,
                        },
                        (Some(count), WireElem::Prim(prim)) => Op::PrimArray {
                            slot,
                            prim: *prim,
                            count,
                        },
                        (Some(count), WireElem::String) => Op::StrArray { slot, count },
                        (Some(count), WireElem::WString) => Op::WStrArray { slot, count },
                        (Some(count), WireElem::Time) => Op::TimeArray { slot, count },
                        (Some(count), WireElem::Duration) => Op::DurationArray { slot, count },
                    };
                    p.push(op, path);
                }
                WireStep::EmptyStruct { path } => p.push(Op::Pad, path),
                WireStep::Enter { child, shape, path } => {
                    let count = match shape {
                        Shape::Fixed(n) => Count::Fixed(*n),
                        _ => Count::Wire,
                    };
                    open.push((p.ops.len(), table));
                    p.push(
                        Op::Loop {
                            table: *child as u32,
                            count,
                            end: 0,
                            min: 0,
                            depth: (open.len() - 1).min(MAX_NESTING) as u8,
                        },
                        path,
                    );
                    table = *child;
                    p.prefix(layout, &slots, table);
                }
                WireStep::Exit => {
                    if let Some((at, parent)) = open.pop() {
                        let end = p.ops.len();
                        let min = p.min_size(at + 1, end);
                        if let Op::Loop { end: e, min: m, .. } = &mut p.ops[at] {
                            *e = end as u32;
                            *m = min.min(u32::MAX as u64) as u32;
                        }
                        table = parent;
                    }
                }
            }
        }
        p.fuse_runs();
        p
    }

    /// Merges consecutive float32 (float64) fields with consecutive slots
    /// into one run op; the run's path lists its fields, one per line.
    /// Loop ends are renumbered.
    fn fuse_runs(&mut self) {
        let mut ops = Vec::with_capacity(self.ops.len());
        let mut paths: Vec<Box<str>> = Vec::with_capacity(self.ops.len());
        // Old index → new index (one past the end too).
        let mut renumber = vec![0u32; self.ops.len() + 1];
        // Where a loop body ends: a run must not reach across (the ops on
        // either side write to different tables).
        let mut body_end = vec![false; self.ops.len() + 1];
        for op in &self.ops {
            if let Op::Loop { end, .. } = op {
                body_end[*end as usize] = true;
            }
        }
        let mut i = 0;
        while i < self.ops.len() {
            renumber[i] = ops.len() as u32;
            let (first, size) = match self.ops[i] {
                Op::F32(s) => (s, 4),
                Op::F64(s) => (s, 8),
                op => {
                    ops.push(op);
                    paths.push(self.paths[i].clone());
                    i += 1;
                    continue;
                }
            };
            let mut n = 1;
            while let Some(&next) = self.ops.get(i + n).filter(|_| !body_end[i + n]) {
                let follows = match next {
                    Op::F32(s) => size == 4 && s == first + n as u32,
                    Op::F64(s) => size == 8 && s == first + n as u32,
                    _ => false,
                };
                if !follows {
                    break;
                }
                n += 1;
            }
            if n == 1 {
                ops.push(self.ops[i]);
            } else if size == 4 {
                ops.push(Op::F32Run {
                    slot: first,
                    n: n as u32,
                });
            } else {
                ops.push(Op::F64Run {
                    slot: first,
                    n: n as u32,
                });
            }
            paths.push(self.paths[i..i + n].join("\n").into());
            for k in 1..n {
                renumber[i + k] = renumber[i];
            }
            i += n;
        }
        renumber[self.ops.len()] = ops.len() as u32;
        for op in &mut ops {
            if let Op::Loop { end, .. } = op {
                *end = renumber[*end as usize];
            }
        }
        self.ops = ops;
        self.paths = paths;
    }

    fn push(&mut self, op: Op, path: &str) {
        self.ops.push(op);
        self.paths.push(path.into());
    }

    /// The row-start ops of a table: its leading and index columns.
    fn prefix(&mut self, layout: &TopicLayout, slots: &[Vec<(Store, u32)>], table: usize) {
        use super::layout::ColumnRole;
        for (c, col) in layout.tables[table].columns.iter().enumerate() {
            let slot = slots[table][c].1;
            let op = match col.role {
                ColumnRole::Recording => Op::Recording(slot),
                ColumnRole::LogTime => Op::LogTime(slot),
                ColumnRole::PublishTime => Op::PublishTime(slot),
                ColumnRole::Sequence => Op::Sequence(slot),
                ColumnRole::Index { depth } => Op::Index {
                    slot,
                    depth: depth.min(MAX_NESTING) as u8,
                },
                ColumnRole::Field => continue,
            };
            self.push(op, &col.name);
        }
    }

    /// The fewest payload bytes ops `start..end` consume.
    fn min_size(&self, start: usize, end: usize) -> u64 {
        let mut total = 0u64;
        let mut pc = start;
        let per = |count: Count, size: u64| match count {
            Count::Fixed(n) => n as u64 * size,
            Count::Wire => 4,
        };
        while pc < end {
            total += match self.ops[pc] {
                Op::Bool(_) | Op::I8(_) | Op::U8(_) | Op::Pad => 1,
                Op::I16(_) => 2,
                Op::U16(_) | Op::I32(_) | Op::U32(_) | Op::F32(_) => 4,
                Op::I64(_) | Op::U64(_) | Op::F64(_) => 8,
                Op::F32Run { n, .. } => 4 * n as u64,
                Op::F64Run { n, .. } => 8 * n as u64,
                Op::Time(_) | Op::Duration(_) => 8,
                Op::Str(_) | Op::WStr(_) => 4,
                Op::Bytes { count, .. } => per(count, 1),
                Op::PrimArray { prim, count, .. } => per(count, prim.size() as u64),
                Op::StrArray { count, .. } | Op::WStrArray { count, .. } => per(count, 4),
                Op::TimeArray { count, .. } | Op::DurationArray { count, .. } => per(count, 8),
                Op::Loop {
                    count, end, min, ..
                } => {
                    let t = per(count, min as u64);
                    pc = end as usize;
                    total += t;
                    continue;
                }
                Op::Recording(_)
                | Op::LogTime(_)
                | Op::PublishTime(_)
                | Op::Sequence(_)
                | Op::Index { .. } => 0,
            };
            pc += 1;
        }
        total
    }

    /// Decodes one payload (encapsulation header included) into `tables`,
    /// completing one row of table 0 and any number of child rows. On
    /// failure the columns hold a partial row: the caller truncates.
    pub fn decode(
        &self,
        payload: &[u8],
        ctx: &MessageCtx<'_>,
        tables: &mut [TableColumns],
        out: &mut DecodeOut<'_>,
    ) -> Result<(), Fail> {
        let header_fail = |kind| Fail {
            op: usize::MAX,
            field: 0,
            offset: 0,
            kind,
        };
        let Some((header, body)) = payload.split_first_chunk::<4>() else {
            return Err(header_fail(FailKind::Short { need: 4 }));
        };
        let mut st = State {
            cur: Cursor { data: body, pos: 0 },
            idx: [0; MAX_NESTING + 1],
        };
        match [header[0], header[1]] {
            [0, 1] => self.run::<false>(&mut st, tables, 0, 0, self.ops.len(), ctx, out)?,
            [0, 0] => self.run::<true>(&mut st, tables, 0, 0, self.ops.len(), ctx, out)?,
            other => return Err(header_fail(FailKind::Encapsulation(other))),
        }
        tables[0].rows += 1;
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    fn run<const BE: bool>(
        &self,
        st: &mut State<'_>,
        tables: &mut [TableColumns],
        table: usize,
        start: usize,
        end: usize,
        ctx: &MessageCtx<'_>,
        out: &mut DecodeOut<'_>,
    ) -> Result<(), Fail> {
        let mut pc = start;
        let ops = &self.ops[..end.min(self.ops.len())];
        while let Some(&op) = ops.get(pc) {
            if let Op::Loop {
                table: child,
                count,
                end: body_end,
                min,
                depth,
            } = op
            {
                let n = match count {
                    Count::Fixed(n) => n,
                    Count::Wire => st.u32::<BE>(pc)?,
                };
                let left = st.cur.data.len().saturating_sub(st.cur.pos);
                let least = n as u64 * min.max(1) as u64;
                if least > left as u64 {
                    let kind = match count {
                        Count::Fixed(_) => FailKind::Short { need: least },
                        Count::Wire => FailKind::Count { count: n, left },
                    };
                    return Err(st.fail(pc, kind));
                }
                let child = child as usize;
                for i in 0..n {
                    st.idx[depth as usize] = i as i32;
                    self.run::<BE>(st, tables, child, pc + 1, body_end as usize, ctx, out)?;
                    tables[child].rows += 1;
                }
                pc = body_end as usize;
                continue;
            }
            let t = &mut tables[table];
            self.leaf::<BE>(op, pc, st, t, table, ctx, out)?;
            pc += 1;
        }
        Ok(())
    }

    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    fn leaf<const BE: bool>(
        &self,
        op: Op,
        pc: usize,
        st: &mut State<'_>,
        t: &mut TableColumns,
        table: usize,
        ctx: &MessageCtx<'_>,
        out: &mut DecodeOut<'_>,
    ) -> Result<(), Fail> {
        // Align, read N bytes (little-endian order), convert, push.
        macro_rules! scalar {
            ($store:ident, $slot:expr, $n:literal, |$b:ident| $conv:expr) => {{
                let $b = st.read::<$n, BE>(pc)?;
                t.$store[$slot as usize].push($conv);
            }};
        }
        match op {
            Op::Recording(s) => {
                t.bytes[s as usize].push(ctx.recording);
                t.keep_once(s as usize);
            }
            Op::LogTime(s) => t.i64s[s as usize].push(ctx.log_time),
            Op::PublishTime(s) => t.i64s[s as usize].push(ctx.publish_time),
            Op::Sequence(s) => t.i64s[s as usize].push(ctx.sequence),
            Op::Index { slot, depth } => t.i32s[slot as usize].push(st.idx[depth as usize]),
            Op::Bool(s) => scalar!(bools, s, 1, |b| b[0] != 0),
            Op::I8(s) => scalar!(i16s, s, 1, |b| b[0] as i8 as i16),
            Op::U8(s) => scalar!(i16s, s, 1, |b| b[0] as i16),
            Op::I16(s) => scalar!(i16s, s, 2, |b| i16::from_le_bytes(b)),
            Op::U16(s) => scalar!(i32s, s, 2, |b| u16::from_le_bytes(b) as i32),
            Op::I32(s) => scalar!(i32s, s, 4, |b| i32::from_le_bytes(b)),
            Op::U32(s) => scalar!(i64s, s, 4, |b| u32::from_le_bytes(b) as i64),
            Op::I64(s) => scalar!(i64s, s, 8, |b| i64::from_le_bytes(b)),
            Op::U64(s) => {
                let at = st.cur.pos;
                let v = u64::from_le_bytes(st.read::<8, BE>(pc)?);
                if v > i64::MAX as u64 {
                    return Err(Fail {
                        op: pc,
                        field: 0,
                        offset: 4 + at.next_multiple_of(8),
                        kind: FailKind::Overflow(v),
                    });
                }
                t.i64s[s as usize].push(v as i64);
            }
            Op::F32(s) => scalar!(f32s, s, 4, |b| f32::from_le_bytes(b)),
            Op::F64(s) => scalar!(f64s, s, 8, |b| f64::from_le_bytes(b)),
            Op::F32Run { slot, n } => {
                let src = st.run(pc, 4, n as usize)?;
                let cols = &mut t.f32s[slot as usize..(slot + n) as usize];
                for (col, w) in cols.iter_mut().zip(src.as_chunks::<4>().0) {
                    col.push(if BE {
                        f32::from_be_bytes(*w)
                    } else {
                        f32::from_le_bytes(*w)
                    });
                }
            }
            Op::F64Run { slot, n } => {
                let src = st.run(pc, 8, n as usize)?;
                let cols = &mut t.f64s[slot as usize..(slot + n) as usize];
                for (col, w) in cols.iter_mut().zip(src.as_chunks::<8>().0) {
                    col.push(if BE {
                        f64::from_be_bytes(*w)
                    } else {
                        f64::from_le_bytes(*w)
                    });
                }
            }
            Op::Time(s) | Op::Duration(s) => {
                let ns = st.time::<BE>(pc)?;
                t.i64s[s as usize].push(ns);
            }
            Op::Str(s) => {
                let text = st.string::<BE>(pc)?;
                push_text(&mut t.bytes[s as usize], text, out);
                t.keep_once(s as usize);
            }
            Op::WStr(s) => {
                let units = st.wstring::<BE>(pc)?;
                let col = &mut t.bytes[s as usize];
                push_wide_text::<BE>(&mut col.data, units);
                col.offsets.push(col.data.len() as u32);
                t.keep_once(s as usize);
            }
            Op::Bytes {
                slot,
                column,
                count,
            } => {
                let n = st.count::<BE>(pc, count, 1)?;
                let payload_at = 4 + st.cur.pos;
                let bytes = st.take(pc, n)?;
                let col = &mut t.bytes[slot as usize];
                match (count, out.blob_threshold) {
                    (Count::Wire, Some(limit)) if bytes.len() > limit => {
                        col.push(&[]);
                        out.blobs.push(BlobRef {
                            table,
                            column: column as usize,
                            row: t.rows,
                            offset: payload_at,
                            len: bytes.len(),
                            file_offset: ctx.payload_file_offset.map(|o| o + payload_at as u64),
                            in_chunk: ctx.payload_in_chunk.map(|(c, o)| (c, o + payload_at as u64)),
                        });
                    }
                    _ => col.push(bytes),
                }
            }
            Op::PrimArray { slot, prim, count } => {
                let size = prim.size();
                let n = st.count::<BE>(pc, count, size)?;
                if n > 0 {
                    st.cur.pos = st.cur.pos.next_multiple_of(size);
                }
                let src = st.take(pc, n * size)?;
                // A little-endian array of same-width elements is its
                // header (fixed by `n`) and these bytes: the repeat of a
                // kept-once value is seen without encoding it.
                if !BE && n > 0 && copied_into_arrays(prim) && t.repeats_tail(slot as usize, ARRAY_HEADER_BYTES, src) {
                    return Ok(());
                }
                let col = &mut t.bytes[slot as usize];
                match encode_prim_array::<BE>(&mut col.data, prim, src) {
                    Ok(()) => {
                        col.offsets.push(col.data.len() as u32);
                        t.keep_once(slot as usize);
                    }
                    Err(v) => {
                        return Err(Fail {
                            op: pc,
                            field: 0,
                            offset: 4 + st.cur.pos,
                            kind: FailKind::Overflow(v),
                        })
                    }
                }
            }
            Op::StrArray { slot, count } | Op::WStrArray { slot, count } => {
                let wide = matches!(op, Op::WStrArray { .. });
                let n = st.count::<BE>(pc, count, 4)?;
                let col = &mut t.bytes[slot as usize];
                array_header(&mut col.data, n, oid::TEXT);
                for _ in 0..n {
                    let len_at = col.data.len();
                    col.data.extend_from_slice(&[0; 4]);
                    if wide {
                        push_wide_text::<BE>(&mut col.data, st.wstring::<BE>(pc)?);
                    } else {
                        push_text_bytes(&mut col.data, st.string::<BE>(pc)?, out);
                    }
                    let len = (col.data.len() - len_at - 4) as i32;
                    col.data[len_at..len_at + 4].copy_from_slice(&len.to_be_bytes());
                }
                col.offsets.push(col.data.len() as u32);
                t.keep_once(slot as usize);
            }
            Op::TimeArray { slot, count } | Op::DurationArray { slot, count } => {
                let is_time = matches!(op, Op::TimeArray { .. });
                let n = st.count::<BE>(pc, count, 8)?;
                let col = &mut t.bytes[slot as usize];
                // Packed: nanoseconds (since 1970 for Time), as the
                // scalar timestamptz and Duration columns hold them.
                array_header_flags(
                    &mut col.data,
                    n,
                    if is_time { oid::TIMESTAMPTZ } else { oid::INT8 },
                    FLAG_PACKED,
                );
                for _ in 0..n {
                    let ns = st.time::<BE>(pc)?;
                    col.data.extend_from_slice(&ns.to_le_bytes());
                }
                col.offsets.push(col.data.len() as u32);
                t.keep_once(slot as usize);
            }
            Op::Pad => {
                st.read::<1, BE>(pc)?;
            }
            Op::Loop { .. } => {}
        }
        Ok(())
    }
}

/// Per-message values the prefix ops write.
pub(crate) struct DecodeOut<'a> {
    pub blob_threshold: Option<usize>,
    pub blobs: &'a mut Vec<BlobRef>,
    /// Strings whose invalid UTF-8 or NUL bytes were replaced.
    pub repaired_strings: u64,
}

struct Cursor<'a> {
    data: &'a [u8],
    pos: usize,
}

struct State<'a> {
    cur: Cursor<'a>,
    /// Position in each enclosing sequence.
    idx: [i32; MAX_NESTING + 1],
}

impl<'a> State<'a> {
    #[cold]
    fn fail(&self, op: usize, kind: FailKind) -> Fail {
        Fail {
            op,
            field: 0,
            offset: 4 + self.cur.pos,
            kind,
        }
    }

    /// Aligns to N and reads N bytes, in little-endian order (big-endian
    /// input is reversed).
    #[inline(always)]
    fn read<const N: usize, const BE: bool>(&mut self, op: usize) -> Result<[u8; N], Fail> {
        let start = self.cur.pos.next_multiple_of(N);
        match self
            .cur
            .data
            .get(start..)
            .and_then(|s| s.first_chunk::<N>())
        {
            Some(b) => {
                self.cur.pos = start + N;
                let mut a = *b;
                if BE {
                    a.reverse();
                }
                Ok(a)
            }
            None => {
                self.cur.pos = start;
                Err(self.fail(op, FailKind::Short { need: N as u64 }))
            }
        }
    }

    /// `n` fields of `size` bytes in a row: aligned once, checked once. A
    /// short payload fails at the first field that does not fit.
    #[inline(always)]
    fn run(&mut self, op: usize, size: usize, n: usize) -> Result<&'a [u8], Fail> {
        let start = self.cur.pos.next_multiple_of(size);
        let data = self.cur.data;
        match data.get(start..).and_then(|s| s.get(..size * n)) {
            Some(b) => {
                self.cur.pos = start + size * n;
                Ok(b)
            }
            None => {
                let fitting = data.len().saturating_sub(start) / size;
                self.cur.pos = start + fitting * size;
                Err(Fail {
                    field: fitting as u32,
                    ..self.fail(op, FailKind::Short { need: size as u64 })
                })
            }
        }
    }

    #[inline(always)]
    fn u32<const BE: bool>(&mut self, op: usize) -> Result<u32, Fail> {
        Ok(u32::from_le_bytes(self.read::<4, BE>(op)?))
    }

    #[inline(always)]
    fn take(&mut self, op: usize, n: usize) -> Result<&'a [u8], Fail> {
        let data = self.cur.data;
        match data.get(self.cur.pos..).and_then(|s| s.get(..n)) {
            Some(b) => {
                self.cur.pos += n;
                Ok(b)
            }
            None => Err(self.fail(op, FailKind::Short { need: n as u64 })),
        }
    }

    /// A fixed count, or a u32 count checked against the bytes left.
    #[inline(always)]
    fn count<const BE: bool>(
        &mut self,
        op: usize,
        count: Count,
        elem_size: usize,
    ) -> Result<usize, Fail> {
        let n = match count {
            Count::Fixed(n) => n,
            Count::Wire => self.u32::<BE>(op)?,
        };
        let left = self.cur.data.len().saturating_sub(self.cur.pos);
        if n as u64 * elem_size as u64 > left as u64 {
            if matches!(count, Count::Fixed(_)) {
                return Err(self.fail(
                    op,
                    FailKind::Short {
                        need: n as u64 * elem_size as u64,
                    },
                ));
            }
            return Err(self.fail(op, FailKind::Count { count: n, left }));
        }
        Ok(n as usize)
    }

    /// int32 sec + uint32 nanosec → nanoseconds (cannot overflow i64).
    #[inline(always)]
    fn time<const BE: bool>(&mut self, op: usize) -> Result<i64, Fail> {
        let sec = i32::from_le_bytes(self.read::<4, BE>(op)?);
        let nsec = u32::from_le_bytes(self.read::<4, BE>(op)?);
        Ok(sec as i64 * 1_000_000_000 + nsec as i64)
    }

    /// A CDR string's bytes without the terminating NUL (length 0 and a
    /// missing NUL are tolerated).
    #[inline(always)]
    fn string<const BE: bool>(&mut self, op: usize) -> Result<&'a [u8], Fail> {
        let len = self.u32::<BE>(op)? as usize;
        let s = self.take(op, len)?;
        Ok(match s.split_last() {
            Some((0, rest)) => rest,
            _ => s,
        })
    }

    /// A wstring's code units (4 bytes each), raw.
    #[inline(always)]
    fn wstring<const BE: bool>(&mut self, op: usize) -> Result<&'a [u8], Fail> {
        let n = self.count::<BE>(op, Count::Wire, 4)?;
        self.take(op, n * 4)
    }
}

/// Appends a text value; invalid UTF-8 and NUL bytes become U+FFFD.
#[inline(always)]
fn push_text(col: &mut BytesColumn, text: &[u8], out: &mut DecodeOut<'_>) {
    push_text_bytes(&mut col.data, text, out);
    col.offsets.push(col.data.len() as u32);
}

#[inline(always)]
fn push_text_bytes(data: &mut Vec<u8>, text: &[u8], out: &mut DecodeOut<'_>) {
    // Most ROS strings are short ASCII: one pass that also rules out NUL.
    let plain_ascii = text
        .iter()
        .fold(true, |ok, &b| ok & (b.wrapping_sub(1) < 0x7F));
    if plain_ascii || (std::str::from_utf8(text).is_ok() && memchr(0, text).is_none()) {
        data.extend_from_slice(text);
    } else {
        repair_text(data, text);
        out.repaired_strings += 1;
    }
}

#[cold]
fn repair_text(data: &mut Vec<u8>, text: &[u8]) {
    let fixed = String::from_utf8_lossy(text).replace('\0', "\u{FFFD}");
    data.extend_from_slice(fixed.as_bytes());
}

/// 4-byte code units (UTF-32) → UTF-8; invalid code points → U+FFFD.
fn push_wide_text<const BE: bool>(data: &mut Vec<u8>, units: &[u8]) {
    let (words, _) = units.as_chunks::<4>();
    for w in words {
        let v = if BE {
            u32::from_be_bytes(*w)
        } else {
            u32::from_le_bytes(*w)
        };
        let c = match char::from_u32(v) {
            Some('\0') | None => '\u{FFFD}',
            Some(c) => c,
        };
        let mut buf = [0u8; 4];
        data.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
    }
}

/// PostgreSQL binary array header for a one-dimensional array of `n`
/// elements (`{}` has no dimensions), no NULLs.
#[inline(always)]
fn array_header(out: &mut Vec<u8>, n: usize, elem_oid: u32) {
    array_header_flags(out, n, elem_oid, 0);
}

/// Whether `encode_prim_array` copies little-endian elements of `prim` as
/// they are (a uint64 after checking it fits bigint).
fn copied_into_arrays(prim: Primitive) -> bool {
    use Primitive::*;
    matches!(prim, Int16 | Int32 | Int64 | UInt64 | Float32 | Float64)
}

/// The header of a one-dimensional array with elements.
const ARRAY_HEADER_BYTES: usize = 20;

/// A one-dimensional array's header (an empty array has no dimension and
/// flags 0, as `ArrayValue::encode` writes it), written as one copy: this
/// runs once per array value, three times per IMU message.
#[inline(always)]
fn array_header_flags(out: &mut Vec<u8>, n: usize, elem_oid: u32, flags: i32) {
    if n == 0 {
        let mut h = [0u8; 12];
        h[8..12].copy_from_slice(&elem_oid.to_be_bytes());
        out.extend_from_slice(&h);
        return;
    }
    let mut h = [0u8; ARRAY_HEADER_BYTES];
    h[3] = 1;
    h[4..8].copy_from_slice(&flags.to_be_bytes());
    h[8..12].copy_from_slice(&elem_oid.to_be_bytes());
    h[12..16].copy_from_slice(&(n as i32).to_be_bytes());
    h[19] = 1;
    out.extend_from_slice(&h);
}

/// Encodes CDR elements of `src` (raw, `BE` byte order) as a packed array
/// (`types::array`: elements little-endian, no length words) into `out`.
/// Same-width little-endian elements are one copy; widened ones (uint8 →
/// smallint, uint16 → integer, uint32 → bigint) are converted in place in a
/// region sized once. `Err(v)` for a uint64 above i64::MAX (nothing written
/// then matters: the row is rolled back).
fn encode_prim_array<const BE: bool>(
    out: &mut Vec<u8>,
    prim: Primitive,
    src: &[u8],
) -> Result<(), u64> {
    let n = src.len() / prim.size();
    let src = &src[..n * prim.size()];
    macro_rules! fill {
        ($src_n:literal, $dst_n:literal, $oid:expr, |$b:ident| $conv:expr) => {{
            array_header_flags(out, n, $oid, FLAG_PACKED);
            let start = out.len();
            out.resize(start + n * $dst_n, 0);
            let (dst, _) = out[start..].as_chunks_mut::<$dst_n>();
            let (words, _) = src.as_chunks::<$src_n>();
            for (d, w) in dst.iter_mut().zip(words) {
                let mut $b = *w;
                if BE {
                    $b.reverse();
                }
                *d = $conv;
            }
        }};
    }
    // Elements already in the packed form's width and byte order.
    macro_rules! copy {
        ($src_n:literal, $oid:expr) => {{
            if BE {
                fill!($src_n, $src_n, $oid, |b| b)
            } else {
                out.reserve(20 + src.len());
                array_header_flags(out, n, $oid, FLAG_PACKED);
                out.extend_from_slice(src);
            }
        }};
    }
    match prim {
        Primitive::Bool => fill!(1, 1, oid::BOOL, |b| [(b[0] != 0) as u8]),
        Primitive::Int8 => fill!(1, 2, oid::INT2, |b| (b[0] as i8 as i16).to_le_bytes()),
        Primitive::Byte | Primitive::Char | Primitive::UInt8 => {
            fill!(1, 2, oid::INT2, |b| (b[0] as i16).to_le_bytes())
        }
        Primitive::Int16 => copy!(2, oid::INT2),
        Primitive::UInt16 => fill!(2, 4, oid::INT4, |b| (u16::from_le_bytes(b) as i32).to_le_bytes()),
        Primitive::Int32 => copy!(4, oid::INT4),
        Primitive::UInt32 => fill!(4, 8, oid::INT8, |b| (u32::from_le_bytes(b) as i64).to_le_bytes()),
        Primitive::Int64 => copy!(8, oid::INT8),
        Primitive::UInt64 => {
            let (words, _) = src.as_chunks::<8>();
            for w in words {
                let v = if BE {
                    u64::from_be_bytes(*w)
                } else {
                    u64::from_le_bytes(*w)
                };
                if v > i64::MAX as u64 {
                    return Err(v);
                }
            }
            copy!(8, oid::INT8)
        }
        Primitive::Float32 => copy!(4, oid::FLOAT4),
        Primitive::Float64 => copy!(8, oid::FLOAT8),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::array::{ArrayElem, ArrayValue};
    use crate::types::Datum;

    fn le_bytes<T: Copy>(v: &[T], f: impl Fn(T) -> Vec<u8>) -> Vec<u8> {
        v.iter().flat_map(|x| f(*x)).collect()
    }

    /// The tight encoder against `ArrayValue`'s own decoder, both byte orders.
    #[test]
    fn prim_arrays_match_the_array_codec() {
        let f64s = [1.5, -0.0, f64::NAN, f64::INFINITY, f64::NEG_INFINITY];
        // (element type, little-endian input, big-endian input, array element, values)
        type Case = (Primitive, Vec<u8>, Vec<u8>, ArrayElem, Vec<Datum>);
        let cases: Vec<Case> = vec![
            (
                Primitive::Float64,
                le_bytes(&f64s, |x| x.to_le_bytes().to_vec()),
                le_bytes(&f64s, |x| x.to_be_bytes().to_vec()),
                ArrayElem::Float64,
                f64s.iter().map(|&x| Datum::Float64(x)).collect(),
            ),
            (
                Primitive::Float32,
                le_bytes(&[1.25f32, f32::NAN], |x| x.to_le_bytes().to_vec()),
                le_bytes(&[1.25f32, f32::NAN], |x| x.to_be_bytes().to_vec()),
                ArrayElem::Float32,
                vec![Datum::Float32(1.25), Datum::Float32(f32::NAN)],
            ),
            (
                Primitive::Int8,
                vec![0xff, 7],
                vec![0xff, 7],
                ArrayElem::Int16,
                vec![Datum::Int16(-1), Datum::Int16(7)],
            ),
            (
                Primitive::Char,
                vec![0xff, 7],
                vec![0xff, 7],
                ArrayElem::Int16,
                vec![Datum::Int16(255), Datum::Int16(7)],
            ),
            (
                Primitive::UInt16,
                le_bytes(&[65535u16, 1], |x| x.to_le_bytes().to_vec()),
                le_bytes(&[65535u16, 1], |x| x.to_be_bytes().to_vec()),
                ArrayElem::Int32,
                vec![Datum::Int32(65535), Datum::Int32(1)],
            ),
            (
                Primitive::UInt32,
                le_bytes(&[u32::MAX], |x| x.to_le_bytes().to_vec()),
                le_bytes(&[u32::MAX], |x| x.to_be_bytes().to_vec()),
                ArrayElem::Int64,
                vec![Datum::Int64(u32::MAX as i64)],
            ),
            (
                Primitive::Int64,
                le_bytes(&[i64::MIN, 3], |x| x.to_le_bytes().to_vec()),
                le_bytes(&[i64::MIN, 3], |x| x.to_be_bytes().to_vec()),
                ArrayElem::Int64,
                vec![Datum::Int64(i64::MIN), Datum::Int64(3)],
            ),
            (
                Primitive::Bool,
                vec![1, 0, 2],
                vec![1, 0, 2],
                ArrayElem::Bool,
                vec![Datum::Bool(true), Datum::Bool(false), Datum::Bool(true)],
            ),
            (Primitive::Int32, vec![], vec![], ArrayElem::Int32, vec![]),
        ];
        for (prim, le, be, elem, want) in cases {
            for (src, big) in [(&le, false), (&be, true)] {
                let mut out = Vec::new();
                if big {
                    encode_prim_array::<true>(&mut out, prim, src).unwrap();
                } else {
                    encode_prim_array::<false>(&mut out, prim, src).unwrap();
                }
                let got = ArrayValue::decode(&out, elem).unwrap();
                let want_value = ArrayValue::of(want.clone());
                assert_eq!(out, want_value.encode(elem), "{prim:?} big={big}");
                assert_eq!(got.elems.len(), want.len());
            }
        }
        let mut out = Vec::new();
        let too_big = (i64::MAX as u64 + 1).to_le_bytes();
        assert_eq!(
            encode_prim_array::<false>(&mut out, Primitive::UInt64, &too_big),
            Err(i64::MAX as u64 + 1)
        );
    }

    use crate::exec::vector::Column;
    use crate::ingest::mcap::decode::TableColumns;
    use crate::ingest::mcap::layout::ros2_layout;
    use crate::ingest::mcap::ros2msg::parse_ros2msg;

    /// Per table of a batch: rows, columns, which columns are kept once.
    type DecodedBatch = Vec<(usize, Vec<Column>, Vec<bool>)>;

    /// Decodes each payload in turn into one batch, a failing payload
    /// truncated away as `Decoder` does, and gives each one's failure
    /// (field path, offset).
    fn decode_payloads(schema: &str, payloads: &[Vec<u8>]) -> (DecodedBatch, Vec<Option<(String, usize)>>) {
        let parsed = parse_ros2msg("p/msg/T", schema).unwrap();
        let (layout, steps) = ros2_layout(&parsed).unwrap();
        let program = Program::compile(&layout, &steps);
        let mut tables: Vec<TableColumns> = layout.tables.iter().map(TableColumns::new).collect();
        let ctx = MessageCtx {
            recording: b"r",
            log_time: 1,
            publish_time: 2,
            sequence: 3,
            payload_file_offset: None,
            payload_in_chunk: None,
        };
        let mut blobs = Vec::new();
        let mut failures = Vec::new();
        for payload in payloads {
            let before: Vec<usize> = tables.iter().map(|t| t.rows).collect();
            let mut out = DecodeOut {
                blob_threshold: None,
                blobs: &mut blobs,
                repaired_strings: 0,
            };
            let failure = program.decode(payload, &ctx, &mut tables, &mut out).err();
            if failure.is_some() {
                for (t, rows) in tables.iter_mut().zip(before) {
                    t.truncate(rows);
                }
            }
            failures.push(failure.map(|f| (program.field_path(f.op, f.field as usize).to_string(), f.offset)));
        }
        let batch = tables
            .iter_mut()
            .zip(&layout.tables)
            .map(|(t, l)| {
                let rows = t.rows;
                let (columns, repeated) = t.take(l);
                (rows, columns, repeated)
            })
            .collect();
        (batch, failures)
    }

    fn decode_one(schema: &str, payload: &[u8]) -> Result<Vec<Vec<Datum>>, (String, usize)> {
        let (batch, mut failures) = decode_payloads(schema, &[payload.to_vec()]);
        if let Some(failure) = failures.pop().flatten() {
            return Err(failure);
        }
        Ok(batch
            .iter()
            .map(|(rows, columns, repeated)| (0..*rows).flat_map(|r| row_of(columns, repeated, r)).collect())
            .collect())
    }

    fn decode_batch(schema: &str, payloads: &[Vec<u8>]) -> DecodedBatch {
        decode_payloads(schema, payloads).0
    }

    /// A row of the batch, each repeated column's one value read for it.
    fn row_of(columns: &[Column], repeated: &[bool], r: usize) -> Vec<Datum> {
        columns.iter().zip(repeated).map(|(c, &once)| c.datum(if once { 0 } else { r })).collect()
    }

    fn le(parts: &[&[u8]]) -> Vec<u8> {
        let mut v = vec![0, 1, 0, 0];
        for p in parts {
            v.extend_from_slice(p);
        }
        v
    }

    /// Arrays whose values (with their array headers) pass the kept-once
    /// threshold, at the top level and in a child table.
    const REPEAT_SCHEMA: &str = "float64[4] cov\nstring[] names\nInner[] items\n===\nMSG: p/Inner\nfloat64[4] cov\n";

    fn repeat_payload(cov: f64, names: &[&str], items: usize) -> Vec<u8> {
        let mut parts: Vec<Vec<u8>> = Vec::new();
        parts.extend((0..4).map(|i| (cov + i as f64).to_le_bytes().to_vec()));
        parts.push((names.len() as u32).to_le_bytes().to_vec());
        for n in names {
            parts.push((n.len() as u32 + 1).to_le_bytes().to_vec());
            let mut text = n.as_bytes().to_vec();
            text.push(0);
            text.resize(text.len().next_multiple_of(4), 0);
            parts.push(text);
        }
        parts.push((items as u32).to_le_bytes().to_vec());
        // Each item's float64s align to 8 from the body's start.
        let mut body: Vec<u8> = parts.concat();
        body.resize(body.len().next_multiple_of(8), 0);
        for _ in 0..items {
            body.extend((0..4).flat_map(|i| (7.0 + i as f64).to_le_bytes()));
        }
        le(&[&body])
    }

    #[test]
    fn a_value_every_row_repeats_is_kept_once_and_a_different_one_spells_it_out() {
        let names = ["shoulder_pan_joint", "elbow_joint"];
        let same: Vec<Vec<u8>> = (0..20).map(|_| repeat_payload(1.0, &names, 2)).collect();
        let tables = decode_batch(REPEAT_SCHEMA, &same);
        let (rows, columns, repeated) = &tables[0];
        assert_eq!(*rows, 20);
        // recording, log_time, publish_time, sequence, cov, names
        assert_eq!(repeated, &vec![false, false, false, false, true, true]);
        assert_eq!(columns[4].len(), 1, "the covariance is kept once");
        let one = decode_one(REPEAT_SCHEMA, &same[0]).unwrap();
        for r in 0..20 {
            assert_eq!(row_of(columns, repeated, r), one[0]);
        }
        let (child_rows, child_columns, child_repeated) = &tables[1];
        assert_eq!(*child_rows, 40);
        assert_eq!(child_columns.last().unwrap().len(), 1, "a child table's repeated array too");
        assert!(child_repeated.last().unwrap());

        // Row 12 differs: rows 0..12 are spelled out, then row 12's value.
        let mut mixed = same.clone();
        mixed[12] = repeat_payload(2.0, &names, 2);
        let tables = decode_batch(REPEAT_SCHEMA, &mixed);
        let (rows, columns, repeated) = &tables[0];
        assert_eq!(*rows, 20);
        assert_eq!(repeated[4..], [false, true]);
        assert_eq!(columns[4].len(), 20);
        let other = decode_one(REPEAT_SCHEMA, &mixed[12]).unwrap();
        for r in 0..20 {
            let want = if r == 12 { &other[0] } else { &one[0] };
            assert_eq!(&row_of(columns, repeated, r), want, "row {r}");
        }
    }

    #[test]
    fn a_failed_message_leaves_a_kept_once_value_as_it_was() {
        let names = ["a_joint_name_of_some_length", "another_joint_name"];
        let good = repeat_payload(1.0, &names, 1);
        let other = repeat_payload(5.0, &names, 1);
        // A message whose covariance differs but which ends early: the
        // spelled-out rows are taken back to the single value's rows.
        let cut = other[..other.len() - 3].to_vec();
        let mut payloads = vec![good.clone(); 3];
        // First one that ends early after its (equal) covariance was read.
        payloads.push(good[..good.len() - 3].to_vec());
        payloads.push(cut);
        payloads.extend(vec![good.clone(); 17]);
        let tables = decode_batch(REPEAT_SCHEMA, &payloads);
        let (rows, columns, repeated) = &tables[0];
        assert_eq!(*rows, 20);
        let one = decode_one(REPEAT_SCHEMA, &good).unwrap();
        for r in 0..20 {
            assert_eq!(row_of(columns, repeated, r), one[0], "row {r}");
        }
        // The first message failing: nothing is left of it.
        let mut payloads = vec![other[..10].to_vec()];
        payloads.extend(vec![good.clone(); 2]);
        let (rows, columns, repeated) = &decode_batch(REPEAT_SCHEMA, &payloads)[0];
        assert_eq!(*rows, 2);
        assert_eq!(row_of(columns, repeated, 1), one[0]);
    }

    #[test]
    fn runs_of_floats_fuse_but_not_across_a_loop_end() {
        let schema = "float64 before\nInner[] items\nfloat64 after\nfloat32 a\nfloat32 b\n===\nMSG: p/Inner\nfloat64 x\n";
        let payload = le(&[
            &1.5f64.to_le_bytes(),
            &2u32.to_le_bytes(),
            &[0; 4],
            &10.0f64.to_le_bytes(),
            &20.0f64.to_le_bytes(),
            &3.5f64.to_le_bytes(),
            &0.25f32.to_le_bytes(),
            &0.5f32.to_le_bytes(),
        ]);
        let rows = decode_one(schema, &payload).unwrap();
        assert_eq!(
            rows[0][4..],
            [
                Datum::Float64(1.5),
                Datum::Float64(3.5),
                Datum::Float32(0.25),
                Datum::Float32(0.5)
            ]
        );
        let xs: Vec<&Datum> = rows[1].iter().skip(4).step_by(5).collect();
        assert_eq!(xs, [&Datum::Float64(10.0), &Datum::Float64(20.0)]);
        // A run cut short names the first field that does not fit.
        let e = decode_one(schema, &payload[..payload.len() - 2]).unwrap_err();
        assert_eq!(e, ("b".to_string(), 4 + 44));
        let pose = "Pose p\n===\nMSG: p/Pose\nfloat64 x\nfloat64 y\nfloat64 z\n";
        let e = decode_one(pose, &le(&[&[0; 20]])).unwrap_err();
        assert_eq!(e, ("p.z".to_string(), 4 + 16));
    }

    #[test]
    fn time_and_duration_arrays_are_packed_as_the_array_codec_packs_them() {
        let schema = "builtin_interfaces/Time[] times\nbuiltin_interfaces/Duration[2] waits\n";
        // Two Times (1.5 s + 7 ns after 1970, 1 ns before it), then two Durations.
        let payload = le(&[
            &2u32.to_le_bytes(),
            &1i32.to_le_bytes(),
            &500_000_007u32.to_le_bytes(),
            &(-1i32).to_le_bytes(),
            &999_999_999u32.to_le_bytes(),
            &0i32.to_le_bytes(),
            &3u32.to_le_bytes(),
            &(-2i32).to_le_bytes(),
            &0u32.to_le_bytes(),
        ]);
        let rows = decode_one(schema, &payload).unwrap();
        let times = vec![Datum::Int64(1_500_000_007), Datum::Int64(-1)];
        let waits = vec![Datum::Int64(3), Datum::Int64(-2_000_000_000)];
        for (value, elem, want) in [(&rows[0][4], ArrayElem::TimestampTz, times), (&rows[0][5], ArrayElem::Int64, waits)] {
            let Datum::Bytes(bytes) = value else { panic!("{value:?}") };
            // Nanoseconds kept, and byte for byte the canonical form.
            assert_eq!(ArrayValue::decode(bytes, elem).unwrap().elems, want);
            assert_eq!(*bytes, ArrayValue::of(want).encode(elem));
        }
    }
}
