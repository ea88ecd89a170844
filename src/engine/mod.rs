//! The engine core: what decides a filter's speed, shared by the filters and generic over them.
//!
//! - `line.rs`: [`Line`](line::Line), the 64-byte, 64-byte-aligned unit of storage
//!   (re-exported as `linebloom::blocked::Line`).
//! - `mask.rs`: the blocked filter's probe mask, the definition of its bits
//!   ([`Placement`](mask::Placement), `Probes`) and the portable path that sets and tests it.
//! - `arch.rs`: the AVX2 and AVX-512 kernels of the same mask, every path compiled into every
//!   x86-64 build and one chosen at run time ([`simd_path`](arch::simd_path)); the counting
//!   and split-block filters take the choice from here.
//! - `storage.rs`: [`LineBuf`](storage::LineBuf), the aligned, fallibly allocated line storage
//!   (huge pages for large filters) of the blocked, split-block, cuckoo and counting filters.
//! - `prefetch.rs`: the software-prefetch hints and the one prefetching walk every batched path
//!   runs.
//! - `lookahead.rs`: how far ahead the batched paths prefetch, and the filter size below which
//!   they run the plain loop instead.
//! - `lookup.rs`: the [`Probe`](lookup::Probe) seam and the batched lookup (answers or a count)
//!   over it, which the blocked filter implements per path and placement (`blocked/batch.rs`),
//!   the split-block filter per kernel (`sbbf/batch.rs`) and the counting filter per kernel
//!   (`counting.rs`, past 32 MiB).
//! - `bulk.rs`: the [`Slots`](bulk::Slots) seam, the bulk insert's scanning tasks and the
//!   prefetched insert, generic over the seam, which each filter implements in its own module
//!   (`blocked/slots.rs`, `sbbf/block.rs`, `counting.rs`).
//! - `partition.rs`: the partitioned insert of large batches over the same seam
//!   ([`BuildBuffers`](partition::BuildBuffers): sorted by range of slots, then each range's
//!   slots take their keys while in L2), which the blocked filter runs (`blocked/partitioned.rs`).
//!
//! Nothing here imports a filter module: the filters depend on the engine, never the reverse.

pub(crate) mod arch;
pub(crate) mod bulk;
pub(crate) mod line;
pub(crate) mod lookahead;
pub(crate) mod lookup;
pub(crate) mod mask;
pub(crate) mod partition;
pub(crate) mod prefetch;
pub(crate) mod storage;
