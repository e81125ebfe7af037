//! The store's size on disk: `pg_total_relation_size` of each of
//! dupcheck's tables (heap, TOAST and indexes together, and each apart),
//! its rows, and all of them over the lines indexed (the distinct
//! contents' lines, `sum(contents.lines)`): bytes per indexed line.

use serde_json::{json, Value};

use crate::postgres::Postgres;

/// dupcheck's tables (`src/store/schema.rs`), largest first as they
/// usually are.
pub(crate) const TABLES: [&str; 6] = [
    "postings",
    "contents",
    "copy_files",
    "copies",
    "repositories",
    "dupcheck_schema",
];

/// One table's size.
pub(crate) struct Table {
    pub(crate) name: &'static str,
    pub(crate) rows: u64,
    /// Heap, TOAST and indexes.
    pub(crate) total: u64,
    /// The main fork of the heap.
    pub(crate) heap: u64,
    /// Its indexes.
    pub(crate) indexes: u64,
}

/// The store's size.
pub(crate) struct Size {
    pub(crate) tables: Vec<Table>,
    /// Distinct contents.
    pub(crate) contents: u64,
    /// Their lines: the lines indexed.
    pub(crate) lines: u64,
}

impl Size {
    /// Every table together.
    pub(crate) fn total(&self) -> u64 {
        self.tables.iter().map(|t| t.total).sum()
    }

    /// Bytes per indexed line.
    pub(crate) fn per_line(&self) -> f64 {
        self.total() as f64 / self.lines.max(1) as f64
    }

    /// The figures for the JSON report.
    pub(crate) fn json(&self) -> Value {
        let lines = self.lines.max(1) as f64;
        let tables: Vec<Value> = self
            .tables
            .iter()
            .map(|t| {
                json!({
                    "table": t.name, "rows": t.rows, "totalBytes": t.total,
                    "heapBytes": t.heap, "indexBytes": t.indexes,
                    "toastBytes": t.total.saturating_sub(t.heap + t.indexes),
                    "bytesPerLine": t.total as f64 / lines,
                })
            })
            .collect();
        json!({
            "totalBytes": self.total(), "contents": self.contents, "linesIndexed": self.lines,
            "bytesPerLine": self.per_line(), "tables": tables,
        })
    }
}

/// Measures the store's tables (after `VACUUM ANALYZE`, so that the
/// free-space and visibility maps are there as they would be).
pub(crate) fn measure(pg: &Postgres) -> Result<Size, String> {
    pg.psql("VACUUM ANALYZE")?;
    let mut tables = Vec::new();
    for name in TABLES {
        let row = pg.psql(&format!(
            "SELECT (SELECT count(*) FROM {name}), pg_total_relation_size('{name}'), \
             pg_relation_size('{name}'), pg_indexes_size('{name}')"
        ))?;
        let numbers: Vec<u64> = row
            .split('|')
            .map(|n| n.trim().parse())
            .collect::<Result<_, _>>()
            .map_err(|_| format!("the size of {name} was {row:?}"))?;
        let [rows, total, heap, indexes] = numbers[..] else {
            return Err(format!("the size of {name} was {row:?}"));
        };
        tables.push(Table {
            name,
            rows,
            total,
            heap,
            indexes,
        });
    }
    let contents = pg.number("SELECT count(*) FROM contents")? as u64;
    let lines = pg.number("SELECT coalesce(sum(lines), 0) FROM contents")? as u64;
    Ok(Size {
        tables,
        contents,
        lines,
    })
}
