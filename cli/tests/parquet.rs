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
