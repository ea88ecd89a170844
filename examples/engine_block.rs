//! A storage engine that keeps a filter's bits in a block of its own file format: bare lines
//! (no linebloom header or checksum) inside the engine's checksummed block, opened with
//! [`BlockedBloomRef::from_raw_bytes`]; and what opening a 100 MB filter costs each way.
//!
//! ```sh
//! cargo run --release --example engine_block -- [MEGABYTES]
//! ```
//!
//! The engine's filter block (little-endian): `magic "ENGFLT01"`, `hash scheme: u8` (the
//! placement's, `Placement::hash_scheme`: the engine stores it so that bits are always read
//! with the placement they were written with),
//! `k: u8`, 6 bytes of padding, `seed: u64`, `lines: u64`, 32 bytes of padding (so the lines
//! start 64 bytes in), the lines, then the engine's own checksum of the block (XXH3-64). A
//! real engine checks its block checksum when it reads the block from disk, as it does for
//! every block; the filter then opens in constant time.
//!
//! The timings: opening the same filter from bytes already in memory, (1) in linebloom's own
//! format with the checksum verified (`BlockedBloomRef::from_bytes`: one pass over the
//! bytes), (2) the same without it (`from_bytes_unverified`: the header and the length), and
//! (3) as bare lines (`from_raw_bytes`). Each is the fastest of five.

use std::hint::black_box;
use std::time::Instant;

use linebloom::blocked::{AlignedBytes, Line, Placement};
use linebloom::hash::mix64;
use linebloom::{BlockedBloom, BlockedBloomRef};
use xxhash_rust::xxh3::xxh3_64;

const MAGIC: &[u8; 8] = b"ENGFLT01";
const HEAD: usize = 64;

/// The engine's block: its small header, the bare lines, its checksum.
fn engine_block(filter: &BlockedBloom) -> Vec<u8> {
    let mut block = Vec::with_capacity(HEAD + filter.size_bytes() + 8);
    block.extend_from_slice(MAGIC);
    block.push(filter.placement().hash_scheme());
    block.push(filter.k() as u8);
    block.extend_from_slice(&[0; 6]);
    block.extend_from_slice(&filter.seed().to_le_bytes());
    block.extend_from_slice(&(filter.num_lines() as u64).to_le_bytes());
    block.resize(HEAD, 0);
    block.extend_from_slice(bytemuck::cast_slice::<Line, u8>(filter.lines()));
    let sum = xxh3_64(&block);
    block.extend_from_slice(&sum.to_le_bytes());
    block
}

/// Opens the engine's block (its checksum already checked by the engine's block reader).
fn open_engine_block(block: &[u8]) -> Result<BlockedBloomRef<'_>, Box<dyn std::error::Error>> {
    if block.len() < HEAD + 8 || &block[..8] != MAGIC {
        return Err("not a filter block".into());
    }
    let Some(placement) = Placement::from_hash_scheme(block[8]) else {
        return Err(format!("hash scheme {} (unknown to this linebloom)", block[8]).into());
    };
    let k = u32::from(block[9]);
    let seed = u64::from_le_bytes(block[16..24].try_into()?);
    let lines = usize::try_from(u64::from_le_bytes(block[24..32].try_into()?))?;
    let bits = block
        .get(HEAD..HEAD + lines * 64)
        .ok_or("the block is shorter than its lines")?;
    Ok(BlockedBloomRef::from_raw_bytes(bits, k, placement, seed)?)
}

/// The fastest of five runs of `open`, in microseconds.
fn fastest(mut open: impl FnMut()) -> f64 {
    (0..5)
        .map(|_| {
            let t = Instant::now();
            open();
            t.elapsed().as_secs_f64() * 1e6
        })
        .fold(f64::MAX, f64::min)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let megabytes: usize = std::env::args().nth(1).map_or(Ok(100), |a| a.parse())?;
    let lines = megabytes * 1_000_000 / 64;
    let mut filter = BlockedBloom::with_lines(lines, 7, 42)?;
    let keys: Vec<u64> = (0..1_000_000).map(mix64).collect();
    filter.insert_hashes(&keys);

    // The engine's block, read from "disk" into a 64-byte-aligned buffer; the engine checks
    // its own checksum as for every block it reads.
    let block = AlignedBytes::from_slice(&engine_block(&filter))?;
    let (body, sum) = block.split_at(block.len() - 8);
    assert_eq!(xxh3_64(body), u64::from_le_bytes(sum.try_into()?));
    let view = open_engine_block(body)?;
    assert!(keys.iter().all(|&h| view.contains_hash(h)));
    assert_eq!(view.to_filter()?, filter);

    let own = AlignedBytes::from_slice(&filter.to_bytes())?;
    let verified = fastest(|| {
        black_box(BlockedBloomRef::from_bytes(black_box(&own)).unwrap());
    });
    let unverified = fastest(|| {
        black_box(BlockedBloomRef::from_bytes_unverified(black_box(&own)).unwrap());
    });
    let raw = fastest(|| {
        black_box(open_engine_block(black_box(body)).unwrap());
    });
    println!("opening a {megabytes} MB filter ({lines} lines) from memory:");
    println!("  linebloom format, checksum verified:   {verified:>10.1} µs");
    println!("  linebloom format, header and length:   {unverified:>10.2} µs");
    println!("  bare lines in the engine's own block:  {raw:>10.2} µs");
    Ok(())
}
