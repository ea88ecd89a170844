//! What a report run measures: the embedded default sweep, the `--quick` and `--full` ones,
//! and the checks that turn a bad flag into an error naming the value and the allowed range.
//!
//! The default is sized for a coffee break on a small machine: a few minutes on two cores and
//! under 2 GiB of memory, with filters from L1 to 64 MiB (past the last-level cache of most
//! desktop and many server processors; the report says whether it is past this machine's).
//! `--quick` stops at 16 MiB; `--full` goes to 256 MiB with more samples, and its largest
//! sizes hold several GiB while they build (a static peer keeps every key).

use std::time::Duration;

use serde::{Serialize, Serializer};

use super::measure::Sampling;
use super::subject::Contender;
use linebloom::internals::check_bits_per_key;
use linebloom::{Error, Result};

/// Everything one report run measures.
#[derive(Clone, Debug, Serialize)]
pub struct ReportConfig {
    /// Filter sizes in bytes for the speed sweep (the filters are sized for this many bytes at
    /// [`bits_per_key`](Self::bits_per_key): `bytes * 8 / bits_per_key` keys).
    pub sizes: Vec<usize>,
    /// Bits per key of the speed sweep.
    pub bits_per_key: f64,
    /// The bits-per-key grid of the FPR sweep.
    pub fpr_bits_per_key: Vec<f64>,
    /// Keys inserted into each filter of the FPR sweep.
    pub fpr_items: usize,
    /// Never-inserted keys probed per filter of the FPR sweep.
    pub fpr_probes: usize,
    /// The filters, in report order.
    #[serde(serialize_with = "names")]
    pub filters: Vec<Contender>,
    /// Thread counts for the bulk insert.
    pub threads: Vec<usize>,
    /// Samples per figure (after one warm-up sample).
    pub reps: usize,
    /// Keys per lookup batch (hit, miss, batched) and reads per memory-probe batch. A sample
    /// repeats its batch, so the batch must touch more lines than the last-level cache holds
    /// (1 Mi keys: 64 MiB of lines; the report compares it with the cache it found), or a
    /// large filter's figures would come from the cache.
    pub lookups: usize,
    /// The least time one sample runs, in milliseconds.
    pub min_sample_ms: f64,
    /// Seed of the keys and of the filters' hashing.
    pub seed: u64,
    /// Whether these are the `--quick` defaults (possibly with flags on top).
    pub quick: bool,
    /// Whether these are the `--full` defaults (possibly with flags on top).
    pub full: bool,
}

fn names<S: Serializer>(filters: &[Contender], s: S) -> std::result::Result<S::Ok, S::Error> {
    s.collect_seq(filters.iter().map(|c| c.name()))
}

const KIB: usize = 1 << 10;
const MIB: usize = 1 << 20;

/// Powers of two up to the machine's logical CPUs, and that count itself: 1, 2, 4, ..., n.
pub fn default_threads() -> Vec<usize> {
    let n = std::thread::available_parallelism().map_or(1, |n| n.get());
    let mut t: Vec<usize> = std::iter::successors(Some(1usize), |&t| Some(t * 2))
        .take_while(|&t| t < n)
        .collect();
    t.push(n);
    t
}

impl ReportConfig {
    /// The embedded default sweep: 16 KiB, 1 MiB, 16 MiB and 64 MiB filters at 10 bits per
    /// key, FPR at 6, 8, ..., 20 bits per key with 500 K keys and 2 M probes, 3 samples per
    /// figure of at least 10 ms.
    pub fn default_sweep() -> ReportConfig {
        ReportConfig {
            sizes: vec![16 * KIB, MIB, 16 * MIB, 64 * MIB],
            bits_per_key: 10.0,
            fpr_bits_per_key: (3..=10).map(|i| 2.0 * i as f64).collect(),
            fpr_items: 500_000,
            fpr_probes: 2_000_000,
            filters: Contender::available(),
            threads: default_threads(),
            reps: 3,
            lookups: 1 << 20,
            min_sample_ms: 10.0,
            seed: linebloom::hash::DEFAULT_SEED,
            quick: false,
            full: false,
        }
    }

    /// The `--quick` sweep: the same shape, with the largest filter at 16 MiB, fewer keys in
    /// the FPR sweep, shorter samples.
    pub fn quick() -> ReportConfig {
        ReportConfig {
            sizes: vec![16 * KIB, MIB, 16 * MIB],
            fpr_items: 200_000,
            fpr_probes: 1_000_000,
            min_sample_ms: 5.0,
            quick: true,
            ..ReportConfig::default_sweep()
        }
    }

    /// The `--full` sweep: up to 256 MiB filters, 1 M keys and 4 M probes per FPR point, 5
    /// samples of at least 20 ms per figure.
    pub fn full() -> ReportConfig {
        ReportConfig {
            sizes: vec![16 * KIB, MIB, 16 * MIB, 256 * MIB],
            fpr_items: 1_000_000,
            fpr_probes: 4_000_000,
            reps: 5,
            min_sample_ms: 20.0,
            full: true,
            ..ReportConfig::default_sweep()
        }
    }

    /// Keys that fill `bytes` of filter at the sweep's bits per key (at least 1).
    pub fn items_for(&self, bytes: usize) -> usize {
        ((bytes as f64 * 8.0 / self.bits_per_key) as usize).max(1)
    }

    /// An empty blocked filter for `items` keys at the sweep's bits per key and seed (what the
    /// whole-batch builds and the bulk-insert ceiling fill).
    pub fn empty_blocked(&self, items: usize) -> Result<linebloom::BlockedBloom> {
        linebloom::BlockedBloom::builder(items as u64)
            .bits_per_key(self.bits_per_key)
            .seed(self.seed)
            .build()
    }

    /// Filter bytes that `items` keys take at `bits_per_key`: the inverse of
    /// [`items_for`](Self::items_for), for `--items` on the command line.
    pub fn bytes_for(items: usize, bits_per_key: f64) -> usize {
        ((items as f64 * bits_per_key / 8.0).ceil() as usize).max(1)
    }

    /// The sampling every figure uses.
    pub fn sampling(&self) -> Sampling {
        Sampling {
            reps: self.reps,
            min_sample: Duration::from_secs_f64(self.min_sample_ms / 1e3),
        }
    }

    /// Checks every field, or says which is out of range.
    pub fn validate(&self) -> Result<()> {
        let bad = |name: &'static str, value: String, allowed: &'static str| {
            Err(Error::InvalidParameter {
                name,
                value,
                allowed,
            })
        };
        check_bits_per_key(self.bits_per_key)?;
        if self.sizes.is_empty() {
            return bad("sizes", "none".into(), "at least one filter size");
        }
        for &s in &self.sizes {
            if !(64..=1 << 40).contains(&s) {
                return bad("size", s.to_string(), "between 64 bytes and 1 TiB");
            }
        }
        if self.fpr_bits_per_key.is_empty() {
            return bad("fpr bits per key", "none".into(), "at least one value");
        }
        for &b in &self.fpr_bits_per_key {
            check_bits_per_key(b)?;
        }
        if !(1..=1 << 30).contains(&self.fpr_items) {
            return bad(
                "fpr items",
                self.fpr_items.to_string(),
                "between 1 and 2^30",
            );
        }
        if !(1..=1 << 34).contains(&self.fpr_probes) {
            return bad(
                "fpr probes",
                self.fpr_probes.to_string(),
                "between 1 and 2^34",
            );
        }
        if self.filters.is_empty() {
            return bad("filters", "none".into(), "at least one filter");
        }
        if self.threads.is_empty() {
            return bad("threads", "none".into(), "at least one thread count");
        }
        for &t in &self.threads {
            if !(1..=1024).contains(&t) {
                return bad("threads", t.to_string(), "between 1 and 1024");
            }
        }
        if !(1..=1000).contains(&self.reps) {
            return bad("reps", self.reps.to_string(), "between 1 and 1000");
        }
        if !(1..=1 << 28).contains(&self.lookups) {
            return bad("lookups", self.lookups.to_string(), "between 1 and 2^28");
        }
        if !(self.min_sample_ms > 0.0 && self.min_sample_ms <= 10_000.0) {
            return bad(
                "minimum sample time",
                format!("{} ms", self.min_sample_ms),
                "more than 0 and at most 10000 ms",
            );
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_valid() {
        ReportConfig::default_sweep().validate().unwrap();
        ReportConfig::quick().validate().unwrap();
        ReportConfig::full().validate().unwrap();
        let t = default_threads();
        assert_eq!(t[0], 1);
        assert!(t.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn bad_fields_are_named() {
        let mut c = ReportConfig::quick();
        c.threads = vec![0];
        assert!(c.validate().unwrap_err().to_string().contains("threads"));
        let mut c = ReportConfig::quick();
        c.sizes = vec![8];
        assert!(c.validate().unwrap_err().to_string().contains("size"));
        let mut c = ReportConfig::quick();
        c.bits_per_key = f64::NAN;
        assert!(c.validate().is_err());
    }

    #[test]
    fn items_and_bytes_invert() {
        let c = ReportConfig::default_sweep();
        assert_eq!(c.items_for(1 << 20), 838_860);
        assert_eq!(ReportConfig::bytes_for(838_860, 10.0), 1_048_575);
    }
}
