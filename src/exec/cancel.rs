//! The stop signal of a session's running statement: raised from outside
//! (a CancelRequest, pg_cancel_backend, the statement_timeout timer,
//! pg_terminate_backend), polled by operators and shard fragments between
//! batches, which then fail with the error that names the reason.
//! Must not: wait, wake tasks or know about sessions — the wire layer owns
//! the timer and the termination of the connection.

use std::sync::atomic::{AtomicU8, Ordering};

use crate::error::{sqlstate, DbError, DbResult};

/// Why a statement must stop, in rising precedence: a termination is never
/// downgraded to a cancel, nor a timeout to a user cancel.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
#[repr(u8)]
pub enum StopReason {
    UserRequest = 1,
    StatementTimeout = 2,
    /// pg_terminate_backend: the statement stops and the connection closes.
    Terminate = 3,
}

impl StopReason {
    fn from_u8(v: u8) -> Option<StopReason> {
        match v {
            1 => Some(StopReason::UserRequest),
            2 => Some(StopReason::StatementTimeout),
            3 => Some(StopReason::Terminate),
            _ => None,
        }
    }

    /// The error PostgreSQL reports for this reason.
    pub fn error(self) -> DbError {
        match self {
            StopReason::UserRequest => DbError::canceled(),
            StopReason::StatementTimeout => DbError::new(
                sqlstate::QUERY_CANCELED,
                "canceling statement due to statement timeout",
            ),
            StopReason::Terminate => DbError::new(
                sqlstate::ADMIN_SHUTDOWN,
                "terminating connection due to administrator command",
            )
            .fatal(),
        }
    }
}

/// A session's stop flag, shared (in an `Arc`) by the session, the server's
/// signal registry, and the operators and fragments of the running statement.
#[derive(Debug, Default)]
pub struct CancelFlag {
    reason: AtomicU8,
}

impl CancelFlag {
    pub fn new() -> CancelFlag {
        CancelFlag::default()
    }

    /// Asks the running statement to stop (keeps a stronger reason already raised).
    pub fn raise(&self, reason: StopReason) {
        self.reason.fetch_max(reason as u8, Ordering::Relaxed);
    }

    /// A new statement starts: earlier cancels and timeouts are forgotten,
    /// a termination is not.
    pub fn clear(&self) {
        let _ = self.reason.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |r| {
            (r != StopReason::Terminate as u8).then_some(0)
        });
    }

    pub fn raised(&self) -> Option<StopReason> {
        StopReason::from_u8(self.reason.load(Ordering::Relaxed))
    }

    pub fn is_terminating(&self) -> bool {
        self.raised() == Some(StopReason::Terminate)
    }

    /// Ok while the statement may go on; the reason's error once raised.
    pub fn check(&self) -> DbResult<()> {
        match self.raised() {
            None => Ok(()),
            Some(reason) => Err(reason.error()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stronger_reasons_win_and_clear_keeps_a_termination() {
        let f = CancelFlag::new();
        assert!(f.check().is_ok());
        f.raise(StopReason::StatementTimeout);
        f.raise(StopReason::UserRequest);
        let e = f.check().unwrap_err();
        assert_eq!(e.code, sqlstate::QUERY_CANCELED);
        assert!(e.message.contains("statement timeout"));
        f.clear();
        assert!(f.check().is_ok());
        f.raise(StopReason::Terminate);
        f.raise(StopReason::UserRequest);
        f.clear();
        assert!(f.is_terminating());
        assert_eq!(f.check().unwrap_err().code, sqlstate::ADMIN_SHUTDOWN);
    }
}
