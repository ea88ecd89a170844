//! `linebloom parquet stats|query`: the split-block Bloom filters in a Parquet file's column
//! chunks, read and queried with linebloom's [`SplitBlockBloom`].
//!
//! The `parquet` crate reads only the footer (the file metadata: row groups, column chunks and
//! each chunk's `bloom_filter_offset` / `bloom_filter_length`); the filter bytes at those offsets
//! are read here and parsed by the library (thrift-compact header, then the bitset). A chunk
//! whose writer recorded no length (older writers) has its header read first, then the bitset
//! it announces.
//!
//! Keys are one per line, as `linebloom query` reads them. An INT32 or INT64 column's keys are
//! decimal integers (FLOAT and DOUBLE: decimal numbers), hashed as the value's little-endian
//! plain encoding; a BYTE_ARRAY or FIXED_LEN_BYTE_ARRAY column's keys are the line's bytes.
//!
//! Every problem (a missing or damaged file, no such column, a column without filters, a bad
//! filter header, a key that is not a number of the column's type) is exit code 2 with one
//! line on standard error, found before any answer is printed: the answers of `query` are
//! written only once every key has been read and checked.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use linebloom::SplitBlockBloom;
use linebloom::hash::hash_xxh64;
use linebloom::sbbf::parquet_header;
use parquet::basic::Type as PhysicalType;
use parquet::file::metadata::{ParquetMetaData, ParquetMetaDataReader};

use super::keys::{DEFAULT_MAX_KEY_BYTES, KeySource, read_failure};
use super::output::{self, outln};
use crate::Failure;

/// The most header bytes read before a filter whose length the footer does not record: the
/// header is 15 to 19 bytes as the format's writers write it; 256 leaves room for unknown
/// fields.
const HEADER_PROBE: u64 = 256;

#[derive(clap::Args)]
pub struct Args {
    #[command(subcommand)]
    command: Command,
}

#[derive(clap::Subcommand)]
enum Command {
    /// Per row group and column: filter bytes, blocks, set bits, estimated distinct values and
    /// FPR.
    Stats(StatsArgs),
    /// Look keys up in one column's filters: "key<TAB>yes" when any row group's filter may hold
    /// the key, else "key<TAB>no".
    Query(QueryArgs),
}

#[derive(clap::Args)]
pub struct StatsArgs {
    /// A Parquet file.
    file: PathBuf,
    /// Print one JSON object instead of a table.
    #[arg(long)]
    json: bool,
}

#[derive(clap::Args)]
pub struct QueryArgs {
    /// A Parquet file.
    file: PathBuf,
    /// The column (its dotted path for a nested one).
    #[arg(long)]
    column: String,
    /// Keys to look up, one per line; "-" or none: standard input.
    #[arg(long)]
    input: Option<PathBuf>,
    /// Add a third field: the row groups (from 0, comma-separated) whose filter may hold the
    /// key, or "-".
    #[arg(long)]
    row_groups: bool,
    /// The longest key accepted, in bytes; a longer line is an error naming it.
    #[arg(long, default_value_t = DEFAULT_MAX_KEY_BYTES)]
    max_key_bytes: usize,
}

pub fn run(args: Args) -> Result<(), Failure> {
    match args.command {
        Command::Stats(a) => stats(a),
        Command::Query(a) => query(a),
    }
}

/// An open Parquet file and its footer.
struct ParquetFile {
    path: PathBuf,
    file: File,
    len: u64,
    metadata: ParquetMetaData,
}

impl ParquetFile {
    fn open(path: &Path) -> Result<Self, Failure> {
        let name = path.display().to_string();
        let file = File::open(path).map_err(|e| read_failure(&name, e))?;
        let len = file.metadata().map_err(|e| read_failure(&name, e))?.len();
        let metadata = read_footer(&file).map_err(|why| damaged(path, why))?;
        Ok(ParquetFile {
            path: path.to_path_buf(),
            file,
            len,
            metadata,
        })
    }

    /// The filter of row group `rg`'s column `col`, or `None` when the chunk has none.
    fn filter(&mut self, rg: usize, col: usize) -> Result<Option<SplitBlockBloom>, Failure> {
        let chunk = self.metadata.row_group(rg).column(col);
        let Some(offset) = chunk.bloom_filter_offset() else {
            return Ok(None);
        };
        let at = format!(
            "row group {rg}, column {}: the Bloom filter at offset {offset}",
            chunk.column_path().string()
        );
        let offset = u64::try_from(offset)
            .ok()
            .filter(|&o| o < self.len)
            .ok_or_else(|| damaged(&self.path, format!("{at} lies outside the file")))?;
        let length = match chunk.bloom_filter_length() {
            Some(length) => u64::try_from(length)
                .map_err(|_| damaged(&self.path, format!("{at} has length {length}")))?,
            None => {
                let head = self.read_at(offset, HEADER_PROBE.min(self.len - offset))?;
                let h =
                    parquet_header(&head).map_err(|e| damaged(&self.path, format!("{at}: {e}")))?;
                (h.header_len + h.bitset_len) as u64
            }
        };
        if offset.checked_add(length).is_none_or(|end| end > self.len) {
            return Err(damaged(
                &self.path,
                format!(
                    "{at} and {length} bytes long runs past the end of the file ({} bytes)",
                    self.len
                ),
            ));
        }
        let bytes = self.read_at(offset, length)?;
        SplitBlockBloom::from_parquet_bytes(&bytes)
            .map(Some)
            .map_err(|e| damaged(&self.path, format!("{at}: {e}")))
    }

    fn read_at(&mut self, offset: u64, len: u64) -> Result<Vec<u8>, Failure> {
        let name = self.path.display().to_string();
        let mut bytes = Vec::with_capacity(len as usize);
        self.file
            .seek(SeekFrom::Start(offset))
            .and_then(|_| (&mut self.file).take(len).read_to_end(&mut bytes))
            .map_err(|e| read_failure(&name, e))?;
        if bytes.len() as u64 != len {
            return Err(damaged(&self.path, format!("truncated at offset {offset}")));
        }
        Ok(bytes)
    }
}

/// Reads the footer. The `parquet` crate reports damage as errors; a panic inside it on some
/// input it did not foresee is caught and reported the same way, so that a damaged file is
/// always one line and exit code 2.
fn read_footer(file: &File) -> Result<ParquetMetaData, String> {
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let read = std::panic::catch_unwind(|| ParquetMetaDataReader::new().parse_and_finish(file));
    std::panic::set_hook(hook);
    match read {
        Ok(Ok(metadata)) => Ok(metadata),
        Ok(Err(e)) => Err(format!("not a readable Parquet file: {e}")),
        Err(_) => Err("not a readable Parquet file: its footer could not be decoded".into()),
    }
}

/// A damaged file: exit code 2, one line naming the file.
fn damaged(path: &Path, why: impl std::fmt::Display) -> Failure {
    let line = why.to_string().replace(['\n', '\r'], " ");
    Failure::usage(format!("{}: {line}", path.display()))
}

/// How a key's line becomes the bytes Parquet hashes for a column of this type.
#[derive(Clone, Copy, Debug)]
enum KeyEncoding {
    Bytes,
    Int32,
    Int64,
    Float,
    Double,
}

impl KeyEncoding {
    fn for_type(t: PhysicalType) -> Option<Self> {
        Some(match t {
            PhysicalType::BYTE_ARRAY | PhysicalType::FIXED_LEN_BYTE_ARRAY => KeyEncoding::Bytes,
            PhysicalType::INT32 => KeyEncoding::Int32,
            PhysicalType::INT64 => KeyEncoding::Int64,
            PhysicalType::FLOAT => KeyEncoding::Float,
            PhysicalType::DOUBLE => KeyEncoding::Double,
            _ => return None,
        })
    }

    /// The hash of one key, or why the line is not a value of the column's type.
    fn hash(self, key: &[u8]) -> Result<u64, &'static str> {
        fn parse<T: std::str::FromStr>(key: &[u8]) -> Option<T> {
            std::str::from_utf8(key).ok()?.trim().parse().ok()
        }
        let bytes: Option<Vec<u8>> = match self {
            KeyEncoding::Bytes => return Ok(hash_xxh64(key)),
            KeyEncoding::Int32 => parse::<i32>(key).map(|v| v.to_le_bytes().to_vec()),
            KeyEncoding::Int64 => parse::<i64>(key).map(|v| v.to_le_bytes().to_vec()),
            KeyEncoding::Float => parse::<f32>(key).map(|v| v.to_le_bytes().to_vec()),
            KeyEncoding::Double => parse::<f64>(key).map(|v| v.to_le_bytes().to_vec()),
        };
        bytes.map(|b| hash_xxh64(&b)).ok_or(match self {
            KeyEncoding::Int32 => "not a 32-bit integer",
            KeyEncoding::Int64 => "not a 64-bit integer",
            _ => "not a number",
        })
    }
}

fn query(args: QueryArgs) -> Result<(), Failure> {
    let mut pq = ParquetFile::open(&args.file)?;
    let schema = pq.metadata.file_metadata().schema_descr_ptr();
    let col = (0..schema.num_columns())
        .find(|&i| schema.column(i).path().string() == args.column)
        .ok_or_else(|| {
            let names: Vec<String> = (0..schema.num_columns())
                .map(|i| schema.column(i).path().string())
                .collect();
            Failure::usage(format!(
                "{}: no column {:?} (columns: {})",
                args.file.display(),
                args.column,
                names.join(", ")
            ))
        })?;
    let physical = schema.column(col).physical_type();
    let encoding = KeyEncoding::for_type(physical).ok_or_else(|| {
        Failure::usage(format!(
            "{}: column {:?} is {physical}, whose values this command cannot take as keys",
            args.file.display(),
            args.column
        ))
    })?;
    // Every filter is read and checked before any key. A row group without a filter (a writer
    // may skip one, e.g. DuckDB for a chunk that is not dictionary-encoded) may hold any key.
    let mut filters = Vec::new();
    for rg in 0..pq.metadata.num_row_groups() {
        filters.push(pq.filter(rg, col)?);
    }
    if !filters.iter().any(Option::is_some) && !filters.is_empty() {
        return Err(Failure::usage(format!(
            "{}: column {:?} has no Bloom filter in any row group",
            args.file.display(),
            args.column
        )));
    }

    let mut keys = KeySource::from_arg(args.input.as_deref()).open(args.max_key_bytes)?;
    let source = keys.name().to_string();
    let mut line_number = 0u64;
    let mut text: Vec<u8> = Vec::new();
    let mut ends: Vec<usize> = Vec::new();
    let mut hashes: Vec<u64> = Vec::new();
    while let Some(key) = keys.next_key()? {
        line_number += 1;
        let hash = encoding.hash(key).map_err(|why| {
            Failure::usage(format!(
                "{source}: line {line_number}: {:?} is {why} (column {:?} is {physical})",
                String::from_utf8_lossy(key),
                args.column
            ))
        })?;
        text.extend_from_slice(key);
        ends.push(text.len());
        hashes.push(hash);
    }
    // One batched lookup per row group's filter.
    let mut hits: Vec<Vec<bool>> = Vec::with_capacity(filters.len());
    for f in &filters {
        let mut out = vec![true; hashes.len()];
        if let Some(f) = f {
            f.contains_hashes(&hashes, &mut out)?;
        }
        hits.push(out);
    }
    let mut out = output::stdout();
    let mut start = 0;
    let mut line = Vec::new();
    for (i, &end) in ends.iter().enumerate() {
        line.clear();
        line.extend_from_slice(&text[start..end]);
        start = end;
        let yes = hits.iter().any(|h| h[i]);
        line.extend_from_slice(if yes { b"\tyes" } else { b"\tno" });
        if args.row_groups {
            let groups: Vec<String> = (0..hits.len())
                .filter(|&rg| hits[rg][i])
                .map(|rg| rg.to_string())
                .collect();
            line.push(b'\t');
            if groups.is_empty() {
                line.push(b'-');
            } else {
                line.extend_from_slice(groups.join(",").as_bytes());
            }
        }
        line.push(b'\n');
        out.write_all(&line).map_err(output::stdout_failure)?;
    }
    out.flush().map_err(output::stdout_failure)
}

/// One column chunk's line of `stats`.
#[derive(serde::Serialize)]
struct ChunkStats {
    row_group: usize,
    column: String,
    physical_type: String,
    rows: i64,
    /// Absent when the chunk has no filter.
    filter: Option<FilterStats>,
}

#[derive(serde::Serialize)]
struct FilterStats {
    bytes: usize,
    blocks: usize,
    set_bits: u64,
    estimated_distinct_values: Option<f64>,
    estimated_fpr: f64,
}

fn stats(args: StatsArgs) -> Result<(), Failure> {
    let mut pq = ParquetFile::open(&args.file)?;
    let mut chunks = Vec::new();
    for rg in 0..pq.metadata.num_row_groups() {
        let group = pq.metadata.row_group(rg);
        let rows = group.num_rows();
        let columns: Vec<(String, String)> = group
            .columns()
            .iter()
            .map(|c| (c.column_path().string(), c.column_type().to_string()))
            .collect();
        for (col, (column, physical_type)) in columns.into_iter().enumerate() {
            let filter = pq.filter(rg, col)?.map(|f| {
                let estimated = f.estimated_items();
                FilterStats {
                    bytes: f.size_bytes(),
                    blocks: f.num_blocks(),
                    set_bits: f.count_ones(),
                    estimated_distinct_values: estimated.is_finite().then_some(estimated),
                    estimated_fpr: f.current_fpr(),
                }
            });
            chunks.push(ChunkStats {
                row_group: rg,
                column,
                physical_type,
                rows,
                filter,
            });
        }
    }
    let mut text = String::new();
    if args.json {
        let json = serde_json::json!({
            "file": args.file.display().to_string(),
            "row_groups": pq.metadata.num_row_groups(),
            "column_chunks": chunks,
        });
        outln!(text, "{json}");
        return output::print(&text);
    }
    outln!(
        text,
        "{:>9}  {:<16} {:<10} {:>9} {:>11} {:>8} {:>10} {:>10} {:>10}",
        "row group",
        "column",
        "type",
        "rows",
        "bytes",
        "blocks",
        "set bits",
        "est. ndv",
        "est. FPR"
    );
    for c in &chunks {
        let tail = match &c.filter {
            None => format!("{:>11}", "no filter"),
            Some(f) => format!(
                "{:>11} {:>8} {:>10} {:>10} {:>9.4}%",
                f.bytes,
                f.blocks,
                f.set_bits,
                f.estimated_distinct_values
                    .map_or("-".to_string(), |n| format!("{n:.0}")),
                f.estimated_fpr * 100.0
            ),
        };
        outln!(
            text,
            "{:>9}  {:<16} {:<10} {:>9} {tail}",
            c.row_group,
            c.column,
            c.physical_type,
            c.rows
        );
    }
    output::print(&text)
}
