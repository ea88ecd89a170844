//! What a block width allows: the FPR of blocked Bloom filters whose keys set k distinct bits
//! anywhere in their block (free placement, the best any layout of that width can do), for
//! 256-bit and 512-bit blocks, measured on simulated filters beside `model::block_fpr`.
//!
//! ```sh
//! cargo run --release --example block_width -- [BITS_PER_KEY]
//! ```
//!
//! (default 10 bits per key; 1 M keys, 4 M probes per figure, a few seconds.) At 10 bits per
//! key the best 256-bit block measures above 1 % (model 1.070 %, k = 6): a layout that keeps a
//! key's probes in 32 bytes, as sbbf-rs's split block does (one 256-bit vector per test),
//! cannot reach the 1 % that target 1 of the README asks for; 512 bits can (0.955 %, k = 6).
//! That is why the engine tests a whole 64-byte line per key, which on a core with 256-bit
//! vector units costs twice the vector work of a 256-bit test (`cargo run --release --example
//! vector_rates` measures both).

use linebloom::model::{block_fpr, block_optimal_k};
use linebloom_cli::report::fpr::free_block_fpr;

const KEYS: u64 = 1_000_000;
const PROBES: u64 = 4_000_000;
const SEED: u64 = 0x0062_6c6f_636b; // "block"

fn main() {
    let bits_per_key: f64 = match std::env::args().nth(1).map(|a| a.parse()) {
        None => 10.0,
        Some(Ok(c)) if c > 0.0 && c <= 64.0 => c,
        Some(_) => {
            eprintln!("usage: block_width [BITS_PER_KEY], bits per key in (0, 64]");
            std::process::exit(2);
        }
    };
    println!("{bits_per_key} bits per key, k distinct random bits per key in one block");
    println!(
        "{:>6} {:>3} {:>10} {:>10}",
        "block", "k", "measured", "model"
    );
    for block_bits in [256, 512] {
        for k in 4..=9 {
            let measured = match free_block_fpr(block_bits, bits_per_key, k, KEYS, PROBES, SEED) {
                Ok(fpr) => fpr,
                Err(e) => {
                    eprintln!("block_width: {e}");
                    std::process::exit(2);
                }
            };
            let model = block_fpr(block_bits, bits_per_key, k);
            println!(
                "{block_bits:>6} {k:>3} {:>9.3}% {:>9.3}%",
                measured * 100.0,
                model * 100.0
            );
        }
        let (k, best) = block_optimal_k(block_bits, bits_per_key);
        println!("{block_bits:>6} best k = {k}: model {:.3}%", best * 100.0);
    }
}
