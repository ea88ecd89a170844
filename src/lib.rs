//! # linebloom
//!
//! Approximate set membership built to sit on a storage engine's hot path.
//!
//! - [`BlockedBloom`], the engine: a register-blocked Bloom filter. Each key touches exactly one
//!   64-byte cache line, and all its probe bits are set and tested with one 512-bit SIMD mask.
//!   At 10 bits/key its FPR is 0.97 % (a classic filter: 0.82 %), and a lookup costs one cache
//!   miss instead of k.
//! - [`ClassicBloom`], the reference: k bits anywhere in one array (enhanced double hashing).
//!   The lowest FPR per bit of any Bloom filter, but k cache misses per lookup.
//! - [`CuckooFilter`], the reference with delete: fingerprints in 4-slot buckets. Supports
//!   `remove`, and below about 0.3 % FPR needs fewer bits than a Bloom filter; an insert can fail
//!   with [`Error::Full`] (losing nothing) once the table is about 95 % full.
//! - [`CountingBlockedBloom`], delete on one cache line: 4-bit counters in place of the
//!   engine's bits. Removing a key that was inserted never makes another inserted key disappear
//!   (saturated counters stay).
//! - [`ScalableBlockedBloom`], growth: a chain of blocked filters that grows as keys arrive,
//!   its FPR under the target however far it grows.
//! - [`SplitBlockBloom`], the Parquet layout: the split-block filters Parquet files carry
//!   (32-byte blocks, 8 bits per key, XXH64), read and written bit for bit as every Parquet
//!   reader does, with the engine's batched lookups and bulk insert. [`SplitBlockBloomRef`]
//!   queries a bitset in place.
//! - `redis::RedisBlockedBloom` (feature `redis`): the blocked filter shared by many processes
//!   and machines through plain Redis or Valkey, one command per key.
//!
//! All share the [`Filter`] trait (hash-level insert and lookup) and the format ([`format`](mod@format),
//! [`AnyFilter`]); the first four the same constructors: `with_fpr(items, fpr)`,
//! `with_bits_per_key(items, bits)` and a `builder`.
//!
//! Both filters with delete are safe only for removing keys that were inserted (and not yet
//! removed as often as inserted). Removing a key that was never inserted but passes the filter
//! (a false positive) decrements counters other keys rely on (counting), or deletes another
//! key's matching fingerprint (cuckoo), and can make inserted keys answer "no"; no filter can
//! tell such a key from a member, so only the caller can rule it out
//! ([`counting`](mod@counting#remove-only-keys-that-were-inserted) measures it).
//! [`CountingBlockedBloom::remove_exact`] refuses a remove it cannot make exactly (a saturated
//! counter), but it cannot detect a false positive either.
//!
//! Keys are hashed with xxh3-64 and a per-filter seed ([`hash`]), except by the split-block
//! filter, which hashes as Parquet does (XXH64, seed 0); engines that already hashed use the
//! `*_hash` methods. Batches of keys go through `insert_keys` and `contains_keys`
//! ([`BlockedBloom::contains_keys`]), which hash 4096 keys at a time and hand them to the
//! batched, prefetching paths. Sizing and FPR formulas live in [`model`].
//!
//! The default feature `std` can be turned off: the crate is then `#![no_std]` with `alloc`,
//! every filter and the byte format included; I/O through `std::io`, run-time SIMD detection,
//! huge pages, `random_seed`, Redis and rayon need `std` (`docs/design.md`).
//!
//! To build a large blocked filter, give [`BlockedBloom::par_insert_hashes`] all its keys at
//! once (or, building one filter after another, [`BlockedBloom::par_insert_hashes_with`] with
//! kept [`BuildBuffers`]; or [`BlockedBloom::par_fill`] for keys that come in pieces): on enough
//! threads a batch of at least 4 keys per line into a filter of 32 MiB or more is first sorted
//! by range of lines (the partitioned insert), so each line comes from memory once per chunk
//! instead of once per key. With kept buffers this is the fastest way to build a filter far
//! larger than the cache on two threads or more (`docs/performance.md`, Building a filter),
//! for temporary memory of up to twice the filter's size.
//!
//! ```
//! use linebloom::BlockedBloom;
//!
//! let mut filter = BlockedBloom::with_bits_per_key(10_000, 10.0)?;
//! for i in 0..10_000u64 {
//!     filter.insert(&i);
//! }
//! assert!((0..10_000u64).all(|i| filter.contains(&i)));
//!
//! // The same for a batch: hashed in rounds, looked up with the batched lookup.
//! let keys: Vec<u64> = (0..20_000).collect();
//! let mut found = vec![false; keys.len()];
//! filter.contains_keys(&keys, &mut found)?;
//! assert!(found[..10_000].iter().all(|&f| f));
//! # Ok::<(), linebloom::Error>(())
//! ```
//!
//! ```
//! use linebloom::{ClassicBloom, CuckooFilter};
//!
//! let mut classic = ClassicBloom::with_fpr(1_000, 0.001)?;
//! classic.insert("k");
//! assert!(classic.contains("k"));
//!
//! let mut cuckoo = CuckooFilter::with_fpr(1_000, 0.001)?;
//! cuckoo.insert("k")?;
//! assert!(cuckoo.remove("k"));
//! # Ok::<(), linebloom::Error>(())
//! ```

#![cfg_attr(not(feature = "std"), no_std)]
#![warn(missing_docs)]

extern crate alloc;

pub mod blocked;
pub mod classic;
pub mod counting;
pub mod cuckoo;
mod engine;
pub mod error;
pub mod filter;
pub mod format;
pub mod hash;
mod math;
pub mod model;
mod par;
#[cfg(feature = "redis")]
pub mod redis;
pub mod sbbf;
pub mod scalable;

#[cfg(feature = "internals")]
#[doc(hidden)]
pub mod internals;

pub use blocked::{
    AtomicBlockedBloom, AtomicBlockedBloomBuilder, BlockedBloom, BlockedBloomBuilder,
    BlockedBloomRef, BuildBuffers, ParFill, SimdPath, simd_path,
};
pub use classic::{ClassicBloom, ClassicBloomBuilder};
pub use counting::{CountingBlockedBloom, CountingBlockedBloomBuilder};
pub use cuckoo::{CuckooFilter, CuckooFilterBuilder};
#[cfg(feature = "std")]
pub use error::IoError;
pub use error::{Error, Result};
pub use filter::{Filter, FilterKind};
pub use format::AnyFilter;
pub use hash::Key;
pub use sbbf::{SplitBlockBloom, SplitBlockBloomBuilder, SplitBlockBloomRef};
pub use scalable::{ScalableBlockedBloom, ScalableBlockedBloomBuilder};
