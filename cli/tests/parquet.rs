//! The split-block filters of real Parquet files (`tests/data/parquet/`, written by pyarrow and
//! DuckDB: see `make_fixtures.py` there), against the `parquet` crate's own `Sbbf`, and
//! `linebloom parquet stats|query` driven through the built binary, every failure included.

use std::fs::File;
use std::path::{Path, PathBuf};

use linebloom::hash::mix64;
use linebloom::{Key, SplitBlockBloom, SplitBlockBloomRef};
use parquet::bloom_filter::Sbbf;
use parquet::file::metadata::{ParquetMetaData, ParquetMetaDataReader};

mod common;

use common::*;

const ROWS: usize = 20_000;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/parquet")
        .join(name)
}

fn name_value(i: usize) -> String {
    format!("user-{i}")
}

fn id_value(i: usize) -> i64 {
    i as i64 * 7919 - 1_000_000
}

fn footer(path: &Path) -> ParquetMetaData {
    ParquetMetaDataReader::new()
        .parse_and_finish(&File::open(path).unwrap())
        .unwrap()
}

/// Each row group's filter bytes (header and bitset) of column `col`, and its rows.
fn filter_bytes(path: &Path, col: usize) -> Vec<(std::ops::Range<usize>, Vec<u8>)> {
    let bytes = std::fs::read(path).unwrap();
    let md = footer(path);
    let mut first = 0;
    md.row_groups()
        .iter()
        .map(|rg| {
            let c = rg.column(col);
            let at = c.bloom_filter_offset().unwrap() as usize;
            let len = c.bloom_filter_length().unwrap() as usize;
            let rows = first..first + rg.num_rows() as usize;
            first = rows.end;
            (rows, bytes[at..at + len].to_vec())
        })
        .collect()
}

#[test]
fn every_written_value_is_found_in_its_row_groups_filter() {
    for file in ["pyarrow.parquet", "duckdb.parquet"] {
        let path = fixture(file);
        for (col, is_name) in [(0, true), (1, false)] {
            let groups = filter_bytes(&path, col);
            assert_eq!(groups.last().unwrap().0.end, ROWS, "{file}");
            for (rows, bytes) in &groups {
                let ours = SplitBlockBloom::from_parquet_bytes(bytes).unwrap();
                let view = SplitBlockBloomRef::from_parquet_bytes(bytes).unwrap();
                let hashes: Vec<u64> = rows
                    .clone()
                    .map(|i| {
                        if is_name {
                            name_value(i).hash_xxh64()
                        } else {
                            id_value(i).hash_xxh64()
                        }
                    })
                    .collect();
                let mut out = vec![false; hashes.len()];
                ours.contains_hashes(&hashes, &mut out).unwrap();
                assert!(out.iter().all(|&b| b), "{file} column {col} rows {rows:?}");
                assert_eq!(view.count_contained_hashes(&hashes), hashes.len());
                for i in rows.clone() {
                    let found = if is_name {
                        ours.contains(&name_value(i))
                    } else {
                        ours.contains(&id_value(i))
                    };
                    assert!(found, "{file} column {col} row {i}");
                }
            }
        }
    }
}

/// A million probes, strings and integers, over every filter of both files: our answers, one
/// at a time and batched, equal `Sbbf::check`'s bit for bit.
#[test]
fn a_million_probes_answer_as_the_parquet_crate_does() {
    let mut filters = Vec::new();
    for file in ["pyarrow.parquet", "duckdb.parquet"] {
        for col in [0, 1] {
            for (_, bytes) in filter_bytes(&fixture(file), col) {
                filters.push(bytes);
            }
        }
    }
    let per_filter = 1_000_000 / filters.len() + 1;
    let mut probes = 0;
    let mut yes = 0;
    for (f, bytes) in filters.iter().enumerate() {
        let ours = SplitBlockBloom::from_parquet_bytes(bytes).unwrap();
        let theirs = Sbbf::from_bytes(bytes).unwrap();
        let ints: Vec<i64> = (0..per_filter / 2)
            .map(|i| {
                // Half near the written ids (many hits), half anywhere.
                let r = mix64((f * per_filter + i) as u64);
                if i % 2 == 0 {
                    id_value((r % 25_000) as usize)
                } else {
                    r as i64
                }
            })
            .collect();
        let strings: Vec<String> = (0..per_filter / 2)
            .map(|i| name_value((mix64(i as u64 ^ f as u64) % 40_000) as usize))
            .collect();
        let hashes: Vec<u64> = ints
            .iter()
            .map(|v| v.hash_xxh64())
            .chain(strings.iter().map(|s| s.hash_xxh64()))
            .collect();
        let mut batched = vec![false; hashes.len()];
        ours.contains_hashes(&hashes, &mut batched).unwrap();
        let expected: Vec<bool> = ints
            .iter()
            .map(|v| theirs.check(v))
            .chain(strings.iter().map(|s| theirs.check(s.as_str())))
            .collect();
        let one: Vec<bool> = ints
            .iter()
            .map(|v| ours.contains(v))
            .chain(strings.iter().map(|s| ours.contains(s)))
            .collect();
        assert!(one == expected, "filter {f}: one at a time");
        assert!(batched == expected, "filter {f}: batched");
        probes += hashes.len();
        yes += expected.iter().filter(|&&b| b).count();
    }
    assert!(probes >= 1_000_000);
    // Both answers occur often enough for the comparison to mean something.
    assert!(
        yes > probes / 50 && yes < probes * 9 / 10,
        "{yes} of {probes}"
    );
}

/// Filters written here read back through `Sbbf::from_bytes` with the same answers, and the
/// bytes equal those the parquet crate writes for the same values and size.
#[test]
fn our_bytes_read_back_through_the_parquet_crate() {
    for (ndv, fpp) in [(1u64, 0.5), (1_000, 0.01), (50_000, 0.001)] {
        let mut ours = SplitBlockBloom::with_ndv_fpp(ndv, fpp).unwrap();
        let mut theirs = Sbbf::new_with_ndv_fpp(ndv, fpp).unwrap();
        assert_eq!(
            ours.num_blocks(),
            theirs.num_blocks(),
            "ndv {ndv} fpp {fpp}"
        );
        for i in 0..ndv as usize {
            ours.insert(&id_value(i));
            theirs.insert(&id_value(i));
            ours.insert(&name_value(i));
            theirs.insert(name_value(i).as_str());
        }
        let bytes = ours.to_parquet_bytes().unwrap();
        let mut written = Vec::new();
        theirs.write(&mut written).unwrap();
        assert!(
            bytes == written,
            "ndv {ndv}: bytes differ from the parquet crate's"
        );
        let read = Sbbf::from_bytes(&bytes).unwrap();
        for i in 0..200_000usize {
            let v = mix64(i as u64) as i64;
            assert_eq!(read.check(&v), ours.contains(&v), "probe {v}");
            let s = name_value(i);
            assert_eq!(read.check(s.as_str()), ours.contains(&s), "probe {s}");
        }
    }
}

/// The share of never-written values each fixture filter lets through is its FPR as the
/// filter's bits predict it (`current_fpr`), and close to the model at its distinct values.
#[test]
fn measured_fpr_matches_the_model_on_written_filters() {
    for file in ["pyarrow.parquet", "duckdb.parquet"] {
        for (rows, bytes) in filter_bytes(&fixture(file), 0) {
            let f = SplitBlockBloom::from_parquet_bytes(&bytes).unwrap();
            let probes: Vec<u64> = (0..400_000)
                .map(|i| format!("absent-{i}").hash_xxh64())
                .collect();
            let measured = f.count_contained_hashes(&probes) as f64 / probes.len() as f64;
            let predicted = f.current_fpr();
            let model = f.expected_fpr(rows.len() as u64);
            // Fixed probes: the figures never change; the bands are wide of their spread.
            assert!(
                (measured / predicted - 1.0).abs() < 0.15,
                "{file} {rows:?}: measured {measured}, predicted {predicted}"
            );
            assert!(
                (predicted / model - 1.0).abs() < 0.25,
                "{file} {rows:?}: predicted {predicted}, model {model}"
            );
        }
    }
}

// ---- The binary.

fn parquet_cmd(args: &[&str]) -> std::process::Command {
    let mut cmd = linebloom();
    cmd.arg("parquet").args(args);
    cmd
}

#[test]
fn stats_lists_every_chunk() {
    let path = fixture("pyarrow.parquet");
    let o = run(parquet_cmd(&["stats"]).arg(&path));
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    assert_eq!(text.lines().count(), 1 + 4 * 3, "{text}");
    assert!(text.contains("no filter"), "{text}");
    let o = run(parquet_cmd(&["stats", "--json"]).arg(&path));
    assert!(o.status.success(), "{}", stderr(&o));
    let json: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let chunks = json["column_chunks"].as_array().unwrap();
    assert_eq!(chunks.len(), 12);
    let groups = filter_bytes(&path, 0);
    for (rg, (rows, bytes)) in groups.iter().enumerate() {
        let c = &chunks[rg * 3];
        assert_eq!(c["column"], "name");
        let f = SplitBlockBloom::from_parquet_bytes(bytes).unwrap();
        let filter = &c["filter"];
        assert_eq!(filter["bytes"], 8192);
        assert_eq!(filter["blocks"], 256);
        // The exact number of set bits, as a plain integer.
        assert_eq!(filter["set_bits"].as_u64(), Some(f.count_ones()));
        let ndv = filter["estimated_distinct_values"].as_f64().unwrap();
        assert!((ndv / rows.len() as f64 - 1.0).abs() < 0.05, "{ndv}");
        assert!(filter["estimated_fpr"].as_f64().unwrap() < 0.01);
        assert!(chunks[rg * 3 + 2]["filter"].is_null());
    }
}

#[test]
fn query_finds_written_values_and_names_their_row_groups() {
    let dir = scratch("parquet-query");
    for file in ["pyarrow.parquet", "duckdb.parquet"] {
        let path = fixture(file);
        let rows_per_group = footer(&path).row_group(0).num_rows() as usize;
        let names = dir.join("names.txt");
        let text: String = (0..ROWS)
            .step_by(97)
            .map(|i| name_value(i) + "\n")
            .chain((0..300).map(|i| format!("absent-{i}\n")))
            .collect();
        std::fs::write(&names, &text).unwrap();
        let o = run(
            parquet_cmd(&["query", "--column", "name", "--row-groups", "--input"])
                .arg(&names)
                .arg(&path),
        );
        assert!(o.status.success(), "{file}: {}", stderr(&o));
        let out = stdout(&o);
        let lines: Vec<&str> = out.lines().collect();
        let written = ROWS.div_ceil(97);
        assert_eq!(lines.len(), written + 300, "{file}");
        for (line, i) in lines.iter().zip((0..ROWS).step_by(97)) {
            let fields: Vec<&str> = line.split('\t').collect();
            assert_eq!(
                fields[..2],
                [name_value(i).as_str(), "yes"],
                "{file}: {line}"
            );
            let groups: Vec<usize> = fields[2].split(',').map(|g| g.parse().unwrap()).collect();
            assert!(groups.contains(&(i / rows_per_group)), "{file}: {line}");
        }
        let false_positives = lines[written..]
            .iter()
            .filter(|l| l.contains("\tyes\t"))
            .count();
        assert!(false_positives < 20, "{file}: {false_positives} of 300");
        assert!(lines[written..].iter().any(|l| l.ends_with("\tno\t-")));

        // Integer keys from standard input, without --row-groups.
        let mut child = parquet_cmd(&["query", "--column", "id"])
            .arg(&path)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let keys = format!("{}\n{}\r\n", id_value(0), id_value(ROWS - 1));
        std::io::Write::write_all(&mut child.stdin.take().unwrap(), keys.as_bytes()).unwrap();
        let o = child.wait_with_output().unwrap();
        assert!(o.status.success(), "{file}: {}", stderr(&o));
        let want = format!("{}\tyes\n{}\tyes\n", id_value(0), id_value(ROWS - 1));
        assert_eq!(stdout(&o), want, "{file}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A damaged copy of the pyarrow fixture, changed by `edit`.
fn damaged(dir: &Path, name: &str, edit: impl FnOnce(&mut Vec<u8>)) -> PathBuf {
    let mut bytes = std::fs::read(fixture("pyarrow.parquet")).unwrap();
    edit(&mut bytes);
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    path
}

#[test]
fn every_failure_is_exit_2_one_line_and_no_answers() {
    let dir = scratch("parquet-errors");
    let keys = dir.join("keys.txt");
    std::fs::write(&keys, "user-1\nuser-2\n").unwrap();
    let good = fixture("pyarrow.parquet");
    let first_filter = footer(&good)
        .row_group(0)
        .column(0)
        .bloom_filter_offset()
        .unwrap() as usize;
    let cases: Vec<(PathBuf, &str, &str)> = vec![
        (dir.join("missing.parquet"), "name", "cannot read"),
        (good.clone(), "small", "no Bloom filter"),
        (good.clone(), "nope", "no column \"nope\""),
        (
            damaged(&dir, "truncated.parquet", |b| b.truncate(b.len() / 2)),
            "name",
            "not a readable Parquet file",
        ),
        (
            damaged(&dir, "magic.parquet", |b| {
                let n = b.len();
                b[n - 4..].copy_from_slice(b"XXXX")
            }),
            "name",
            "not a readable Parquet file",
        ),
        (
            damaged(&dir, "footer.parquet", |b| {
                // The footer's length, 8 bytes from the end, pointing before the file.
                let n = b.len();
                b[n - 8..n - 4].copy_from_slice(&u32::MAX.to_le_bytes())
            }),
            "name",
            "not a readable Parquet file",
        ),
        (
            damaged(&dir, "footer-bytes.parquet", |b| {
                let n = b.len();
                let len = u32::from_le_bytes(b[n - 8..n - 4].try_into().unwrap()) as usize;
                b[n - 8 - len..n - 8].fill(0xff);
            }),
            "name",
            "not a readable Parquet file",
        ),
        (
            damaged(&dir, "filter-header.parquet", move |b| {
                // numBytes of the first filter: 33, not a multiple of 32.
                b[first_filter + 1..first_filter + 4].copy_from_slice(&[0xc2, 0x80, 0x00]);
            }),
            "name",
            "numBytes",
        ),
        (
            damaged(&dir, "filter-algorithm.parquet", move |b| {
                b[first_filter + 5] = 0x2c; // algorithm member 2, unknown
            }),
            "name",
            "algorithm",
        ),
    ];
    for (path, column, mentions) in &cases {
        for command in [vec!["query", "--column", column, "--input"], vec!["stats"]] {
            if command[0] == "stats" && (*column != "name") {
                continue;
            }
            let mut cmd = parquet_cmd(&command);
            if command[0] == "query" {
                cmd.arg(&keys);
            }
            let o = run(cmd.arg(path));
            assert_usage_failure(&o, mentions);
            assert!(o.stdout.is_empty(), "{}: {}", path.display(), stdout(&o));
        }
    }
    // A key that is not an integer, after a good one: no answer at all.
    let ints = dir.join("ints.txt");
    std::fs::write(&ints, format!("{}\n12x\n", id_value(3))).unwrap();
    let o = run(parquet_cmd(&["query", "--column", "id", "--input"])
        .arg(&ints)
        .arg(&good));
    assert_usage_failure(&o, "line 2");
    assert!(o.stdout.is_empty());
    let _ = std::fs::remove_dir_all(&dir);
}

/// sbbf-rs implements the same layout: the same hashes into the same number of blocks give
/// the same bits, so the report's comparison of the two measures code, not layout.
#[test]
fn the_same_hashes_set_the_same_bits_as_sbbf_rs() {
    #[derive(Clone, Copy)]
    #[repr(C, align(64))]
    struct Line([u8; 64]);
    for blocks in [2usize, 6, 1024] {
        let mut ours = SplitBlockBloom::with_blocks(blocks).unwrap();
        let mut lines = vec![Line([0; 64]); blocks.div_ceil(2)];
        let f = sbbf_rs::FilterFn::new();
        for i in 0..(blocks as u64 * 20) {
            let h = mix64(i);
            ours.insert_hash(h);
            // SAFETY: `lines` holds `blocks * 32` bytes or more, 64-byte aligned by `Line`'s
            // type, as `FilterFn::insert` requires; nothing else borrows them.
            unsafe { f.insert(lines.as_mut_ptr() as *mut u8, blocks, h) };
        }
        let theirs: Vec<u8> = lines.iter().flat_map(|l| l.0).take(blocks * 32).collect();
        assert!(ours.bitset() == theirs.as_slice(), "{blocks} blocks");
    }
}

#[test]
fn fpr_measures_the_split_block_filter_against_its_model() {
    let o = run(linebloom().args([
        "fpr",
        "--filter",
        "split-block",
        "--items",
        "50000",
        "--bits-per-key",
        "10",
        "--probes",
        "400000",
        "--json",
    ]));
    assert!(o.status.success(), "{}", stderr(&o));
    let json: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(json["filter"], "split-block");
    assert_eq!(json["hashes"], 8);
    assert_eq!(json["false_negatives"], 0);
    let (measured, model) = (
        json["measured_fpr"].as_f64().unwrap(),
        json["model_fpr"].as_f64().unwrap(),
    );
    assert!((model - 0.0126).abs() < 0.0005, "{model}");
    assert!(
        (measured / model - 1.0).abs() < 0.1,
        "{measured} vs {model}"
    );
}

// ---- Bounded by the file: crafted footers and filters, run under a 2 GiB address-space limit
// so that an allocation a file drives past it aborts the process (exit 134) and fails the test.

/// The binary under `ulimit -v 2000000` (about 1.9 GiB of address space).
fn limited(args: &[&std::ffi::OsStr]) -> std::process::Output {
    run(std::process::Command::new("sh")
        .arg("-c")
        .arg("ulimit -v 2000000 && exec \"$0\" \"$@\"")
        .arg(env!("CARGO_BIN_EXE_linebloom"))
        .arg("parquet")
        .args(args))
}

/// `stats FILE` and `query --column id --input KEYS FILE` under the limit.
fn both_limited(path: &Path, keys: &Path) -> [std::process::Output; 2] {
    [
        limited(&["stats".as_ref(), path.as_os_str()]),
        limited(&[
            "query".as_ref(),
            "--column".as_ref(),
            "id".as_ref(),
            "--input".as_ref(),
            keys.as_os_str(),
            path.as_os_str(),
        ]),
    ]
}

/// Exit 0, or exit 2 with one line on standard error; never a signal or an abort.
fn assert_bounded(o: &std::process::Output, what: &str) -> bool {
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(o.status.signal(), None, "{what}: {}", stderr(o));
    match o.status.code() {
        Some(0) => false,
        Some(2) => {
            assert_usage_failure(o, "");
            assert!(o.stdout.is_empty(), "{what}: {}", stdout(o));
            true
        }
        code => panic!("{what}: exit {code:?}: {}", stderr(o)),
    }
}

/// Thrift compact-protocol values, enough to write a footer by hand, and to lie in it.
#[derive(Clone, Debug)]
enum T {
    I32(i64),
    I64(i64),
    Bin(Vec<u8>),
    /// A binary whose declared length is not its own.
    BinLen(u64, Vec<u8>),
    Struct(Vec<(i16, T)>),
    /// The elements' compact type, the declared length, the elements.
    List(u8, u64, Vec<T>),
    /// A value declared as compact type `.0`, written as the bytes `.1`.
    Raw(u8, Vec<u8>),
}

const T_BINARY: u8 = 8;
const T_I32: u8 = 5;
const T_STRUCT: u8 = 12;

fn varint(mut v: u64, out: &mut Vec<u8>) {
    while v >= 0x80 {
        out.push(v as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn zigzag(v: i64) -> u64 {
    ((v << 1) ^ (v >> 63)) as u64
}

impl T {
    fn kind(&self) -> u8 {
        match self {
            T::I32(_) => T_I32,
            T::I64(_) => 6,
            T::Bin(_) | T::BinLen(..) => T_BINARY,
            T::Struct(_) => T_STRUCT,
            T::List(..) => 9,
            T::Raw(kind, _) => *kind,
        }
    }

    fn encode(&self, out: &mut Vec<u8>) {
        match self {
            T::I32(v) | T::I64(v) => varint(zigzag(*v), out),
            T::Bin(b) => {
                varint(b.len() as u64, out);
                out.extend_from_slice(b);
            }
            T::BinLen(len, b) => {
                varint(*len, out);
                out.extend_from_slice(b);
            }
            T::Struct(fields) => {
                let mut last = 0i16;
                for (id, v) in fields {
                    let delta = id - last;
                    if (1..=15).contains(&delta) {
                        out.push((delta as u8) << 4 | v.kind());
                    } else {
                        out.push(v.kind());
                        varint(zigzag(i64::from(*id)), out);
                    }
                    v.encode(out);
                    last = *id;
                }
                out.push(0);
            }
            T::List(kind, len, items) => {
                if *len < 15 {
                    out.push((*len as u8) << 4 | kind);
                } else {
                    out.push(0xf0 | kind);
                    varint(*len, out);
                }
                for item in items {
                    item.encode(out);
                }
            }
            T::Raw(_, bytes) => out.extend_from_slice(bytes),
        }
    }

    fn bytes(&self) -> Vec<u8> {
        let mut out = Vec::new();
        self.encode(&mut out);
        out
    }

    /// The value at `path`: a field id in a struct, an index in a list.
    fn at(&mut self, path: &[usize]) -> &mut T {
        let Some((&first, rest)) = path.split_first() else {
            return self;
        };
        match self {
            T::Struct(fields) => {
                let field = fields.iter_mut().find(|(id, _)| *id as usize == first);
                field.expect("no such field").1.at(rest)
            }
            T::List(_, _, items) => items[first].at(rest),
            _ => panic!("{path:?} leads nowhere"),
        }
    }

    /// Declares another length for the list at `path`.
    fn declare_len(&mut self, path: &[usize], declared: u64) {
        let T::List(_, len, _) = self.at(path) else {
            panic!("{path:?} is not a list");
        };
        *len = declared;
    }
}

// Paths into `crafted_footer`.
const ROOT: &[usize] = &[2, 0];
const LEAF: &[usize] = &[2, 1];
const COLUMN_META: &[usize] = &[4, 0, 1, 0, 3];

/// The filter of every crafted file: 4 blocks holding 0..100 as INT64 values.
fn crafted_filter() -> Vec<u8> {
    let mut f = SplitBlockBloom::with_blocks(4).unwrap();
    for i in 0..100i64 {
        f.insert(&i);
    }
    f.to_parquet_bytes().unwrap()
}

/// A column chunk of the INT64 column `id` whose filter is at `offset`, `len` bytes long.
fn column_chunk(offset: i64, len: i64) -> T {
    let path = T::List(T_BINARY, 1, vec![T::Bin(b"id".to_vec())]);
    T::Struct(vec![
        (2, T::I64(4)),
        (
            3,
            T::Struct(vec![
                (1, T::I32(2)),
                (2, T::List(T_I32, 1, vec![T::I32(0)])),
                (3, path),
                (4, T::I32(0)),
                (5, T::I64(100)),
                (6, T::I64(800)),
                (7, T::I64(800)),
                (9, T::I64(4)),
                (14, T::I64(offset)),
                (15, T::I32(len)),
            ]),
        ),
    ])
}

/// `FileMetaData` of one required INT64 column `id` in `groups` row groups of 100 rows, whose
/// filters follow the leading `PAR1` one after the other.
fn crafted_footer(groups: usize) -> T {
    let filter_len = crafted_filter().len() as i64;
    let schema = vec![
        T::Struct(vec![(4, T::Bin(b"schema".to_vec())), (5, T::I32(1))]),
        T::Struct(vec![
            (1, T::I32(2)),
            (3, T::I32(0)),
            (4, T::Bin(b"id".to_vec())),
        ]),
    ];
    let row_group = |g: i64| {
        let chunk = column_chunk(4 + g * filter_len, filter_len);
        T::Struct(vec![
            (1, T::List(T_STRUCT, 1, vec![chunk])),
            (2, T::I64(800)),
            (3, T::I64(100)),
        ])
    };
    T::Struct(vec![
        (1, T::I32(2)),
        (2, T::List(T_STRUCT, 2, schema)),
        (3, T::I64(100 * groups as i64)),
        (
            4,
            T::List(
                T_STRUCT,
                groups as u64,
                (0..groups as i64).map(row_group).collect(),
            ),
        ),
        (6, T::Bin(b"linebloom tests".to_vec())),
    ])
}

/// `PAR1`, the crafted filter of each of `groups` row groups, the footer, its length and
/// `PAR1`.
fn crafted_file(groups: usize, footer: &[u8]) -> Vec<u8> {
    let mut out = b"PAR1".to_vec();
    out.extend(crafted_filter().repeat(groups));
    out.extend_from_slice(footer);
    out.extend_from_slice(&(footer.len() as u32).to_le_bytes());
    out.extend_from_slice(b"PAR1");
    out
}

/// The keys file of the crafted column: a few written values and a few others.
fn crafted_keys(dir: &Path) -> PathBuf {
    let keys = dir.join("keys.txt");
    std::fs::write(&keys, "0\n99\n-5\n123456789\n").unwrap();
    keys
}

#[test]
fn a_crafted_file_reads_as_a_real_one() {
    let dir = scratch("parquet-crafted");
    let path = dir.join("crafted.parquet");
    std::fs::write(&path, crafted_file(2, &crafted_footer(2).bytes())).unwrap();
    assert_eq!(footer(&path).num_row_groups(), 2);
    let keys = crafted_keys(&dir);
    let [stats, query] = both_limited(&path, &keys);
    assert!(stats.status.success(), "{}", stderr(&stats));
    assert!(stdout(&stats).contains("INT64"), "{}", stdout(&stats));
    assert!(query.status.success(), "{}", stderr(&query));
    let answers = stdout(&query);
    assert!(answers.starts_with("0\tyes\n99\tyes\n"), "{answers}");
    // The depth limit of the schema, exactly: a chain of groups down to one leaf.
    for (depth, readable) in [(128, true), (129, false)] {
        let mut schema = vec![T::Struct(vec![
            (4, T::Bin(b"schema".to_vec())),
            (5, T::I32(1)),
        ])];
        for _ in 1..depth {
            schema.push(T::Struct(vec![
                (3, T::I32(0)),
                (4, T::Bin(b"g".to_vec())),
                (5, T::I32(1)),
            ]));
        }
        schema.push(T::Struct(vec![
            (1, T::I32(2)),
            (3, T::I32(0)),
            (4, T::Bin(b"id".to_vec())),
        ]));
        let footer = T::Struct(vec![
            (1, T::I32(2)),
            (2, T::List(T_STRUCT, schema.len() as u64, schema)),
            (3, T::I64(0)),
            (4, T::List(T_STRUCT, 0, vec![])),
        ]);
        std::fs::write(&path, crafted_file(0, &footer.bytes())).unwrap();
        let o = limited(&["stats".as_ref(), path.as_os_str()]);
        if readable {
            assert!(o.status.success(), "depth {depth}: {}", stderr(&o));
        } else {
            assert_usage_failure(&o, "deeper than 128 levels");
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Each crafted case, `stats` and `query` alike: exit 2, one line naming what is wrong, no
/// allocation past the limit.
#[test]
fn crafted_counts_and_lengths_are_refused_before_any_allocation() {
    let dir = scratch("parquet-bounds");
    let keys = crafted_keys(&dir);
    let path = dir.join("bad.parquet");
    let edit = |f: fn(&mut T)| {
        let mut footer = crafted_footer(1);
        f(&mut footer);
        footer.bytes()
    };
    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        (
            "root num_children 2^31-1",
            edit(|f| *f.at(&[ROOT, &[5]].concat()) = T::I32(i32::MAX.into())),
            "schema element 0 has num_children 2147483647, but 1 elements follow it",
        ),
        (
            "leaf num_children 2^31-1",
            edit(|f| {
                let T::Struct(leaf) = f.at(LEAF) else {
                    panic!()
                };
                leaf.push((5, T::I32(i32::MAX.into())));
            }),
            "schema element 1 has num_children 2147483647",
        ),
        (
            "negative num_children",
            edit(|f| *f.at(&[ROOT, &[5]].concat()) = T::I32(-3)),
            "num_children -3",
        ),
        (
            "num_children as a binary",
            edit(|f| *f.at(&[ROOT, &[5]].concat()) = T::Raw(T_BINARY, vec![1, 0xff])),
            "field 5 of a SchemaElement has thrift type 8",
        ),
        (
            "a second root",
            edit(|f| *f.at(&[ROOT, &[5]].concat()) = T::I32(0)),
            "a second root",
        ),
        (
            "schema of 2^31-1 elements",
            edit(|f| f.declare_len(&[2], i32::MAX as u64)),
            "a list of 2147483647 elements",
        ),
        (
            "2^31-1 row groups",
            edit(|f| f.declare_len(&[4], i32::MAX as u64)),
            "a list of 2147483647 elements",
        ),
        (
            "2^31-1 column chunks",
            edit(|f| f.declare_len(&[4, 0, 1], i32::MAX as u64)),
            "a list of 2147483647 elements",
        ),
        (
            "2^31-1 encodings",
            edit(|f| f.declare_len(&[COLUMN_META, &[2]].concat(), i32::MAX as u64)),
            "a list of 2147483647 elements",
        ),
        (
            "2^31-1 key-value pairs",
            edit(|f| {
                let T::Struct(fields) = f else { panic!() };
                fields.insert(4, (5, T::List(T_STRUCT, i32::MAX as u64, vec![])));
            }),
            "a list of 2147483647 elements",
        ),
        (
            "a 2^31-1 byte column name",
            edit(|f| *f.at(&[LEAF, &[4]].concat()) = T::BinLen(i32::MAX as u64, b"id".to_vec())),
            "a value of 2147483647 bytes",
        ),
        (
            "a 2^64-1 byte created_by",
            edit(|f| *f.at(&[6]) = T::BinLen(u64::MAX, vec![])),
            "a value of 18446744073709551615 bytes",
        ),
        (
            "values nested 10,000 deep",
            edit(|f| {
                let mut nested = vec![0x1c; 10_000];
                nested.extend(vec![0; 10_001]);
                let T::Struct(fields) = f else { panic!() };
                fields.push((20, T::Raw(T_STRUCT, nested)));
            }),
            "nested deeper than 64 levels",
        ),
        (
            "bloom_filter_offset past the end",
            edit(|f| *f.at(&[COLUMN_META, &[14]].concat()) = T::I64(1 << 40)),
            "lies outside the file",
        ),
        (
            "negative bloom_filter_offset",
            edit(|f| *f.at(&[COLUMN_META, &[14]].concat()) = T::I64(-1)),
            "lies outside the file",
        ),
        (
            "bloom_filter_length 2^31-1",
            edit(|f| *f.at(&[COLUMN_META, &[15]].concat()) = T::I32(i32::MAX.into())),
            "bytes long runs past the end of the file",
        ),
        (
            "negative bloom_filter_length",
            edit(|f| *f.at(&[COLUMN_META, &[15]].concat()) = T::I32(-5)),
            "has length -5",
        ),
        (
            "bloom_filter_length short of the bitset",
            edit(|f| *f.at(&[COLUMN_META, &[15]].concat()) = T::I32(100)),
            "the footer records 100 bytes in all",
        ),
        (
            "2 row groups sharing one filter",
            edit(|f| {
                let T::List(_, len, groups) = f.at(&[4]) else {
                    panic!()
                };
                *len = 2;
                groups.push(groups[0].clone());
            }),
            "some overlap",
        ),
        (
            "9,000,000 empty key-value pairs",
            edit(|f| {
                let n = 9_000_000;
                let T::Struct(fields) = f else { panic!() };
                let empty = T::Raw(T_STRUCT, vec![0; n]);
                fields.insert(4, (5, T::List(T_STRUCT, n as u64, vec![empty])));
            }),
            "more than the 512 MiB this command allows",
        ),
    ];
    for (what, footer, mentions) in &cases {
        std::fs::write(&path, crafted_file(1, footer)).unwrap();
        for o in both_limited(&path, &keys) {
            assert_usage_failure(&o, mentions);
            assert!(o.stdout.is_empty(), "{what}: {}", stdout(&o));
        }
    }
    // A footer longer than this command reads, in a sparse file.
    let file = File::create(&path).unwrap();
    file.set_len(80 << 20).unwrap();
    let mut tail = ((64u32 << 20) + 1).to_le_bytes().to_vec();
    tail.extend_from_slice(b"PAR1");
    std::os::unix::fs::FileExt::write_all_at(&file, &tail, (80 << 20) - 8).unwrap();
    drop(file);
    for o in both_limited(&path, &keys) {
        assert_usage_failure(&o, "more than the 67108864 this command reads");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A thrift-compact Bloom filter header announcing `num_bytes` of bitset.
fn filter_header(num_bytes: i32) -> Vec<u8> {
    let mut out = vec![0x15];
    varint(zigzag(num_bytes.into()), &mut out);
    out.extend_from_slice(&[0x1c, 0x1c, 0, 0, 0x1c, 0x1c, 0, 0, 0x1c, 0x1c, 0, 0, 0]);
    out
}

/// A file of `PAR1`, `header` at offset 4, a hole of zeros past 2 GiB, and a footer whose chunk
/// records a filter at offset 4 of `recorded` bytes: no disk space, all address space.
fn sparse_file(path: &Path, header: &[u8], recorded: i32) {
    let hole = (1u64 << 31) + 4096;
    let mut footer = crafted_footer(1);
    *footer.at(&[COLUMN_META, &[15]].concat()) = T::I32(recorded.into());
    let footer = footer.bytes();
    let file = File::create(path).unwrap();
    use std::os::unix::fs::FileExt;
    file.write_all_at(b"PAR1", 0).unwrap();
    file.write_all_at(header, 4).unwrap();
    let mut tail = footer.clone();
    tail.extend_from_slice(&(footer.len() as u32).to_le_bytes());
    tail.extend_from_slice(b"PAR1");
    file.write_all_at(&tail, hole).unwrap();
}

#[test]
fn a_filter_length_into_a_hole_reads_the_header_first() {
    let dir = scratch("parquet-hole");
    let keys = crafted_keys(&dir);
    let path = dir.join("hole.parquet");
    let cases: Vec<(Vec<u8>, i32, &str)> = vec![
        // The reported case: 2^31-1 bytes of zeros, whose header has no numBytes.
        (vec![], i32::MAX, "Bloom filter header without numBytes"),
        // A good header of 128 MiB, and a recorded length of 2^31-1.
        (
            filter_header(128 << 20),
            i32::MAX,
            "its header announces 134217728 bytes of bitset",
        ),
        // A header past the library's 128 MiB.
        (
            filter_header(1 << 30),
            (1 << 30) + 15,
            "Bloom filter numBytes 1073741824",
        ),
    ];
    for (header, recorded, mentions) in &cases {
        sparse_file(&path, header, *recorded);
        for o in both_limited(&path, &keys) {
            assert_usage_failure(&o, mentions);
        }
    }
    // The largest filter the format allows, all zeros, reads within the limit.
    let header = filter_header(128 << 20);
    sparse_file(&path, &header, (128 << 20) + header.len() as i32);
    let [stats, query] = both_limited(&path, &keys);
    assert!(stats.status.success(), "{}", stderr(&stats));
    assert!(stdout(&stats).contains("134217728"), "{}", stdout(&stats));
    assert!(query.status.success(), "{}", stderr(&query));
    assert!(!stdout(&query).contains("yes"), "{}", stdout(&query));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_fifo_or_a_directory_is_refused_at_once() {
    let dir = scratch("parquet-fifo");
    let fifo = dir.join("fifo.parquet");
    let made = run(std::process::Command::new("mkfifo").arg(&fifo));
    assert!(made.status.success(), "{}", stderr(&made));
    for args in [vec!["stats"], vec!["query", "--column", "id"]] {
        for path in [&fifo, &dir] {
            // A regression would block in open(): poll, and kill it after 10 s.
            let mut child = parquet_cmd(&args)
                .arg(path)
                .stdin(std::process::Stdio::null())
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap();
            let started = std::time::Instant::now();
            while child.try_wait().unwrap().is_none() {
                if started.elapsed() > std::time::Duration::from_secs(10) {
                    let _ = child.kill();
                    let _ = child.wait();
                    panic!("{args:?} {} still runs after 10 s", path.display());
                }
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
            let o = child.wait_with_output().unwrap();
            assert_usage_failure(&o, "not a regular file");
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// What a proptest case tells a crafted footer.
#[derive(Clone, Debug)]
enum Lie {
    /// The `num_children` of schema element 0 (the root) or 1 (the leaf).
    NumChildren(usize, i64),
    /// The declared length of the list at one of `LISTS`.
    ListLen(usize, u64),
    /// The declared length of the leaf's name.
    NameLen(u64),
    BloomOffset(i64),
    BloomLength(i64),
    /// The footer length in the file's tail.
    TailLen(u32),
    /// A byte of the encoded footer (at an index modulo its length) replaced.
    Byte(usize, u8),
}

const LISTS: &[&[usize]] = &[
    &[2],
    &[4],
    &[4, 0, 1],
    &[4, 0, 1, 0, 3, 2],
    &[4, 0, 1, 0, 3, 3],
];

fn lie() -> impl proptest::strategy::Strategy<Value = Lie> {
    use proptest::prelude::*;
    let count = prop_oneof![
        0u64..40,
        (i32::MAX as u64 - 40)..=i32::MAX as u64,
        0u64..=i32::MAX as u64,
        Just(u64::MAX),
    ];
    let length = count.clone();
    prop_oneof![
        (
            0usize..2,
            prop_oneof![
                -2i64..40,
                Just(i64::from(i32::MAX)),
                any::<i32>().prop_map(i64::from)
            ]
        )
            .prop_map(|(e, n)| Lie::NumChildren(e, n)),
        (0..LISTS.len(), count).prop_map(|(at, n)| Lie::ListLen(at, n)),
        length.prop_map(Lie::NameLen),
        prop_oneof![-1i64..400, Just(i64::MAX), any::<i64>()].prop_map(Lie::BloomOffset),
        prop_oneof![
            -1i64..400,
            Just(i64::from(i32::MAX)),
            any::<i32>().prop_map(i64::from)
        ]
        .prop_map(Lie::BloomLength),
        any::<u32>().prop_map(Lie::TailLen),
        (
            any::<usize>(),
            prop_oneof![Just(0xffu8), Just(0x7f), Just(0), any::<u8>()]
        )
            .prop_map(|(at, b)| Lie::Byte(at, b)),
    ]
}

/// The crafted file of one row group, told `lies`.
fn lying_file(lies: &[Lie]) -> Vec<u8> {
    let mut footer = crafted_footer(1);
    for lie in lies {
        match *lie {
            Lie::NumChildren(e, n) => {
                let T::Struct(fields) = footer.at(&[2, e]) else {
                    panic!()
                };
                fields.retain(|(id, _)| *id != 5);
                fields.push((5, T::I32(n)));
                fields.sort_by_key(|(id, _)| *id);
            }
            Lie::ListLen(at, n) => footer.declare_len(LISTS[at], n),
            Lie::NameLen(n) => *footer.at(&[LEAF, &[4]].concat()) = T::BinLen(n, b"id".to_vec()),
            Lie::BloomOffset(n) => *footer.at(&[COLUMN_META, &[14]].concat()) = T::I64(n),
            Lie::BloomLength(n) => *footer.at(&[COLUMN_META, &[15]].concat()) = T::I32(n),
            Lie::TailLen(_) | Lie::Byte(..) => {}
        }
    }
    let mut bytes = footer.bytes();
    for lie in lies {
        if let Lie::Byte(at, b) = *lie {
            let n = bytes.len();
            bytes[at % n] = b;
        }
    }
    let mut file = crafted_file(1, &bytes);
    for lie in lies {
        if let Lie::TailLen(n) = *lie {
            let at = file.len() - 8;
            file[at..at + 4].copy_from_slice(&n.to_le_bytes());
        }
    }
    file
}

/// Crafted footers told up to three lies each (counts and lengths up to 2^31-1 and past,
/// offsets anywhere, bytes replaced), and the real fixtures with bytes of their footers
/// replaced: under the limit, `stats` and `query` end with exit 0 or one line and exit 2,
/// never a signal. Most cases are refused.
#[test]
fn lying_footers_never_abort() {
    use proptest::prelude::*;
    use proptest::test_runner::{Config, RngSeed, TestRunner};
    use std::sync::atomic::{AtomicUsize, Ordering};

    let dir = scratch("parquet-lies");
    let keys = crafted_keys(&dir);
    let path = dir.join("lying.parquet");
    let (cases, refused) = (AtomicUsize::new(0), AtomicUsize::new(0));
    let config = |seed| Config {
        cases: 120,
        rng_seed: RngSeed::Fixed(seed),
        failure_persistence: None,
        ..Config::default()
    };
    let check = |file: &[u8], what: &str| {
        std::fs::write(&path, file).unwrap();
        for o in both_limited(&path, &keys) {
            cases.fetch_add(1, Ordering::Relaxed);
            if assert_bounded(&o, what) {
                refused.fetch_add(1, Ordering::Relaxed);
            }
        }
    };
    TestRunner::new(config(37))
        .run(&proptest::collection::vec(lie(), 1..4), |lies| {
            check(&lying_file(&lies), &format!("{lies:?}"));
            Ok(())
        })
        .unwrap();

    let fixtures: Vec<Vec<u8>> = ["pyarrow.parquet", "duckdb.parquet"]
        .iter()
        .map(|f| std::fs::read(fixture(f)).unwrap())
        .collect();
    let edits = (
        0..fixtures.len(),
        proptest::collection::vec((any::<usize>(), any::<u8>()), 1..5),
    );
    TestRunner::new(config(38))
        .run(&edits, |(f, edits)| {
            let mut bytes = fixtures[f].clone();
            let n = bytes.len();
            let footer_len = u32::from_le_bytes(bytes[n - 8..n - 4].try_into().unwrap()) as usize;
            for &(at, b) in &edits {
                bytes[n - 8 - footer_len + at % footer_len] = b;
            }
            check(&bytes, &format!("fixture {f}, bytes {edits:?}"));
            Ok(())
        })
        .unwrap();
    let (cases, refused) = (cases.into_inner(), refused.into_inner());
    assert!(refused * 2 > cases, "{refused} of {cases} refused");
    let _ = std::fs::remove_dir_all(&dir);
}
