//! The Rust side of `python/bench.py`: `contains_hashes` on the same filter and the same
//! hashes as the Python package's `contains_many`, so the two figures compare the binding's
//! cost and nothing else.
//!
//! ```sh
//! cargo run --release --example batched_lookup -- FILTER PROBES [PASSES]
//! ```
//!
//! FILTER is a saved blocked filter (`to_bytes`), PROBES a file of little-endian `u64` hashes;
//! the best of PASSES (default 7) passes of one `contains_hashes` call over all of them is
//! printed as one JSON object: keys, best seconds, keys per second, the answers that were
//! "yes" (a check that both sides saw the same data) and the SIMD path.

use std::time::Instant;

use linebloom::BlockedBloom;

fn main() {
    let mut args = std::env::args().skip(1);
    let filter_path = args.next().expect("FILTER");
    let probes_path = args.next().expect("PROBES");
    let passes: usize = args.next().map_or(7, |a| a.parse().expect("PASSES"));
    let filter = BlockedBloom::from_bytes(&std::fs::read(filter_path).expect("read FILTER"))
        .expect("a blocked filter");
    let probes: Vec<u64> = std::fs::read(probes_path)
        .expect("read PROBES")
        .chunks_exact(8)
        .map(|c| u64::from_le_bytes(c.try_into().unwrap()))
        .collect();
    let mut out = vec![false; probes.len()];
    let mut best = f64::INFINITY;
    for _ in 0..passes {
        let t = Instant::now();
        filter.contains_hashes(&probes, &mut out).unwrap();
        best = best.min(t.elapsed().as_secs_f64());
    }
    let yes = out.iter().filter(|&&b| b).count();
    println!(
        "{{\"keys\": {}, \"seconds\": {best:.6}, \"keys_per_s\": {:.0}, \"yes\": {yes}, \"simd_path\": \"{}\"}}",
        probes.len(),
        probes.len() as f64 / best,
        linebloom::simd_path().name()
    );
}
