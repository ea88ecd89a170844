//! `linebloom parquet stats|query`: the split-block Bloom filters in a Parquet file's column
//! chunks, read and queried with linebloom's [`SplitBlockBloom`].
//!
//! The `parquet` crate decodes only the footer (the file metadata: row groups, column chunks and
//! each chunk's `bloom_filter_offset` / `bloom_filter_length`), and only once [`footer::check`]
//! has walked it: every count and length in it fits in the footer, the schema's `num_children`
//! form one tree, and what the crate would allocate is bounded. The filter bytes at those
//! offsets are read here and parsed by the library: the thrift-compact header first (a read of
//! at most 256 bytes), whose `numBytes` must fit in the file and match the recorded length, then
//! the bitset it announces. The filters of one command add up to at most the file's size (they
//! do not overlap), so no file makes the command read more than itself.
//!
//! The file must be a regular file: a FIFO, a device or a directory is refused before it is
//! opened (opening a FIFO without a writer would block).
//!
//! Keys are one per line, as `linebloom query` reads them. An INT32 or INT64 column's keys are
//! decimal integers (FLOAT and DOUBLE: decimal numbers), hashed as the value's little-endian
//! plain encoding; a BYTE_ARRAY or FIXED_LEN_BYTE_ARRAY column's keys are the line's bytes.
//!
//! Every problem (a missing or damaged file, no such column, a column without filters, a bad
//! filter header, a key that is not a number of the column's type) is exit code 2 with one
//! line on standard error, found before any answer is printed: the answers of `query` are
//! written only once every key has been read and checked.

mod footer;

use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use linebloom::SplitBlockBloom;
use linebloom::hash::hash_xxh64;
use linebloom::sbbf::parquet_header;
use parquet::basic::Type as PhysicalType;
use parquet::file::metadata::{ParquetMetaData, ParquetMetaDataReader};

use super::keys::{DEFAULT_MAX_KEY_BYTES, KeySource, read_failure};
use super::output;
use crate::Failure;

/// The most bytes read for a filter's header, before its bitset: the header is 15 to 19 bytes
/// as the format's writers write it; 256 leaves room for unknown fields.
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
    /// Bytes of filters located so far: at most `len`, as filters do not overlap.
    filter_bytes: u64,
}

/// Where one column chunk's filter lies, its header read and checked.
struct FilterAt {
    /// Its row group.
    row_group: usize,
    /// Where its header starts.
    offset: u64,
    /// Header and bitset.
    len: u64,
    /// "row group R, column C: the Bloom filter at offset O", for messages.
    at: String,
}

impl ParquetFile {
    fn open(path: &Path) -> Result<Self, Failure> {
        let name = path.display().to_string();
        // The type first, without opening: opening a FIFO that has no writer blocks.
        let kind = std::fs::metadata(path).map_err(|e| read_failure(&name, e))?;
        if !kind.is_file() {
            return Err(not_regular(&name));
        }
        let mut file = open_nonblocking(path).map_err(|e| read_failure(&name, e))?;
        // Again on what was opened, in case the path changed in between.
        let kind = file.metadata().map_err(|e| read_failure(&name, e))?;
        if !kind.is_file() {
            return Err(not_regular(&name));
        }
        let len = kind.len();
        let metadata = read_footer(&mut file, path, len)?;
        Ok(ParquetFile {
            path: path.to_path_buf(),
            file,
            len,
            metadata,
            filter_bytes: 0,
        })
    }

    /// Where the filter of row group `rg`'s column `col` lies, or `None` when the chunk has
    /// none. Its offset and recorded length are checked against the file, then its header is
    /// read (a few bytes) and checked: the bitset it announces fits in the file and in the
    /// recorded length. The bitset itself is read by [`ParquetFile::read_filter`].
    fn locate(&mut self, rg: usize, col: usize) -> Result<Option<FilterAt>, Failure> {
        let chunk = self.metadata.row_group(rg).column(col);
        let Some(offset) = chunk.bloom_filter_offset() else {
            return Ok(None);
        };
        let at = format!(
            "row group {rg}, column {}: the Bloom filter at offset {offset}",
            chunk.column_path().string()
        );
        let recorded = chunk.bloom_filter_length();
        let offset = u64::try_from(offset)
            .ok()
            .filter(|&o| o < self.len)
            .ok_or_else(|| damaged(&self.path, format!("{at} lies outside the file")))?;
        let (file_len, left) = (self.len, self.len - offset);
        let past_end = |length: u64| {
            format!("{at} and {length} bytes long runs past the end of the file ({file_len} bytes)")
        };
        let recorded = match recorded {
            None => None,
            Some(length) => {
                let length = u64::try_from(length)
                    .map_err(|_| damaged(&self.path, format!("{at} has length {length}")))?;
                if length > left {
                    return Err(damaged(&self.path, past_end(length)));
                }
                Some(length)
            }
        };
        let probe = HEADER_PROBE.min(left).min(recorded.unwrap_or(u64::MAX));
        let head = self.read_at(offset, probe)?;
        let header =
            parquet_header(&head).map_err(|e| damaged(&self.path, format!("{at}: {e}")))?;
        let len = (header.header_len + header.bitset_len) as u64;
        if let Some(length) = recorded.filter(|&length| length != len) {
            return Err(damaged(
                &self.path,
                format!(
                    "{at}: its header announces {} bytes of bitset after {} bytes of header, \
                     the footer records {length} bytes in all",
                    header.bitset_len, header.header_len
                ),
            ));
        }
        if len > left {
            return Err(damaged(&self.path, past_end(len)));
        }
        self.filter_bytes += len;
        if self.filter_bytes > self.len {
            return Err(damaged(
                &self.path,
                format!(
                    "{at}: the Bloom filters of its column chunks add up to more than the \
                     file's {} bytes, so some overlap",
                    self.len
                ),
            ));
        }
        Ok(Some(FilterAt {
            row_group: rg,
            offset,
            len,
            at,
        }))
    }

    /// The filter [`ParquetFile::locate`] found: at most 128 MiB and a header.
    fn read_filter(&mut self, f: &FilterAt) -> Result<SplitBlockBloom, Failure> {
        let bytes = self.read_at(f.offset, f.len)?;
        SplitBlockBloom::from_parquet_bytes(&bytes)
            .map_err(|e| damaged(&self.path, format!("{}: {e}", f.at)))
    }

    /// `len` bytes at `offset`; callers have checked `len` against the file (and a bound).
    fn read_at(&mut self, offset: u64, len: u64) -> Result<Vec<u8>, Failure> {
        read_at(&mut self.file, &self.path, offset, len)
    }
}

/// Reads and checks the footer of the `len`-byte `file`, then lets the `parquet` crate decode
/// it. The crate reports damage as errors; a panic inside it on some input it did not foresee
/// is caught and reported the same way, so that a damaged file is always one line and exit
/// code 2.
fn read_footer(file: &mut File, path: &Path, len: u64) -> Result<ParquetMetaData, Failure> {
    let unreadable = |why: String| damaged(path, format!("not a readable Parquet file: {why}"));
    if len < footer::TAIL_BYTES {
        return Err(unreadable(format!(
            "it is {len} bytes long, too short for a footer"
        )));
    }
    let tail = read_at(file, path, len - footer::TAIL_BYTES, footer::TAIL_BYTES)?;
    let tail = tail.try_into().expect("TAIL_BYTES bytes were read");
    let footer_len = footer::footer_len(tail, len).map_err(unreadable)?;
    let bytes = read_at(
        file,
        path,
        len - footer::TAIL_BYTES - footer_len,
        footer_len,
    )?;
    footer::check(&bytes).map_err(unreadable)?;
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let read = std::panic::catch_unwind(|| ParquetMetaDataReader::decode_metadata(&bytes));
    std::panic::set_hook(hook);
    match read {
        Ok(Ok(metadata)) => Ok(metadata),
        Ok(Err(e)) => Err(unreadable(e.to_string())),
        Err(_) => Err(unreadable("its footer could not be decoded".into())),
    }
}

/// `len` bytes at `offset`; callers have checked `len` against the file and a bound.
fn read_at(file: &mut File, path: &Path, offset: u64, len: u64) -> Result<Vec<u8>, Failure> {
    let mut bytes = Vec::with_capacity(len as usize);
    file.seek(SeekFrom::Start(offset))
        .and_then(|_| file.take(len).read_to_end(&mut bytes))
        .map_err(|e| read_failure(&path.display().to_string(), e))?;
    if bytes.len() as u64 != len {
        return Err(damaged(path, format!("truncated at offset {offset}")));
    }
    Ok(bytes)
}

fn not_regular(name: &str) -> Failure {
    Failure::usage(format!("cannot read {name}: not a regular file"))
}

/// Opens `path` for reading; on Linux without blocking, should it be a FIFO after all (the
/// flag changes nothing for the reads of a regular file).
fn open_nonblocking(path: &Path) -> std::io::Result<File> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(target_os = "linux")]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NONBLOCK);
    }
    options.open(path)
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
    // Every filter is located, its header read and checked, before any key; the bitsets are
    // read after the keys, one at a time. A row group without a filter (a writer may skip one,
    // e.g. DuckDB for a chunk that is not dictionary-encoded) may hold any key.
    let mut filters = Vec::new();
    let mut unfiltered = Vec::new();
    for rg in 0..pq.metadata.num_row_groups() {
        match pq.locate(rg, col)? {
            Some(f) => filters.push(f),
            None => unfiltered.push(rg),
        }
    }
    if filters.is_empty() && !unfiltered.is_empty() {
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
    // One batched lookup per filter. With --row-groups, the (key, row group) pairs where a
    // filter may hold the key: as many as the answers will name.
    let mut maybe = vec![!unfiltered.is_empty(); hashes.len()];
    let mut answers = vec![false; hashes.len()];
    let mut hits: Vec<(usize, usize)> = Vec::new();
    for at in &filters {
        let f = pq.read_filter(at)?;
        f.contains_hashes(&hashes, &mut answers)?;
        for (i, _) in answers.iter().enumerate().filter(|&(_, &yes)| yes) {
            maybe[i] = true;
            if args.row_groups {
                hits.push((i, at.row_group));
            }
        }
    }
    // By key; the sort is stable, so each key's row groups stay in order.
    hits.sort_by_key(|&(key, _)| key);
    let mut hits = hits.into_iter().peekable();
    let mut out = output::stdout();
    let mut start = 0;
    let mut line = Vec::new();
    let mut groups = Vec::new();
    for (i, &end) in ends.iter().enumerate() {
        line.clear();
        line.extend_from_slice(&text[start..end]);
        start = end;
        line.extend_from_slice(if maybe[i] { b"\tyes" } else { b"\tno" });
        if args.row_groups {
            groups.clear();
            groups.extend_from_slice(&unfiltered);
            while let Some((_, rg)) = hits.next_if(|&(key, _)| key == i) {
                groups.push(rg);
            }
            groups.sort_unstable();
            line.push(b'\t');
            if groups.is_empty() {
                line.push(b'-');
            }
            for (n, rg) in groups.iter().enumerate() {
                if n > 0 {
                    line.push(b',');
                }
                line.extend_from_slice(rg.to_string().as_bytes());
            }
        }
        line.push(b'\n');
        out.write_all(&line).map_err(output::stdout_failure)?;
    }
    out.flush().map_err(output::stdout_failure)
}

/// One column chunk's line of `stats`; `column` indexes the schema's leaf columns, whose names
/// are spelled once, however many row groups repeat them.
struct ChunkStats {
    row_group: usize,
    column: usize,
    rows: i64,
    /// Absent when the chunk has no filter.
    filter: Option<FilterStats>,
}

/// The fields of every JSON object below are in alphabetical order, the order `stats --json`
/// has always written.
#[derive(serde::Serialize)]
struct FilterStats {
    blocks: usize,
    bytes: usize,
    estimated_distinct_values: Option<f64>,
    estimated_fpr: f64,
    set_bits: u64,
}

#[derive(serde::Serialize)]
struct StatsJson<'a> {
    column_chunks: Vec<ChunkJson<'a>>,
    file: String,
    row_groups: usize,
}

#[derive(serde::Serialize)]
struct ChunkJson<'a> {
    column: &'a str,
    filter: Option<&'a FilterStats>,
    physical_type: &'a str,
    row_group: usize,
    rows: i64,
}

/// Reads every chunk's filter (one in memory at a time) before it writes anything, then streams
/// the table or the JSON object to standard output.
fn stats(args: StatsArgs) -> Result<(), Failure> {
    let mut pq = ParquetFile::open(&args.file)?;
    let schema = pq.metadata.file_metadata().schema_descr_ptr();
    let names: Vec<String> = schema.columns().iter().map(|c| c.path().string()).collect();
    let types: Vec<String> = schema
        .columns()
        .iter()
        .map(|c| c.physical_type().to_string())
        .collect();
    let mut chunks = Vec::new();
    for rg in 0..pq.metadata.num_row_groups() {
        let rows = pq.metadata.row_group(rg).num_rows();
        for col in 0..pq.metadata.row_group(rg).num_columns() {
            let filter = match pq.locate(rg, col)? {
                None => None,
                Some(at) => {
                    let f = pq.read_filter(&at)?;
                    let estimated = f.estimated_items();
                    Some(FilterStats {
                        blocks: f.num_blocks(),
                        bytes: f.size_bytes(),
                        estimated_distinct_values: estimated.is_finite().then_some(estimated),
                        estimated_fpr: f.current_fpr(),
                        set_bits: f.count_ones(),
                    })
                }
            };
            chunks.push(ChunkStats {
                row_group: rg,
                column: col,
                rows,
                filter,
            });
        }
    }
    let mut out = output::stdout();
    if args.json {
        let json = StatsJson {
            column_chunks: chunks
                .iter()
                .map(|c| ChunkJson {
                    column: &names[c.column],
                    filter: c.filter.as_ref(),
                    physical_type: &types[c.column],
                    row_group: c.row_group,
                    rows: c.rows,
                })
                .collect(),
            file: args.file.display().to_string(),
            row_groups: pq.metadata.num_row_groups(),
        };
        return serde_json::to_writer(&mut out, &json)
            .map_err(std::io::Error::from)
            .and_then(|()| out.write_all(b"\n"))
            .and_then(|()| out.flush())
            .map_err(output::stdout_failure);
    }
    writeln!(
        out,
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
    )
    .map_err(output::stdout_failure)?;
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
        writeln!(
            out,
            "{:>9}  {:<16} {:<10} {:>9} {tail}",
            c.row_group, names[c.column], types[c.column], c.rows
        )
        .map_err(output::stdout_failure)?;
    }
    out.flush().map_err(output::stdout_failure)
}
