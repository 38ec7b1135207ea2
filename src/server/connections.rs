//! Live wire sessions counted for the connection limits: the server's
//! `--max-connections` and each role's CONNECTION LIMIT (superusers are not
//! held to the role limit, as in PostgreSQL). A session takes a
//! `ConnectionSlot` once authenticated; the slot rides in its
//! `SessionRegistration`, so any end of the session (Terminate, a dropped
//! socket, a panic) gives it back.
//! Must not: authenticate, or count anything but sessions past authentication.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use crate::error::{DbError, DbResult};

const TOO_MANY_CONNECTIONS: &str = "53300";

#[derive(Default)]
struct Counts {
    total: usize,
    /// Sessions per role OID.
    per_role: HashMap<u32, usize>,
}

#[derive(Default)]
pub struct Connections {
    counts: Arc<Mutex<Counts>>,
}

/// What the limits need to know of the connecting role.
pub struct Admission<'a> {
    /// The role's OID and name; None for a trust login under a name that is no role.
    pub role: Option<(u32, &'a str)>,
    /// -1 = none.
    pub role_limit: i32,
    pub superuser: bool,
}

impl Connections {
    /// Takes a slot, or 53300 when the server or the role is full.
    pub fn admit(&self, max_connections: usize, who: Admission) -> DbResult<ConnectionSlot> {
        let mut c = self.counts.lock().unwrap_or_else(|p| p.into_inner());
        if c.total >= max_connections {
            return Err(
                DbError::new(TOO_MANY_CONNECTIONS, "sorry, too many clients already").fatal(),
            );
        }
        if let Some((oid, name)) = who.role {
            let used = c.per_role.get(&oid).copied().unwrap_or(0);
            if who.role_limit >= 0 && !who.superuser && used >= who.role_limit as usize {
                return Err(DbError::new(
                    TOO_MANY_CONNECTIONS,
                    format!("too many connections for role \"{name}\""),
                )
                .fatal());
            }
            *c.per_role.entry(oid).or_insert(0) += 1;
        }
        c.total += 1;
        Ok(ConnectionSlot {
            counts: self.counts.clone(),
            role: who.role.map(|(oid, _)| oid),
        })
    }

    /// Sessions counted now (all roles).
    pub fn total(&self) -> usize {
        self.counts.lock().unwrap_or_else(|p| p.into_inner()).total
    }
}

/// One counted session; dropping it frees the place.
pub struct ConnectionSlot {
    counts: Arc<Mutex<Counts>>,
    role: Option<u32>,
}

impl Drop for ConnectionSlot {
    fn drop(&mut self) {
        let mut c = self.counts.lock().unwrap_or_else(|p| p.into_inner());
        c.total = c.total.saturating_sub(1);
        if let Some(oid) = self.role {
            if let Some(n) = c.per_role.get_mut(&oid) {
                *n -= 1;
                if *n == 0 {
                    c.per_role.remove(&oid);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_and_release() {
        let c = Connections::default();
        let who = |limit, superuser| Admission {
            role: Some((5, "alice")),
            role_limit: limit,
            superuser,
        };
        let a = c.admit(3, who(1, false)).unwrap();
        let e = c.admit(3, who(1, false)).err().unwrap();
        assert_eq!(e.message, "too many connections for role \"alice\"");
        let b = c.admit(3, who(1, true)).unwrap();
        let d = c.admit(3, who(-1, false)).unwrap();
        assert_eq!(
            c.admit(3, who(-1, false)).err().unwrap().message,
            "sorry, too many clients already"
        );
        drop((a, b, d));
        assert_eq!(c.total(), 0);
        let _a = c.admit(3, who(1, false)).unwrap();
    }
}
