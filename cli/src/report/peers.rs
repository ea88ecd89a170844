//! Adapters that put the peer crates behind [`Subject`], so the report and `benches/peers.rs`
//! measure them exactly as they measure this crate's filters: same pre-hashed keys, same loops.
//!
//! Each adapter uses the crate's fastest documented path for a key that is already a
//! well-mixed `u64`, and sizes the filter at the requested bits per key where the crate allows:
//!
//! | crate | pre-hashed path | size |
//! |---|---|---|
//! | fastbloom 0.17 | `insert_hash` / `contains_hash` | `with_num_bits(n·c)`, k from `expected_items` |
//! | sbbf-rs 0.2 | `FilterFn::insert` / `contains` on a u64 | ⌈n·c / 512⌉ 64-byte lines |
//! | bloomfilter 3 | none: SipHash-1-3 of the u64, twice | `new_with_seed(⌈n·c / 8⌉ bytes)`, k = round(c ln 2) |
//! | cuckoofilter 0.5 | a `Hasher` that passes the u64 through | `with_capacity(n / 0.95)`, rounded up to a power of two |
//! | xorf 0.13 `BinaryFuse8` | keys are u64 | fixed, about 9 bits per key |
//! | growable-bloom-filter 2.1 | none: xxh3 of the u64, then double hashing | `GrowableBloom::new(fpr, n / 1000)`, grown to n |
//!
//! `GrowableBloom` has no size accessor; its bytes are computed from the crate's sizing rule
//! (each sub-filter `⌈log2(1/p_i)⌉` slices of `⌈c_i / ln 2⌉` bits for capacity `c_i = c_0 2^i`
//! at `p_i = p_0 · 0.8515625^i`, walked until the capacities sum to its `capacity()`), which a
//! test checks byte for byte against the buffers in its serde serialization.

use std::hash::Hasher;

use super::subject::{Contender, Peer, Subject, growth_plan};
use linebloom::hash::mix64;
use linebloom::internals::{check_bits_per_key, check_items};
use linebloom::model;
use linebloom::{Error, Result};

/// Builds the peer's empty filter for `items` keys at about `bits_per_key` bits each.
pub fn build(peer: Peer, items: usize, bits_per_key: f64, seed: u64) -> Result<Box<dyn Subject>> {
    check_items(items as u64)?;
    check_bits_per_key(bits_per_key)?;
    let bits = (items as f64 * bits_per_key).ceil().max(64.0) as usize;
    Ok(match peer {
        Peer::FastBloom => Box::new(FastBloom(
            fastbloom::BloomFilter::with_num_bits(bits)
                .seed(&u128::from(seed))
                .expected_items(items),
        )),
        Peer::SbbfRs => Box::new(Sbbf {
            blocks: vec![SbbfBlock([0; 64]); bits.div_ceil(512)],
        }),
        Peer::BloomFilter => {
            let mut key = [0u8; 32];
            key[..8].copy_from_slice(&seed.to_le_bytes());
            key[16..24].copy_from_slice(&mix64(seed).to_le_bytes());
            let filter = bloomfilter::Bloom::new_with_seed(bits.div_ceil(8), items, &key)
                .map_err(|e| peer_error(peer, e))?;
            Box::new(BloomFilterRs(filter))
        }
        Peer::CuckooFilter => {
            let capacity = (items as f64 / 0.95).ceil() as usize;
            Box::new(CuckooRs {
                filter: cuckoofilter::CuckooFilter::with_capacity(capacity),
            })
        }
        // Room for every key at once: grown by doubling, the buffer would pass through twice
        // its size (old and new) at the largest sizes.
        Peer::BinaryFuse8 => Box::new(BinaryFuse8 {
            keys: Vec::with_capacity(items),
            filter: None,
        }),
        Peer::GrowableBloom => {
            let (initial, fpr) = growth_plan(items, bits_per_key);
            Box::new(Growable {
                filter: growable_bloom_filter::GrowableBloom::new(fpr, initial),
                initial,
                fpr,
            })
        }
    })
}

fn peer_error(peer: Peer, why: impl std::fmt::Display) -> Error {
    Error::InvalidParameter {
        name: "filter",
        value: format!("{} ({why})", peer.name()),
        allowed: "a size the peer crate accepts",
    }
}

/// fastbloom's classic Bloom filter, used through its pre-hashed path.
struct FastBloom(fastbloom::BloomFilter);

impl Subject for FastBloom {
    fn contender(&self) -> Contender {
        Contender::Peer(Peer::FastBloom)
    }
    fn params(&self) -> String {
        format!("k={}", self.0.num_hashes())
    }
    fn insert_each(&mut self, hashes: &[u64]) -> Result<u64> {
        for &h in hashes {
            self.0.insert_hash(h);
        }
        Ok(0)
    }
    fn count_each(&self, hashes: &[u64]) -> u64 {
        hashes
            .iter()
            .map(|&h| u64::from(self.0.contains_hash(h)))
            .sum()
    }
    fn size_bytes(&self) -> usize {
        self.0.num_bits().div_ceil(8)
    }
    fn model_fpr(&self, items: u64) -> Option<f64> {
        Some(self.0.expected_false_pos(items as usize))
    }
}

/// One 64-byte line of the split-block filter: two of Parquet's 32-byte blocks. The type
/// carries the 64-byte alignment `sbbf_rs::FilterFn` requires of its buffer.
#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct SbbfBlock([u8; 64]);

/// Parquet's split-block Bloom filter from sbbf-rs (which picks AVX2, SSE or scalar code at run
/// time). The crate hands out only raw-pointer functions; this owns the buffer they need.
struct Sbbf {
    blocks: Vec<SbbfBlock>,
}

impl Sbbf {
    /// Parquet's 32-byte blocks: two per line.
    fn num_buckets(&self) -> usize {
        self.blocks.len() * 2
    }
}

impl Subject for Sbbf {
    fn contender(&self) -> Contender {
        Contender::Peer(Peer::SbbfRs)
    }
    fn params(&self) -> String {
        "k=8 (fixed)".into()
    }
    fn insert_each(&mut self, hashes: &[u64]) -> Result<u64> {
        // `FilterFn` is looked up once per batch: it is not `Send`, so it cannot live in the
        // struct, and its lookup (a cached CPU-feature check) costs nothing per batch.
        let f = sbbf_rs::FilterFn::new();
        let buckets = self.num_buckets();
        let buf = self.blocks.as_mut_ptr() as *mut u8;
        for &h in hashes {
            // SAFETY: `buf` points to `buckets * 32` bytes (the blocks vector, 64 bytes per
            // element, never empty since `build` asks for at least one block), aligned to 64 by
            // `SbbfBlock`'s type: what `FilterFn::insert` requires. Nothing else borrows the
            // blocks while `&mut self` is held.
            unsafe {
                f.insert(buf, buckets, h);
            }
        }
        Ok(0)
    }
    fn count_each(&self, hashes: &[u64]) -> u64 {
        let f = sbbf_rs::FilterFn::new();
        let buckets = self.num_buckets();
        let buf = self.blocks.as_ptr() as *const u8;
        hashes
            .iter()
            // SAFETY: as in `insert_each`; the read goes through a shared borrow.
            .map(|&h| u64::from(unsafe { f.contains(buf, buckets, h) }))
            .sum()
    }
    fn size_bytes(&self) -> usize {
        self.blocks.len() * 64
    }
    fn model_fpr(&self, items: u64) -> Option<f64> {
        Some(split_block_fpr(
            (self.size_bytes() * 8) as f64 / items.max(1) as f64,
        ))
    }
}

/// FPR of a split-block Bloom filter (256-bit blocks, one bit in each of eight 32-bit words):
/// the number of keys in a block is Poisson with mean `λ = 256 / c` (Putze, Sanders and
/// Singler 2007), and a query's bit in a word is set with probability `1 - (31/32)^j` when the
/// block holds j keys, so `FPR = Σ_j Poisson(j; λ) (1 - (31/32)^j)^8`.
fn split_block_fpr(bits_per_key: f64) -> f64 {
    let lambda = 256.0 / bits_per_key;
    let mut p = (-lambda).exp();
    let mut sum = 0.0;
    for j in 0..2000 {
        if j > 0 {
            p *= lambda / j as f64;
        }
        sum += p * (1.0 - (31.0f64 / 32.0).powi(j)).powi(8);
        if j as f64 > lambda && p < 1e-18 {
            break;
        }
    }
    sum
}

/// The `bloomfilter` crate's classic filter; it hashes each `u64` with SipHash-1-3 itself.
struct BloomFilterRs(bloomfilter::Bloom<u64>);

impl Subject for BloomFilterRs {
    fn contender(&self) -> Contender {
        Contender::Peer(Peer::BloomFilter)
    }
    fn params(&self) -> String {
        format!("k={}", self.0.number_of_hash_functions())
    }
    fn insert_each(&mut self, hashes: &[u64]) -> Result<u64> {
        for h in hashes {
            self.0.set(h);
        }
        Ok(0)
    }
    fn touch(&mut self) {
        // `Bloom::new_with_seed` leaves its zeroed bitmap unwritten (31-38 us at 100 M keys).
        self.0.clear();
    }
    fn count_each(&self, hashes: &[u64]) -> u64 {
        hashes.iter().map(|h| u64::from(self.0.check(h))).sum()
    }
    fn size_bytes(&self) -> usize {
        (self.0.len() / 8) as usize
    }
    fn model_fpr(&self, items: u64) -> Option<f64> {
        let c = self.0.len() as f64 / items.max(1) as f64;
        Some(model::classic_fpr(c, self.0.number_of_hash_functions()))
    }
}

/// A `Hasher` that returns the one `u64` written to it unchanged (the keys are hashes already)
/// and mixes anything else (cuckoofilter also hashes its 1-byte fingerprints with it, to find
/// a fingerprint's other bucket).
#[derive(Default)]
struct PassThrough(u64);

impl Hasher for PassThrough {
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = mix64(self.0 ^ (u64::from(b) | 0x100));
        }
    }
    fn write_u64(&mut self, x: u64) {
        // mix64(0) = 0: the first u64 written comes out unchanged.
        self.0 = mix64(self.0) ^ x;
    }
    fn write_usize(&mut self, x: usize) {
        // The length a slice or array writes first (cuckoofilter hashes its fingerprint as a
        // `[u8; 1]`). Without this the default goes through `write` byte by byte: eight more
        // `mix64`s per lookup, which make cuckoofilter 2.6-3.7x slower wherever the compiler
        // does not inline and fold that code away (whether it does depends on unrelated code
        // elsewhere in the crate).
        self.write_u64(x as u64);
    }
    fn finish(&self) -> u64 {
        self.0
    }
}

/// rust-cuckoofilter: 8-bit fingerprints in 4-slot buckets. Its `add` drops a random resident
/// fingerprint when the table is full (a documented false negative); the report counts such
/// failures as refused inserts and its hit lookups show the loss.
struct CuckooRs {
    filter: cuckoofilter::CuckooFilter<PassThrough>,
}

impl Subject for CuckooRs {
    fn contender(&self) -> Contender {
        Contender::Peer(Peer::CuckooFilter)
    }
    fn params(&self) -> String {
        "f=8 (fixed)".into()
    }
    fn insert_each(&mut self, hashes: &[u64]) -> Result<u64> {
        let mut refused = 0;
        for h in hashes {
            if self.filter.add(h).is_err() {
                refused += 1;
            }
        }
        Ok(refused)
    }
    fn count_each(&self, hashes: &[u64]) -> u64 {
        hashes
            .iter()
            .map(|h| u64::from(self.filter.contains(h)))
            .sum()
    }
    fn size_bytes(&self) -> usize {
        self.filter.memory_usage()
    }
    fn model_fpr(&self, items: u64) -> Option<f64> {
        // One byte per slot: the table's byte count is its slot count.
        let slots = self.size_bytes() as f64;
        Some(model::cuckoo_fpr(8, 4, items as f64 / slots))
    }
}

/// xorf's binary fuse filter with 8-bit fingerprints: static, so "inserting" collects the keys
/// and [`Subject::finish`] builds the filter from all of them.
struct BinaryFuse8 {
    keys: Vec<u64>,
    filter: Option<xorf::BinaryFuse8>,
}

impl Subject for BinaryFuse8 {
    fn contender(&self) -> Contender {
        Contender::Peer(Peer::BinaryFuse8)
    }
    fn params(&self) -> String {
        "f=8 (fixed)".into()
    }
    fn insert_each(&mut self, hashes: &[u64]) -> Result<u64> {
        self.keys.extend_from_slice(hashes);
        Ok(0)
    }
    fn finish(&mut self) -> Result<()> {
        let keys = std::mem::take(&mut self.keys);
        let filter =
            xorf::BinaryFuse8::try_from(&keys).map_err(|e| peer_error(Peer::BinaryFuse8, e))?;
        self.filter = Some(filter);
        Ok(())
    }
    fn count_each(&self, hashes: &[u64]) -> u64 {
        use xorf::Filter;
        match &self.filter {
            Some(f) => hashes.iter().map(|h| u64::from(f.contains(h))).sum(),
            None => 0,
        }
    }
    fn size_bytes(&self) -> usize {
        self.filter.as_ref().map_or(0, |f| f.fingerprints.len())
    }
    fn model_fpr(&self, _items: u64) -> Option<f64> {
        // A query matches a stored 8-bit fingerprint XOR with probability 2^-8.
        Some(1.0 / 256.0)
    }
    fn is_static(&self) -> bool {
        true
    }
}

/// growable-bloom-filter's growth and tightening (`GrowableBloom::new` uses these; the crate
/// keeps them private).
const GROWABLE_GROWTH: usize = 2;
const GROWABLE_TIGHTENING: f64 = 0.851_562_5;

/// growable-bloom-filter's scalable Bloom filter: a chain of partitioned Bloom filters (one
/// slice per probe), each twice the last at a 0.85 times tighter FPR. Its insert asks first
/// and stores nothing when the chain already says "maybe", as ours does; it takes `Hash` keys
/// only, so each u64 is hashed again (xxh3) before its double hashing.
struct Growable {
    filter: growable_bloom_filter::GrowableBloom,
    initial: usize,
    fpr: f64,
}

impl Growable {
    /// Capacity, slices and slice length in bits of each sub-filter it holds, by the crate's
    /// sizing rule (see the module docs).
    fn parts(&self) -> Vec<(usize, u64, u64)> {
        let mut parts = Vec::new();
        let mut total = 0usize;
        let mut i = 0i32;
        while total < self.filter.capacity() {
            let capacity = self.initial * GROWABLE_GROWTH.pow(i as u32);
            let fpr = self.fpr * GROWABLE_TIGHTENING.powi(i);
            let slices = (1.0 / fpr).log2().ceil() as u64;
            let slice_bits = (capacity as f64 / std::f64::consts::LN_2).ceil() as u64;
            parts.push((capacity, slices, slice_bits));
            total += capacity;
            i += 1;
        }
        parts
    }
}

impl Subject for Growable {
    fn contender(&self) -> Contender {
        Contender::Peer(Peer::GrowableBloom)
    }
    fn params(&self) -> String {
        format!("{} filters x2 r=0.85", self.parts().len())
    }
    /// Keys the chain already reports present are not stored again; they are not refusals.
    fn insert_each(&mut self, hashes: &[u64]) -> Result<u64> {
        for &h in hashes {
            self.filter.insert(h);
        }
        Ok(0)
    }
    fn touch(&mut self) {
        self.filter.clear();
    }
    fn count_each(&self, hashes: &[u64]) -> u64 {
        hashes
            .iter()
            .map(|&h| u64::from(self.filter.contains(h)))
            .sum()
    }
    fn size_bytes(&self) -> usize {
        self.parts()
            .iter()
            .map(|&(_, slices, bits)| (slices * bits).div_ceil(8) as usize)
            .sum()
    }
    /// Each slice of a sub-filter holding `n` keys has a bit set with probability
    /// `1 - e^(-n / m)`; a key is a false positive of the chain when any sub-filter has its
    /// bit set in every slice. The keys the chain stored fill its sub-filters in order.
    fn model_fpr(&self, _items: u64) -> Option<f64> {
        let mut left = self.filter.len();
        let mut miss = 1.0;
        for (capacity, slices, bits) in self.parts() {
            let n = left.min(capacity);
            left -= n;
            let fill = 1.0 - (-(n as f64) / bits as f64).exp();
            miss *= 1.0 - fill.powi(slices as i32);
        }
        Some(1.0 - miss)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn peers_find_what_they_hold() {
        let hs: Vec<u64> = (0..5000).map(mix64).collect();
        for peer in Peer::ALL {
            let mut s = build(peer, 5000, 10.0, 1).unwrap();
            assert_eq!(s.insert_each(&hs).unwrap(), 0, "{}", peer.name());
            s.finish().unwrap();
            assert_eq!(s.count_each(&hs), 5000, "{}", peer.name());
            let bpk = s.size_bytes() as f64 * 8.0 / 5000.0;
            assert!((8.0..17.0).contains(&bpk), "{}: {bpk}", peer.name());
        }
    }

    #[test]
    fn growable_size_is_its_buffers() {
        // 37 keys grown to 100 000: 12 sub-filters. The serde form holds each buffer as a
        // JSON array of its bytes.
        let hs: Vec<u64> = (0..100_000).map(mix64).collect();
        let mut g = Growable {
            filter: growable_bloom_filter::GrowableBloom::new(0.01, 37),
            initial: 37,
            fpr: 0.01,
        };
        g.insert_each(&hs).unwrap();
        let json = serde_json::to_value(&g.filter).unwrap();
        let blooms = json["b"].as_array().unwrap();
        assert_eq!(blooms.len(), g.parts().len());
        let bytes: usize = blooms
            .iter()
            .map(|b| b["b"].as_array().unwrap().len())
            .sum();
        assert_eq!(bytes, g.size_bytes());
        for (b, (_, slices, _)) in blooms.iter().zip(g.parts()) {
            assert_eq!(b["k"].as_u64().unwrap(), slices);
        }
        let model = g.model_fpr(100_000).unwrap();
        assert!((0.01..0.06).contains(&model), "{model}");
    }

    #[test]
    fn pass_through_keeps_one_u64() {
        let mut h = PassThrough::default();
        h.write_u64(0xdead_beef);
        assert_eq!(h.finish(), 0xdead_beef);
    }

    #[test]
    fn split_block_model() {
        // The README's design notes give 1.265 % at 10 bits per key for this layout.
        let p = split_block_fpr(10.0);
        assert!((p - 0.012_65).abs() < 0.000_05, "{p}");
    }
}
