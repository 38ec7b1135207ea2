//! A shard's block cache: compressed blocks of segment files in their cache
//! form (`segment::column::CachedBlock`: verified once, light encodings),
//! keyed by (segment, column, block group), bounded in bytes. Scans decode
//! from it straight into executor vectors; a hit costs no I/O, a miss is
//! read through the shard's io_uring ring. Eviction drops the least
//! recently used quarter when the bound is passed.
//! Must not: hold decoded data or be shared between shards.

use hashbrown::HashMap;
use std::rc::Rc;

use super::segment::column::CachedBlock;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct BlockKey {
    pub segment: u64,
    pub column: u32,
    pub group: u32,
}

/// One cached block and the tick of its last use.
type Slot = Option<(Rc<CachedBlock>, u64)>;

/// A segment's cached blocks, by column then block group: a scan reads a
/// column's groups in order, so a lookup is an index into a dense vector
/// (one map lookup per block showed in profiles of scans over thousands of
/// small block groups, each a cache miss in a map of every block).
#[derive(Debug, Default)]
struct SegmentBlocks {
    columns: Vec<Vec<Slot>>,
}

impl SegmentBlocks {
    fn slot(&mut self, column: u32, group: u32) -> &mut Slot {
        let (c, g) = (column as usize, group as usize);
        if self.columns.len() <= c {
            self.columns.resize_with(c + 1, Vec::new);
        }
        let groups = &mut self.columns[c];
        if groups.len() <= g {
            groups.resize_with(g + 1, || None);
        }
        &mut groups[g]
    }
}

#[derive(Debug)]
pub struct BlockCache {
    limit: usize,
    bytes: usize,
    tick: u64,
    segments: HashMap<u64, SegmentBlocks>,
    pub hits: u64,
    pub misses: u64,
}

impl BlockCache {
    pub fn new(limit: usize) -> BlockCache {
        BlockCache {
            limit,
            bytes: 0,
            tick: 0,
            segments: HashMap::new(),
            hits: 0,
            misses: 0,
        }
    }

    pub fn get(&mut self, key: &BlockKey) -> Option<Rc<CachedBlock>> {
        self.tick += 1;
        let tick = self.tick;
        let slot = self
            .segments
            .get_mut(&key.segment)
            .and_then(|s| s.columns.get_mut(key.column as usize))
            .and_then(|c| c.get_mut(key.group as usize))
            .and_then(|s| s.as_mut());
        match slot {
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
        let slot = self.segments.entry(key.segment).or_default().slot(key.column, key.group);
        if let Some((old, _)) = slot.replace((bytes, self.tick)) {
            self.bytes -= old.size();
        }
        if self.bytes > self.limit {
            self.evict();
        }
    }

    /// Drops every block of a segment (it was retired).
    pub fn forget_segment(&mut self, segment: u64) {
        if let Some(s) = self.segments.remove(&segment) {
            let freed: usize = s.columns.iter().flatten().flatten().map(|(b, _)| b.size()).sum();
            self.bytes -= freed;
        }
    }

    pub fn bytes(&self) -> usize {
        self.bytes
    }

    pub fn limit(&self) -> usize {
        self.limit
    }

    /// Drops the least recently used blocks until a quarter of the bound is free.
    fn evict(&mut self) {
        let mut by_age: Vec<(u64, usize)> = self
            .segments
            .values()
            .flat_map(|s| s.columns.iter().flatten().flatten().map(|(b, t)| (*t, b.size())))
            .collect();
        by_age.sort_unstable_by_key(|(t, _)| *t);
        // Ticks are unique: every block older than `cut` goes.
        let mut over = self.bytes.saturating_sub(self.limit - self.limit / 4);
        let mut cut = 0;
        for (t, size) in by_age {
            if over == 0 {
                break;
            }
            over = over.saturating_sub(size);
            cut = t + 1;
        }
        let mut freed = 0;
        self.segments.retain(|_, s| {
            let mut any = false;
            for slot in s.columns.iter_mut().flatten() {
                match slot {
                    Some((b, t)) if *t < cut => {
                        freed += b.size();
                        *slot = None;
                    }
                    Some(_) => any = true,
                    None => {}
                }
            }
            any
        });
        self.bytes -= freed;
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
