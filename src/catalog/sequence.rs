//! Sequences: the values nextval() hands out (serial and identity columns,
//! CREATE SEQUENCE), setval(), and what keeps a value from being handed out
//! twice across a crash. The catalog file holds each sequence's *reserved*
//! position: before nextval returns a value the file does not yet cover, the
//! caller saves the catalog with a reservation further on (doubling, from
//! 1,024 values up to 2^20, so a bulk INSERT saves a few times, not once a
//! row) and then marks it durable. A restart continues from the reservation:
//! values in between are skipped, never repeated (PostgreSQL also skips the
//! values it logged ahead).
//! ALTER SEQUENCE changes a sequence's settings in place, so every plan
//! holding it sees them.
//! Must not: save the catalog itself (it lives inside it; the caller saves).

use std::sync::Mutex;

use crate::error::{sqlstate, DbError, DbResult};
use crate::types::DataType;

/// CREATE SEQUENCE's options (a serial or identity column's are the defaults).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SequenceSettings {
    /// `AS`: smallint, integer or bigint (the bounds' defaults; pg_sequence's seqtypid).
    pub data_type: DataType,
    pub increment: i64,
    pub min: i64,
    pub max: i64,
    pub start: i64,
    /// CACHE: shown in the catalogs; values are reserved ahead regardless.
    pub cache: i64,
    pub cycle: bool,
}

impl Default for SequenceSettings {
    fn default() -> Self {
        SequenceSettings { data_type: DataType::Int64, increment: 1, min: 1, max: i64::MAX, start: 1, cache: 1, cycle: false }
    }
}

#[derive(Debug)]
pub struct Sequence {
    pub oid: u32,
    pub name: String,
    state: Mutex<SequenceState>,
}

#[derive(Debug)]
struct SequenceState {
    settings: SequenceSettings,
    /// Whether nextval has returned `next - increment` (PostgreSQL's
    /// is_called): pg_sequences shows a last value only then.
    called: bool,
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
            state: Mutex::new(SequenceState { settings, called: false, next: start, reserved: start, durable: start, chunk: 0 }),
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, SequenceState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub fn settings(&self) -> SequenceSettings {
        self.state().settings
    }

    /// The value nextval last returned (or setval set with is_called), None
    /// before any: pg_sequences' last_value.
    pub fn last_value(&self) -> Option<i64> {
        let state = self.state();
        state.called.then(|| (state.next - state.settings.increment as i128).clamp(i64::MIN as i128, i64::MAX as i128) as i64)
    }

    /// A sequence read as a relation: (last_value, is_called) as PostgreSQL
    /// shows them: the value last handed out, or the one nextval returns
    /// next when none is (is_called false).
    pub fn position(&self) -> (i64, bool) {
        let state = self.state();
        let last = if state.called { state.next - state.settings.increment as i128 } else { state.next };
        (last.clamp(i64::MIN as i128, i64::MAX as i128) as i64, state.called)
    }

    /// ALTER SEQUENCE: new settings (checked by the caller) and, with
    /// RESTART, the value nextval returns next. The position is not
    /// reserved ahead any more: the caller saves the catalog before
    /// another value is handed out.
    pub fn alter(&self, settings: SequenceSettings, restart: Option<i64>) -> SaveNeeded {
        let mut state = self.state();
        state.settings = settings;
        if let Some(v) = restart {
            state.next = v as i128;
            state.called = false;
        }
        state.reserved = state.next;
        state.durable = state.next;
        state.chunk = 0;
        SaveNeeded(state.next)
    }

    /// nextval(): the next value (never one handed out before, across
    /// sessions and restarts), and whether the catalog must be saved before
    /// it is returned; 2200H once a sequence without CYCLE is exhausted.
    pub fn next_value(&self) -> DbResult<(i64, Option<SaveNeeded>)> {
        let mut state = self.state();
        let s = state.settings;
        let (inc, min, max) = (s.increment as i128, s.min as i128, s.max as i128);
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
        state.called = true;
        let save = if wrapped || !state.after(state.durable, v) {
            if wrapped || !state.after(state.reserved, v) {
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
        let mut state = self.state();
        let s = state.settings;
        if v < s.min || v > s.max {
            return Err(DbError::new(
                sqlstate::NUMERIC_VALUE_OUT_OF_RANGE,
                format!("setval: value {v} is out of bounds for sequence \"{}\" ({}..{})", self.name, s.min, s.max),
            ));
        }
        state.next = v as i128 + if is_called { s.increment as i128 } else { 0 };
        state.called = is_called;
        state.reserved = state.next;
        state.durable = state.next;
        state.chunk = 0;
        Ok(SaveNeeded(state.next))
    }

    /// A catalog holding at least `saved`'s reservation is on disk.
    pub fn mark_durable(&self, saved: SaveNeeded) {
        let mut state = self.state();
        // The current reservation (also one that wrapped around), or a later one than known.
        if saved.0 == state.reserved || state.after(saved.0, state.durable) {
            state.durable = saved.0;
        }
    }

    /// Where the sequence resumes after a restart from a catalog saved now.
    pub fn saved_position(&self) -> i64 {
        let state = self.state();
        let at = if state.after(state.reserved, state.next) { state.reserved } else { state.next };
        at.clamp(i64::MIN as i128, i64::MAX as i128) as i64
    }

    /// Loading a saved catalog: the sequence resumes at `position`
    /// (`called`: whether it had handed out a value before).
    pub fn resume_at(&self, position: i64, called: bool) {
        let mut state = self.state();
        let p = position as i128;
        let settings = state.settings;
        *state = SequenceState { settings, called, next: p, reserved: p, durable: p, chunk: 0 };
    }

    /// Whether nextval has handed out a value (or setval set one as called).
    pub fn is_called(&self) -> bool {
        self.state().called
    }

    /// Moves the sequence past `used` (recovery: never hand out a value a row holds).
    pub fn advance_past(&self, used: i64) {
        let mut state = self.state();
        let past = used as i128 + state.settings.increment as i128;
        if state.after(past, state.next) {
            state.next = past;
            state.called = true;
        }
        if state.after(state.next, state.reserved) {
            state.reserved = state.next;
        }
    }
}

/// One session's currval()/lastval() state: the value nextval last returned
/// to it (or setval set as called) per sequence OID, and the last sequence
/// nextval advanced for it. Sessions share nothing here.
#[derive(Debug, Default)]
pub struct SessionSequenceValues {
    values: Mutex<SessionValues>,
}

#[derive(Debug, Default)]
struct SessionValues {
    current: std::collections::HashMap<u32, i64>,
    /// The sequence (OID) and value of the last nextval.
    last: Option<(u32, i64)>,
}

impl SessionSequenceValues {
    fn lock(&self) -> std::sync::MutexGuard<'_, SessionValues> {
        self.values.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// nextval returned `value` of `sequence` to the session.
    pub fn handed_out(&self, sequence: &Sequence, value: i64) {
        let mut v = self.lock();
        v.current.insert(sequence.oid, value);
        v.last = Some((sequence.oid, value));
    }

    /// setval(…, is_called true): currval returns `value`; lastval is unchanged.
    pub fn set(&self, sequence: &Sequence, value: i64) {
        self.lock().current.insert(sequence.oid, value);
    }

    /// currval(): 55000 before nextval ran on the sequence in this session.
    pub fn current(&self, sequence: &Sequence) -> DbResult<i64> {
        self.lock().current.get(&sequence.oid).copied().ok_or_else(|| {
            DbError::new(
                sqlstate::OBJECT_NOT_IN_PREREQUISITE_STATE,
                format!("currval of sequence \"{}\" is not yet defined in this session", sequence.name),
            )
        })
    }

    /// lastval(): 55000 before any nextval in this session.
    pub fn last(&self) -> DbResult<i64> {
        self.lock().last.map(|(_, v)| v).ok_or_else(lastval_undefined)
    }

    /// The sequence lastval() reads (its OID), if any.
    pub fn last_sequence(&self) -> Option<u32> {
        self.lock().last.map(|(oid, _)| oid)
    }
}

/// lastval() before a nextval, or after its sequence was dropped.
pub fn lastval_undefined() -> DbError {
    DbError::new(sqlstate::OBJECT_NOT_IN_PREREQUISITE_STATE, "lastval is not yet defined in this session")
}

impl SequenceState {
    /// Whether `a` comes after `b` in the sequence's direction.
    fn after(&self, a: i128, b: i128) -> bool {
        if self.settings.increment > 0 {
            a > b
        } else {
            a < b
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
            seq.resume_at(file, true);
        }
        assert!(saves_total < 40, "{saves_total} saves for 63,000 values");
    }

    #[test]
    fn increments_bounds_cycles_and_setval() {
        let down = Sequence::with_settings(1, "d".into(), SequenceSettings { start: 10, min: 5, max: 10, increment: -2, cycle: true, ..Default::default() });
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

    #[test]
    fn alter_keeps_the_position_unless_restarted_and_needs_a_save_before_the_next_value() {
        let seq = Sequence::new(1, "s".into());
        assert_eq!(seq.position(), (1, false));
        assert_eq!(take(&seq, 3, &mut 0).0, vec![1, 2, 3]);
        assert_eq!((seq.position(), seq.last_value()), ((3, true), Some(3)));
        let saved = seq.alter(SequenceSettings { increment: 10, ..Default::default() }, None);
        seq.mark_durable(saved);
        // Nothing reserved ahead: the first value after ALTER asks for a save.
        let (v, save) = seq.next_value().unwrap();
        assert_eq!((v, save.is_some()), (4, true));
        seq.mark_durable(save.unwrap());
        assert_eq!(take(&seq, 1, &mut 0).0, vec![14]);
        seq.alter(seq.settings(), Some(100));
        assert_eq!((seq.position(), seq.last_value()), ((100, false), None));
        assert_eq!(take(&seq, 2, &mut 0).0, vec![100, 110]);
    }

    #[test]
    fn session_values_follow_nextval_and_setval_as_postgres_does() {
        let (a, b) = (Sequence::new(1, "a".into()), Sequence::new(2, "b".into()));
        let session = SessionSequenceValues::default();
        assert_eq!(session.last().unwrap_err().code, "55000");
        assert!(session.current(&a).unwrap_err().message.contains("currval of sequence \"a\" is not yet defined"));
        session.handed_out(&a, 5);
        session.handed_out(&b, 9);
        session.set(&a, 40);
        assert_eq!((session.current(&a).unwrap(), session.current(&b).unwrap(), session.last().unwrap()), (40, 9, 9));
    }
}
