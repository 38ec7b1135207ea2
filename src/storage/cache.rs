//! A shard's block cache: compressed blocks of segment files in their cache
//! form (`segment::column::CachedBlock`: verified once, light encodings),
//! keyed by (segment, column, block group), bounded in bytes. Scans decode
//! from it straight into executor vectors; a hit costs no I/O, a miss is
//! read through the shard's io_uring ring. Eviction drops the least
//! recently used quarter when the bound is passed.
//! Must not: hold decoded data or be shared between shards.

use std::collections::HashMap;
use std::rc::Rc;

use super::segment::column::CachedBlock;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct BlockKey {
    pub segment: u64,
    pub column: u32,
    pub group: u32,
}

#[derive(Debug)]
pub struct BlockCache {
    limit: usize,
    bytes: usize,
    tick: u64,
    entries: HashMap<BlockKey, (Rc<CachedBlock>, u64)>,
    pub hits: u64,
    pub misses: u64,
}

impl BlockCache {
    pub fn new(limit: usize) -> BlockCache {
        BlockCache {
            limit,
            bytes: 0,
            tick: 0,
            entries: HashMap::new(),
            hits: 0,
            misses: 0,
        }
    }

    pub fn get(&mut self, key: &BlockKey) -> Option<Rc<CachedBlock>> {
        self.tick += 1;
        let tick = self.tick;
        match self.entries.get_mut(key) {
            Some((b, used)) => {
                *used = tick;
                self.hits += 1;
                Some(b.clone())
            }
            None => {
                self.misses += 1;
                None
            }
        }
    }

    pub fn insert(&mut self, key: BlockKey, bytes: Rc<CachedBlock>) {
        if bytes.size() > self.limit {
            return;
        }
        self.tick += 1;
        self.bytes += bytes.size();
        if let Some((old, _)) = self.entries.insert(key, (bytes, self.tick)) {
            self.bytes -= old.size();
        }
        if self.bytes > self.limit {
            self.evict();
        }
    }

    /// Drops every block of a segment (it was retired).
    pub fn forget_segment(&mut self, segment: u64) {
        let mut freed = 0;
        self.entries.retain(|k, (b, _)| {
            let keep = k.segment != segment;
            if !keep {
                freed += b.size();
            }
            keep
        });
        self.bytes -= freed;
    }

    pub fn bytes(&self) -> usize {
        self.bytes
    }

    fn evict(&mut self) {
        let mut by_age: Vec<(u64, BlockKey)> =
            self.entries.iter().map(|(k, (_, t))| (*t, *k)).collect();
        by_age.sort_unstable_by_key(|(t, _)| *t);
        let target = self.limit - self.limit / 4;
        for (_, k) in by_age {
            if self.bytes <= target {
                break;
            }
            if let Some((b, _)) = self.entries.remove(&k) {
                self.bytes -= b.size();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stays_within_its_bound_and_keeps_recent_blocks() {
        let mut c = BlockCache::new(1000);
        let key = |g| BlockKey {
            segment: 1,
            column: 0,
            group: g,
        };
        for g in 0..50 {
            let block = CachedBlock {
                header: Default::default(),
                payload: vec![0u8; 60],
            };
            c.insert(key(g), Rc::new(block));
            assert!(c.bytes() <= 1000);
            c.get(&key(0));
        }
        assert!(c.get(&key(0)).is_some(), "a block in constant use survives");
        assert!(c.get(&key(49)).is_some());
        assert!(c.get(&key(1)).is_none());
        c.forget_segment(1);
        assert_eq!(c.bytes(), 0);
    }
}
