//! Line protocol into tables, for every entry point (COPY … FORMAT
//! line_protocol, the HTTP write API, ILP over TCP): a schema's measurement
//! tables found or created (`time timestamptz`, one text column per tag, one
//! column per field, named verbatim), new tags and fields added as columns,
//! and the parsed rows written as one atomic write across tables.
//! Must not: parse line protocol (`ingest::line_protocol` does) or speak a
//! transport (the wire, HTTP and ILP servers do); a line rejected by the
//! parser never reaches here, so it never adds a column.

use super::*;
use crate::catalog::Catalog;
use crate::exec::vector::ColumnData;
use crate::ingest::line_protocol::{self as lp, ColumnTypes, FieldKind, KnownColumn, MeasurementBatch};

/// Most bytes of parsed rows one line-protocol COPY holds before its commit
/// (the rows become visible together, and schema changes happen before any row
/// is written, so they wait in memory).
pub const LINE_PROTOCOL_COPY_MAX_BYTES: usize = 1 << 30;

/// Rows per batch handed to the shards.
const WRITE_PIECE_ROWS: usize = 65_536;

/// Longest line (bytes) a streaming parse waits for before failing.
pub const LINE_PROTOCOL_MAX_LINE_BYTES: usize = 64 << 20;

/// What a schema's existing tables say about a measurement's columns, for the
/// parser's type checks. A text column takes tags and string fields alike, a
/// bigint column integer and unsigned fields (SQL has one type for each pair).
pub struct CatalogColumnTypes {
    catalog: Arc<Catalog>,
    database: String,
    schema: String,
}

impl CatalogColumnTypes {
    pub fn new(catalog: Arc<Catalog>, database: &str, schema: &str) -> CatalogColumnTypes {
        CatalogColumnTypes {
            catalog,
            database: database.to_string(),
            schema: schema.to_string(),
        }
    }
}

impl ColumnTypes for CatalogColumnTypes {
    fn lookup(&mut self, measurement: &str, column: &str) -> Option<KnownColumn> {
        let db = self.catalog.databases.get(&self.database)?;
        let table = db.table(&self.schema, measurement)?;
        let c = table.columns.iter().find(|c| c.name == column)?;
        Some(known_column(c.data_type))
    }
}

/// How a column of this SQL type can be written from line protocol.
fn known_column(t: DataType) -> KnownColumn {
    match t {
        DataType::Float64 => KnownColumn::Field(FieldKind::Float),
        DataType::Int64 => KnownColumn::Field(FieldKind::Integer),
        DataType::Bool => KnownColumn::Field(FieldKind::Boolean),
        t if t.physical() == crate::types::PhysicalType::Bytes && t != DataType::Bytea && t != DataType::Jsonb => {
            KnownColumn::Text
        }
        other => KnownColumn::Other(other.name()),
    }
}

/// The SQL type of a new column for a field of this kind.
fn field_type(kind: FieldKind) -> DataType {
    match kind {
        FieldKind::Float => DataType::Float64,
        FieldKind::Integer | FieldKind::Unsigned => DataType::Int64,
        FieldKind::String => DataType::Text,
        FieldKind::Boolean => DataType::Bool,
    }
}

/// A parser error as the SQL error a COPY fails with.
pub fn line_error(copy_target: &str, e: &lp::LineError) -> DbError {
    DbError::new(sqlstate::BAD_COPY_FILE_FORMAT, format!("{e} (line {})", e.line))
        .with_where(format!("COPY {copy_target}, line {}, byte {}", e.line, e.offset))
}

/// A line-protocol COPY in progress: lines parsed as they arrive, rows held
/// until CopyDone.
pub struct LineProtocolCopy {
    schema: String,
    options: lp::ParseOptions,
    /// The unparsed end of the input (an incomplete last line).
    pending: Vec<u8>,
    parsed: lp::ParsedLines,
    known: CatalogColumnTypes,
}

impl Session {
    /// Starts `COPY <schema> FROM STDIN WITH (FORMAT line_protocol [, PRECISION p])`.
    pub(super) fn begin_line_protocol_copy(&mut self, copy: &crate::sql::ingest_copy::IngestCopy) -> DbResult<LineProtocolCopy> {
        let precision = line_protocol_copy_precision(copy)?;
        Ok(LineProtocolCopy {
            schema: copy.schema.clone(),
            options: lp::ParseOptions {
                precision,
                default_time_ns: server_time_ns(precision),
                stop_at_first_error: true,
                first_line_number: 1,
                first_byte_offset: 0,
            },
            pending: Vec::new(),
            parsed: lp::ParsedLines::default(),
            known: CatalogColumnTypes::new(self.server.catalog.snapshot(), &self.database, &copy.schema),
        })
    }

    /// Parses one CopyData chunk of a line-protocol COPY.
    pub(super) fn line_protocol_copy_data(&mut self, copy: &mut LineProtocolCopy, chunk: &[u8]) -> DbResult<()> {
        copy.pending.extend_from_slice(chunk);
        self.line_protocol_copy_parse(copy, false)?;
        if copy.pending.len() > LINE_PROTOCOL_MAX_LINE_BYTES {
            return Err(DbError::new(
                sqlstate::PROGRAM_LIMIT_EXCEEDED,
                format!("line {} is longer than {LINE_PROTOCOL_MAX_LINE_BYTES} bytes", copy.options.first_line_number),
            ));
        }
        if parsed_bytes(&copy.parsed.measurements) > LINE_PROTOCOL_COPY_MAX_BYTES {
            return Err(DbError::new(
                sqlstate::PROGRAM_LIMIT_EXCEEDED,
                format!(
                    "a COPY in line_protocol format holds its rows until it commits, and this one passed {} MiB at line {}",
                    LINE_PROTOCOL_COPY_MAX_BYTES >> 20,
                    copy.options.first_line_number
                ),
            )
            .with_hint("Split the input into several COPYs, or send it to the HTTP write endpoint."));
        }
        Ok(())
    }

    fn line_protocol_copy_parse(&mut self, copy: &mut LineProtocolCopy, is_final: bool) -> DbResult<()> {
        copy.parsed.errors.clear();
        lp::parse_lines(&copy.pending, is_final, &copy.options, &mut copy.known, &mut copy.parsed);
        if let Some(e) = copy.parsed.errors.first() {
            return Err(line_error(&crate::catalog::quote_ident(&copy.schema), e));
        }
        let consumed = copy.parsed.consumed;
        copy.pending.drain(..consumed);
        copy.options.first_byte_offset += consumed as u64;
        copy.options.first_line_number = copy.parsed.next_line_number;
        Ok(())
    }

    /// Ends a line-protocol COPY: the last line, then every row written at once.
    pub(super) async fn line_protocol_copy_done(&mut self, copy: &mut LineProtocolCopy) -> DbResult<u64> {
        self.line_protocol_copy_parse(copy, true)?;
        let batches = copy.parsed.take_measurements();
        let schema = copy.schema.clone();
        self.store_line_protocol(&schema, batches).await
    }

    /// Writes parsed measurements into `schema`'s tables (creating the schema,
    /// tables and columns they need), all rows in one atomic write. Returns the
    /// row count. Outside a block, what it creates is listed as an unfinished
    /// ingest's until the write ends (`catalog::IngestCreated`): a crash in
    /// between leaves no empty table behind.
    pub async fn store_line_protocol(&mut self, schema: &str, batches: Vec<MeasurementBatch>) -> DbResult<u64> {
        let batches: Vec<MeasurementBatch> = batches.into_iter().filter(|b| b.rows > 0).collect();
        if batches.is_empty() {
            return Ok(0);
        }
        // The listing's id, taken only when something is created (writes
        // come many a second; OIDs must last).
        let mut listing = None;
        let stored = self.store_measurements(schema, batches, &mut listing).await;
        if let Some(id) = listing {
            self.forget_unfinished_ingest(id);
        }
        stored
    }

    async fn store_measurements(&mut self, schema: &str, batches: Vec<MeasurementBatch>, listing: &mut Option<u32>) -> DbResult<u64> {
        let outside_block = self.txn == TxnState::Idle;
        let schema_existed = self.server.catalog.snapshot().database(&self.database)?.schemas.contains_key(schema);
        self.create_schema_if_absent(schema)?;
        if outside_block && !schema_existed {
            let id = *listing.get_or_insert_with(|| self.server.catalog.allocate_oid());
            self.list_ingest_created(id, schema, &[(crate::catalog::ProvisionalKind::Schema, schema)]);
        }
        let mut tables = Vec::with_capacity(batches.len());
        for b in &batches {
            tables.push(self.ensure_measurement_table(schema, b, outside_block.then_some(&mut *listing)).await?);
        }
        let mut rows = 0u64;
        let mut points = Vec::with_capacity(batches.len());
        // The keys the rows reference, held until they are stored.
        let mut _referenced = Vec::new();
        for (b, table) in batches.into_iter().zip(&tables) {
            let all = measurement_rows(table, b)?;
            self.check_constraints(table, std::slice::from_ref(&all))?;
            _referenced.extend(self.check_foreign_keys(table, std::slice::from_ref(&all)).await?);
            rows += all.len as u64;
            points.push((table.clone(), all));
        }
        if self.txn != TxnState::Idle {
            // A block's rows stay private until COMMIT, where another writer's
            // lookup could not see them: blocks always merge alone.
            self.store_points_merging(points).await?;
            return Ok(rows);
        }
        // Held before the series times rise, so that a merging writer (which
        // takes the lock alone) sees every row whose time rose before it looked.
        let shared = self.server.rewrites.clone().read_owned().await;
        self.check_tables_current(points.iter().map(|(t, _)| &**t))?;
        if !self.advance_series_times(&points).await? {
            drop(shared);
            self.store_points_merging(points).await?;
            return Ok(rows);
        }
        let mut converted = Vec::with_capacity(points.len());
        for (table, all) in points {
            // WAL records and routing take bounded pieces.
            let mut offset = 0;
            while offset < all.len {
                let n = (all.len - offset).min(WRITE_PIECE_ROWS);
                converted.push((table.clone(), if n == all.len { all.clone() } else { all.slice(offset, n) }));
                offset += n;
            }
        }
        let mut added = crate::sql::unique::AddedKeys::default();
        let mut write = self.begin_write();
        write.rewrites = Some(shared);
        let mut prepared: DbResult<()> = Ok(());
        for (table, batch) in converted {
            let keys = match self.add_unique_keys(&table, std::slice::from_ref(&batch)).await {
                Ok(k) => k,
                Err(e) => {
                    prepared = Err(e);
                    break;
                }
            };
            added.extend(keys);
            let types = table.column_types();
            if let Err(e) = self.prepare_rows(&mut write, table.oid, &types, vec![batch]).await {
                prepared = Err(e);
                break;
            }
        }
        let result = self.settle_write(write, prepared).await;
        if result.is_err() {
            added.undo();
        } else {
            self.settle_unique_keys(added, &Ok(()));
        }
        result.map(|_| rows)
    }

    /// The schemas of the session's database (InfluxDB's SHOW DATABASES), without the system ones.
    pub fn schema_names(&self) -> Vec<String> {
        let catalog = self.server.catalog.snapshot();
        catalog.database(&self.database).map_or_else(
            |_| Vec::new(),
            |db| {
                db.schemas
                    .keys()
                    .filter(|n| !n.starts_with("pg_") && *n != "information_schema")
                    .cloned()
                    .collect()
            },
        )
    }

    /// Creates `schema` unless it exists (InfluxDB's CREATE DATABASE, and a
    /// write naming a new one); inside a transaction block its ROLLBACK
    /// removes it again (when empty), as a CREATE SCHEMA there.
    pub fn create_schema_if_absent(&mut self, schema: &str) -> DbResult<()> {
        let catalog = self.server.catalog.snapshot();
        if catalog.database(&self.database)?.schemas.contains_key(schema) {
            return Ok(());
        }
        self.create_schema(schema, true)
    }

    /// The table of a measurement, created or widened to hold every tag and field of `batch`.
    /// A table it creates outside a block is listed as the write's
    /// (`listing`, its id taken then).
    async fn ensure_measurement_table(
        &mut self,
        schema: &str,
        batch: &MeasurementBatch,
        listing: Option<&mut Option<u32>>,
    ) -> DbResult<Arc<TableDef>> {
        let wanted: Vec<(&str, DataType)> = batch
            .tags
            .iter()
            .map(|t| (t.key.as_str(), DataType::Text))
            .chain(batch.fields.iter().map(|f| (f.key.as_str(), field_type(f.kind))))
            .collect();
        let existing = self
            .server
            .catalog
            .snapshot()
            .database(&self.database)?
            .table(schema, &batch.name)
            .cloned();
        let table = match existing {
            Some(t) => t,
            None => {
                let oid = self.server.catalog.allocate_oid();
                let mut columns = vec![ColumnDef::plain("time", DataType::TimestampTz)];
                columns.extend(wanted.iter().map(|(n, t)| ColumnDef::plain(*n, *t)));
                for c in columns.iter_mut().skip(1).take(batch.tags.len()) {
                    c.series_tag = true;
                }
                let listed = listing.map(|id| *id.get_or_insert_with(|| self.server.catalog.allocate_oid()));
                let table = self.create_ingest_table(TableDef {
                    oid,
                    name: batch.name.clone(),
                    schema: schema.to_string(),
                    columns,
                    time_column: Some(0),
                    frame_files: Vec::new(),
                    checks: Vec::new(),
                    foreign_keys: Vec::new(),
                }, listed)?;
                if table.oid == oid {
                    self.note_created_in_block(&table);
                }
                table
            }
        };
        let time_ok = table
            .column_index("time")
            .is_some_and(|c| table.columns[c].data_type == DataType::TimestampTz);
        if !time_ok {
            return Err(DbError::new(
                sqlstate::WRONG_OBJECT_TYPE,
                format!(
                    "table \"{}\" cannot take line protocol: it has no timestamptz column \"time\"",
                    table.name
                ),
            ));
        }
        let missing: Vec<&(&str, DataType)> = wanted
            .iter()
            .filter(|(n, _)| table.column_index(n).is_none())
            .collect();
        if missing.is_empty() {
            return self.mark_series_tags(schema, table, batch).await;
        }
        let missing: Vec<(&str, DataType)> = missing.into_iter().copied().collect();
        let widened = self.add_ingest_columns(schema, &batch.name, &missing).await?;
        self.mark_series_tags(schema, widened, batch).await
    }

    /// Marks the columns `batch` writes tags into as the table's series tags
    /// (a column added by ALTER, or one a table made by SQL has), so that they
    /// identify its points from now on.
    async fn mark_series_tags(&mut self, schema: &str, table: Arc<TableDef>, batch: &MeasurementBatch) -> DbResult<Arc<TableDef>> {
        let unmarked = |t: &TableDef| {
            batch
                .tags
                .iter()
                .any(|tag| t.column_index(&tag.key).is_some_and(|c| !t.columns[c].series_tag))
        };
        if !unmarked(&table) {
            return Ok(table);
        }
        // Series keys change shape: no point may be checked against the old
        // ones meanwhile, so writers wait (rare: a tag's first use on a column).
        let _alone = self.rewrite_lock().await;
        let marked = self.server.catalog.update_database(&self.database, |db| {
            let s = db
                .schemas
                .get_mut(schema)
                .ok_or_else(|| DbError::new(sqlstate::INVALID_SCHEMA_NAME, format!("schema \"{schema}\" does not exist")))?;
            let t = s
                .tables
                .get_mut(&table.name)
                .ok_or_else(|| DbError::new(sqlstate::UNDEFINED_TABLE, format!("relation \"{}\" does not exist", table.name)))?;
            if unmarked(t) {
                let def = Arc::make_mut(t);
                for tag in &batch.tags {
                    if let Some(c) = def.column_index(&tag.key) {
                        def.columns[c].series_tag = true;
                    }
                }
            }
            Ok(t.clone())
        })?;
        self.server.series_times.forget_table(marked.oid);
        Ok(marked)
    }

    /// Raises the series times of the tables the rows go to (built by a scan
    /// when first needed). Returns whether every row is later than its
    /// series' time: a new point, not a repeat of one stored or in `points`.
    async fn advance_series_times(&self, points: &[(Arc<TableDef>, Batch)]) -> DbResult<bool> {
        let mut all_new = true;
        for (table, rows) in points {
            let Some((tags, time)) = crate::sql::series_times::point_columns(table) else {
                continue;
            };
            let times = self.server.series_times.table(table.oid);
            if !times.is_built() {
                let latest = self.latest_series_times(table, &tags, time).await?;
                times.absorb(&latest);
            }
            all_new &= times.advance(rows, &tags, time);
        }
        Ok(all_new)
    }

    /// The stored rows' latest time per series: rows of (tags…, max(time)).
    async fn latest_series_times(&self, table: &TableDef, tags: &[usize], time: usize) -> DbResult<Vec<Batch>> {
        let q = crate::catalog::quote_ident;
        let tag_list: Vec<String> = tags.iter().map(|&c| q(&table.columns[c].name)).collect();
        let time_name = q(&table.columns[time].name);
        let relation = format!("{}.{}", q(&table.schema), q(&table.name));
        let sql = if tag_list.is_empty() {
            format!("SELECT max({time_name}) FROM {relation}")
        } else {
            let tags = tag_list.join(", ");
            format!("SELECT {tags}, max({time_name}) FROM {relation} GROUP BY {tags}")
        };
        Ok(self.internal_query(&sql, &[], &[]).await?.1)
    }
}

/// The PRECISION of `COPY … WITH (FORMAT line_protocol, PRECISION p)`; any other option is an error.
pub fn line_protocol_copy_precision(copy: &crate::sql::ingest_copy::IngestCopy) -> DbResult<lp::Precision> {
    let mut precision = lp::Precision::Nanoseconds;
    for (name, value) in &copy.options {
        match name.as_str() {
            "precision" => {
                precision = lp::Precision::parse_v1(value).ok_or_else(|| {
                    DbError::new(
                        sqlstate::INVALID_PARAMETER_VALUE,
                        format!("invalid precision \"{value}\" (use ns, us, ms, s, m or h)"),
                    )
                })?
            }
            other => {
                return Err(DbError::new(
                    sqlstate::SYNTAX_ERROR,
                    format!("option \"{other}\" not recognized for FORMAT line_protocol (PRECISION is)"),
                ))
            }
        }
    }
    Ok(precision)
}

/// Now, in nanoseconds, truncated to `precision` (InfluxDB's time for a line without one).
pub fn server_time_ns(precision: lp::Precision) -> i64 {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as i64);
    let unit = precision.nanos();
    now - now.rem_euclid(unit)
}

/// Rough bytes held by parsed rows (for the COPY bound).
fn parsed_bytes(batches: &[MeasurementBatch]) -> usize {
    batches
        .iter()
        .map(|b| {
            let tags: usize = b.tags.iter().map(|t| t.values.data.len() + 4 * b.rows).sum();
            let fields: usize = b.fields.iter().map(|f| match &f.data {
                ColumnData::Bytes(v) => v.data.len() + 4 * b.rows,
                _ => 8 * b.rows,
            }).sum();
            16 * b.rows + tags + fields
        })
        .sum()
}

/// A measurement's rows in the column order of its table; columns the lines
/// did not name are NULL.
fn measurement_rows(table: &TableDef, mut batch: MeasurementBatch) -> DbResult<Batch> {
    let mut columns = Vec::with_capacity(table.columns.len());
    let mut time = Some(std::mem::take(&mut batch.time));
    for c in &table.columns {
        let column = if c.name == "time" {
            Column::new(DataType::TimestampTz, ColumnData::Int64(time.take().unwrap_or_default()), None)
        } else if let Some(i) = batch.tags.iter().position(|t| t.key == c.name) {
            let t = batch.tags.swap_remove(i);
            text_column(c, ColumnData::Bytes(t.values), t.validity, &batch.name)?
        } else if let Some(i) = batch.fields.iter().position(|f| f.key == c.name) {
            let f = batch.fields.swap_remove(i);
            let wanted = field_type(f.kind);
            if c.data_type == wanted {
                Column::new(wanted, f.data, validity(f.validity))
            } else if wanted == DataType::Text {
                text_column(c, f.data, f.validity, &batch.name)?
            } else {
                return Err(type_conflict(&batch.name, &f.key, f.kind, c.data_type));
            }
        } else {
            Column::from_datum(c.data_type, &Datum::Null, batch.rows)
        };
        columns.push(Arc::new(column));
    }
    Ok(Batch::new(columns, batch.rows))
}

/// A validity bitmap, or none when every value is valid (kernels' fast path).
fn validity(bits: crate::exec::vector::Bitmap) -> Option<crate::exec::vector::Bitmap> {
    (bits.count_set() != bits.len()).then_some(bits)
}

/// Tag or string values into a text-like column (text, varchar, name…).
fn text_column(c: &ColumnDef, data: ColumnData, bits: crate::exec::vector::Bitmap, measurement: &str) -> DbResult<Column> {
    if !matches!(known_column(c.data_type), KnownColumn::Text) {
        return Err(DbError::datatype_mismatch(format!(
            "field type conflict: input tag or string field \"{}\" on measurement \"{measurement}\" is text, the column is {}",
            c.name,
            c.data_type.name()
        )));
    }
    Ok(Column::new(c.data_type, data, validity(bits)))
}

fn type_conflict(measurement: &str, field: &str, kind: FieldKind, column: DataType) -> DbError {
    DbError::datatype_mismatch(format!(
        "field type conflict: input field \"{field}\" on measurement \"{measurement}\" is type {}, already exists as type {}",
        kind.name(),
        column.name()
    ))
}
