//! The latest row of one series (`WHERE series = v ORDER BY time DESC LIMIT
//! 1`, TSBS's lastpoint per host) read from the storage's last-row index
//! instead of a scan. `operators::last_row_lookup` decides when a scan may be
//! replaced; this operator stands in for the scan (the sort and limit above
//! it stay, over at most one row).
//! The first lookup of a table builds the index with one scan of all its
//! rows (`LastRowRegistry::install`); while the index cannot answer — the
//! transaction has its own rows of the table, or rows were removed during
//! the build — the scan it replaces runs instead.
//! Must not: answer from anything but a complete index entry.

use std::rc::Rc;
use std::sync::Arc;

use crate::catalog::TableDef;
use crate::error::DbResult;
use crate::exec::operators::{full_scan, BatchFuture, BoxedOperator, Operator, QueryContext};
use crate::exec::vector::{Batch, Column};
use crate::storage::last_rows::{LastRowSpec, Lookup, SeriesLatest, SeriesValue, MAX_SERIES};

enum State {
    Start,
    Done,
    /// The index could not answer: the replaced scan's rows.
    Scan,
}

pub struct LastRowOp {
    ctx: Rc<QueryContext>,
    table: Arc<TableDef>,
    spec: LastRowSpec,
    key: SeriesValue,
    projection: Vec<usize>,
    /// The scan this lookup replaces.
    scan: BoxedOperator,
    state: State,
}

impl LastRowOp {
    pub fn new(
        ctx: &Rc<QueryContext>,
        table: Arc<TableDef>,
        spec: LastRowSpec,
        key: SeriesValue,
        projection: Vec<usize>,
        scan: BoxedOperator,
    ) -> LastRowOp {
        LastRowOp { ctx: ctx.clone(), table, spec, key, projection, scan, state: State::Start }
    }

    /// Scans the whole table and installs the result under `generation`.
    async fn build_index(&self, generation: u64) -> DbResult<()> {
        let mut scan = full_scan(&self.ctx, &self.table);
        let mut latest = SeriesLatest::new(self.spec);
        while let Some(batch) = scan.next().await? {
            self.ctx.check_cancel()?;
            latest.absorb(&batch);
            if latest.len() > MAX_SERIES {
                break; // `install` marks the table as not indexed
            }
        }
        self.ctx.server.last_rows.install(self.table.oid, generation, latest);
        Ok(())
    }

    async fn lookup(&mut self) -> DbResult<Option<Batch>> {
        if self.ctx.has_own_rows(self.table.oid) {
            self.state = State::Scan;
            return self.scan.next().await;
        }
        let registry = self.ctx.server.last_rows.clone();
        let mut built = false;
        loop {
            match registry.lookup(self.table.oid, self.spec, &self.key) {
                Lookup::Row(row) => {
                    self.state = State::Done;
                    return Ok(match row {
                        Some(row) if row.len() == self.table.columns.len() => Some(Batch::from_columns(
                            self.projection
                                .iter()
                                .map(|&c| Column::from_datum(self.table.columns[c].data_type, &row[c], 1))
                                .collect(),
                        )),
                        Some(_) => {
                            // the table's columns changed under the entry: read the rows instead
                            self.state = State::Scan;
                            return self.scan.next().await;
                        }
                        None => None,
                    });
                }
                Lookup::Incomplete(generation) if !built => {
                    self.build_index(generation).await?;
                    built = true;
                }
                // too many series, or rows removed while the index was built
                Lookup::Unavailable | Lookup::Incomplete(_) => {
                    self.state = State::Scan;
                    return self.scan.next().await;
                }
            }
        }
    }
}

impl Operator for LastRowOp {
    fn next(&mut self) -> BatchFuture<'_> {
        Box::pin(async move {
            match self.state {
                State::Start => self.lookup().await,
                State::Done => Ok(None),
                State::Scan => self.scan.next().await,
            }
        })
    }
}
