//! Sequences: the values nextval() hands out (serial and identity columns,
//! CREATE SEQUENCE), setval(), and what keeps a value from being handed out
//! twice across a crash. The catalog file holds each sequence's *reserved*
//! position: before nextval returns a value the file does not yet cover, the
//! caller saves the catalog with a reservation further on (doubling, from
//! 1,024 values up to 2^20, so a bulk INSERT saves a few times, not once a
//! row) and then marks it durable. A restart continues from the reservation:
//! values in between are skipped, never repeated (PostgreSQL also skips the
//! values it logged ahead).
//! Must not: save the catalog itself (it lives inside it; the caller saves).

use std::sync::Mutex;

use crate::error::{sqlstate, DbError, DbResult};

/// CREATE SEQUENCE's options (a serial or identity column's are the defaults).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SequenceSettings {
    pub increment: i64,
    pub min: i64,
    pub max: i64,
    pub start: i64,
    pub cycle: bool,
}

impl Default for SequenceSettings {
    fn default() -> Self {
        SequenceSettings { increment: 1, min: 1, max: i64::MAX, start: 1, cycle: false }
    }
}

#[derive(Debug)]
pub struct Sequence {
    pub oid: u32,
    pub name: String,
    pub settings: SequenceSettings,
    state: Mutex<SequenceState>,
}

#[derive(Debug)]
struct SequenceState {
    /// The value nextval hands out next (past a bound once exhausted).
    next: i128,
    /// Where a catalog saved now resumes the sequence.
    reserved: i128,
    /// What a saved catalog is known to cover: values before it (in the
    /// sequence's direction) may be handed out without another save.
    durable: i128,
    /// Values the last reservation took.
    chunk: i128,
}

/// A value handed out (or set) that a catalog saved with `reserved` covers:
/// the caller saves the catalog, then calls [`Sequence::mark_durable`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SaveNeeded(i128);

const FIRST_CHUNK: i128 = 1024;
const LAST_CHUNK: i128 = 1 << 20;

impl Sequence {
    /// A sequence with the default settings (a serial column's).
    pub fn new(oid: u32, name: String) -> Sequence {
        Sequence::with_settings(oid, name, SequenceSettings::default())
    }

    pub fn with_settings(oid: u32, name: String, settings: SequenceSettings) -> Sequence {
        let start = settings.start as i128;
        Sequence {
            oid,
            name,
            settings,
            state: Mutex::new(SequenceState { next: start, reserved: start, durable: start, chunk: 0 }),
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, SequenceState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Whether `a` comes after `b` in the sequence's direction.
    fn after(&self, a: i128, b: i128) -> bool {
        if self.settings.increment > 0 {
            a > b
        } else {
            a < b
        }
    }

    /// nextval(): the next value (never one handed out before, across
    /// sessions and restarts), and whether the catalog must be saved before
    /// it is returned; 2200H once a sequence without CYCLE is exhausted.
    pub fn next_value(&self) -> DbResult<(i64, Option<SaveNeeded>)> {
        let s = &self.settings;
        let (inc, min, max) = (s.increment as i128, s.min as i128, s.max as i128);
        let mut state = self.state();
        let mut v = state.next;
        let mut wrapped = false;
        if v > max || v < min {
            if !s.cycle {
                let (which, bound) = if inc > 0 { ("maximum", s.max) } else { ("minimum", s.min) };
                return Err(DbError::new(
                    "2200H",
                    format!("nextval: reached {which} value of sequence \"{}\" ({bound})", self.name),
                ));
            }
            v = if inc > 0 { min } else { max };
            wrapped = true;
        }
        state.next = v + inc;
        let save = if wrapped || !self.after(state.durable, v) {
            if wrapped || !self.after(state.reserved, v) {
                state.chunk = (state.chunk * 2).clamp(FIRST_CHUNK, LAST_CHUNK);
                // At most one step past the bound: resumed there, the
                // sequence is exhausted (or wraps) as it would be.
                let ahead = v + inc * state.chunk;
                state.reserved = if inc > 0 { ahead.min(max + inc) } else { ahead.max(min + inc) };
            }
            Some(SaveNeeded(state.reserved))
        } else {
            None
        };
        Ok((v as i64, save))
    }

    /// setval(v, is_called): nextval next returns `v + increment`
    /// (`is_called`) or `v`; 22003 when `v` is outside the bounds.
    pub fn set_value(&self, v: i64, is_called: bool) -> DbResult<SaveNeeded> {
        let s = &self.settings;
        if v < s.min || v > s.max {
            return Err(DbError::new(
                sqlstate::NUMERIC_VALUE_OUT_OF_RANGE,
                format!("setval: value {v} is out of bounds for sequence \"{}\" ({}..{})", self.name, s.min, s.max),
            ));
        }
        let mut state = self.state();
        state.next = v as i128 + if is_called { s.increment as i128 } else { 0 };
        state.reserved = state.next;
        state.durable = state.next;
        state.chunk = 0;
        Ok(SaveNeeded(state.next))
    }

    /// A catalog holding at least `saved`'s reservation is on disk.
    pub fn mark_durable(&self, saved: SaveNeeded) {
        let mut state = self.state();
        // The current reservation (also one that wrapped around), or a later one than known.
        if saved.0 == state.reserved || self.after(saved.0, state.durable) {
            state.durable = saved.0;
        }
    }

    /// Where the sequence resumes after a restart from a catalog saved now.
    pub fn saved_position(&self) -> i64 {
        let state = self.state();
        let at = if self.after(state.reserved, state.next) { state.reserved } else { state.next };
        at.clamp(i64::MIN as i128, i64::MAX as i128) as i64
    }

    /// Loading a saved catalog: the sequence resumes at `position`.
    pub fn resume_at(&self, position: i64) {
        let mut state = self.state();
        let p = position as i128;
        *state = SequenceState { next: p, reserved: p, durable: p, chunk: 0 };
    }

    /// Moves the sequence past `used` (recovery: never hand out a value a row holds).
    pub fn advance_past(&self, used: i64) {
        let mut state = self.state();
        let past = used as i128 + self.settings.increment as i128;
        if self.after(past, state.next) {
            state.next = past;
        }
        if self.after(state.next, state.reserved) {
            state.reserved = state.next;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Hands out `n` values, "saving" the catalog when asked (it holds the
    /// sequence's saved_position() as of then, kept in `file`) and marking
    /// the save durable; returns the values and how many saves there were.
    fn take(seq: &Sequence, n: usize, file: &mut i64) -> (Vec<i64>, usize) {
        let (mut values, mut saves) = (Vec::new(), 0);
        for _ in 0..n {
            let (v, save) = seq.next_value().unwrap();
            if let Some(s) = save {
                saves += 1;
                *file = seq.saved_position();
                seq.mark_durable(s);
            }
            values.push(v);
        }
        (values, saves)
    }

    #[test]
    fn values_are_never_handed_out_again_after_a_restart_from_the_last_saved_catalog() {
        let mut file = 1;
        let mut seq = Sequence::new(1, "s".into());
        let mut seen = std::collections::HashSet::new();
        let mut saves_total = 0;
        for round in 0..6 {
            let (values, saves) = take(&seq, 3000 * (round + 1), &mut file);
            saves_total += saves;
            for v in values {
                assert!(seen.insert(v), "{v} handed out twice");
            }
            // A crash: the restart resumes where the last saved catalog says.
            seq = Sequence::new(1, "s".into());
            seq.resume_at(file);
        }
        assert!(saves_total < 40, "{saves_total} saves for 63,000 values");
    }

    #[test]
    fn increments_bounds_cycles_and_setval() {
        let down = Sequence::with_settings(1, "d".into(), SequenceSettings { start: 10, min: 5, max: 10, increment: -2, cycle: true });
        assert_eq!(take(&down, 5, &mut 0).0, vec![10, 8, 6, 10, 8]);
        let capped = Sequence::with_settings(1, "c".into(), SequenceSettings { max: 3, ..Default::default() });
        assert_eq!(take(&capped, 3, &mut 0).0, vec![1, 2, 3]);
        let e = capped.next_value().unwrap_err();
        assert_eq!(e.code, "2200H");
        assert!(e.message.contains("reached maximum value of sequence \"c\" (3)"), "{}", e.message);
        let seq = Sequence::new(1, "s".into());
        seq.mark_durable(seq.set_value(41, true).unwrap());
        assert_eq!(take(&seq, 2, &mut 0).0, vec![42, 43]);
        seq.mark_durable(seq.set_value(7, false).unwrap());
        assert_eq!(take(&seq, 1, &mut 0).0, vec![7]);
        assert_eq!(seq.set_value(0, true).unwrap_err().code, "22003");
        // Recovery moves past the values rows hold.
        seq.advance_past(100);
        assert_eq!(take(&seq, 1, &mut 0).0, vec![101]);
    }
}
