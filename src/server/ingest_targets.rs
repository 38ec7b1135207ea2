//! The tables running recording ingests write to (MCAP COPY and HTTP PUT),
//! so that a failed ingest removes a table it created only while no other
//! ingest is about to write into it.
//!
//! Why: a recording is stored whole or not at all, tables included; but the
//! tables an ingest creates are in the catalog at once, and a second ingest
//! into the same schema may find one and write into it before the first
//! fails. Each ingest claims every table it will write to (after finding or
//! creating it, then checks that it still exists); the removal checks, under
//! this registry's lock, that nobody holds a claim.
//!
//! Must not: decide whether a table is empty or remove it (the session does,
//! through [`IngestTargets::if_unclaimed`]).

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};

/// Claims per table OID.
#[derive(Default)]
pub struct IngestTargets {
    claims: Mutex<HashMap<u32, usize>>,
}

impl IngestTargets {
    fn counts(&self) -> std::sync::MutexGuard<'_, HashMap<u32, usize>> {
        // The map stays consistent under a panic elsewhere: each change is one insert or remove.
        self.claims.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Runs `remove` while no ingest claims `oid`, holding the registry so
    /// that no claim is taken meanwhile; `None` when one is held.
    pub fn if_unclaimed<R>(&self, oid: u32, remove: impl FnOnce() -> R) -> Option<R> {
        let counts = self.counts();
        if counts.contains_key(&oid) {
            return None;
        }
        let r = remove();
        drop(counts);
        Some(r)
    }
}

/// One ingest's claims, released when it ends (or is dropped on any path).
pub struct TableClaims {
    targets: Arc<IngestTargets>,
    held: HashSet<u32>,
}

impl TableClaims {
    pub fn new(targets: Arc<IngestTargets>) -> TableClaims {
        TableClaims {
            targets,
            held: HashSet::new(),
        }
    }

    /// Claims `oid` (once per ingest).
    pub fn claim(&mut self, oid: u32) {
        if self.held.insert(oid) {
            *self.targets.counts().entry(oid).or_insert(0) += 1;
        }
    }

    /// Gives up the claim on `oid`.
    pub fn release(&mut self, oid: u32) {
        if self.held.remove(&oid) {
            unclaim(&mut self.targets.counts(), oid);
        }
    }

    /// Gives up every claim.
    pub fn release_all(&mut self) {
        let mut counts = self.targets.counts();
        for oid in self.held.drain() {
            unclaim(&mut counts, oid);
        }
    }
}

fn unclaim(counts: &mut HashMap<u32, usize>, oid: u32) {
    if let Some(n) = counts.get_mut(&oid) {
        *n -= 1;
        if *n == 0 {
            counts.remove(&oid);
        }
    }
}

impl Drop for TableClaims {
    fn drop(&mut self) {
        self.release_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_table_is_removable_only_once_every_claim_on_it_is_released() {
        let targets = Arc::new(IngestTargets::default());
        let mut a = TableClaims::new(targets.clone());
        let mut b = TableClaims::new(targets.clone());
        a.claim(7);
        a.claim(7);
        b.claim(7);
        b.claim(8);
        assert_eq!(targets.if_unclaimed(7, || ()), None);
        a.release_all();
        assert_eq!(targets.if_unclaimed(7, || ()), None, "b still claims it");
        b.release(7);
        assert_eq!(targets.if_unclaimed(7, || "removed"), Some("removed"));
        assert_eq!(targets.if_unclaimed(8, || ()), None);
        drop(b);
        assert_eq!(targets.if_unclaimed(8, || ()), Some(()), "dropping the claims releases them");
    }
}
