//! The bytes of a saved chain: one header for its parameters and layers, then its bits in
//! chunks. `BF.SCANDUMP` / `BF.LOADCHUNK`, the RDB callbacks and the AOF rewrite all use it.
//!
//! This module owns the header's layout, its checks, and the mapping between an iterator of
//! `BF.SCANDUMP` and a byte range of the bits. It does not talk to Redis.
//!
//! # Header, version 1
//! Little-endian, fixed width; `48 + 24 * layers + 8` bytes.
//!
//! | offset | size | field |
//! |---:|---:|---|
//! | 0 | 4 | magic `b"LBRB"` |
//! | 4 | 2 | version (`u16`, 1) |
//! | 6 | 2 | 0 (reserved) |
//! | 8 | 8 | error rate (`f64`) |
//! | 16 | 8 | capacity of the first layer |
//! | 24 | 8 | expansion (0: non-scaling) |
//! | 32 | 8 | hash seed |
//! | 40 | 4 | layers (`u32`, at least 1) |
//! | 44 | 4 | 0 (reserved) |
//! | 48 | 24 each | per layer, oldest first: lines (`u64`), probes per key (`u32`), placement (`u32`: 0 salted, 1 shifted; headers written before the shifted placement hold 0 there), items (`u64`) |
//! | end - 8 | 8 | xxh3-64 (seed 0) of every byte before it |
//!
//! The bits follow as the layers' lines, oldest layer first, each line 16 little-endian `u32`
//! words: linebloom's blocked payload (`linebloom::format`), concatenated. `BF.SCANDUMP`'s
//! iterator is one more than the byte offset of the next chunk into those bits: `SCANDUMP key
//! 0` returns the header with iterator 1, each later call a chunk of at most [`CHUNK_BYTES`]
//! (never across a layer) with the iterator of the next, and `[0, ""]` at the end.
//! `BF.LOADCHUNK key it data` writes `data` at byte `it - 1 - len(data)`, as RedisBloom's does,
//! so the pairs `SCANDUMP` returned load in any order once the header is in.

use linebloom::BlockedBloom;
use linebloom::blocked::{MAX_K, Placement};
use xxhash_rust::xxh3::xxh3_64;

use crate::chain::{BloomChain, Layer, Params};

/// The header's magic.
pub const MAGIC: [u8; 4] = *b"LBRB";
/// The header's version.
pub const VERSION: u16 = 1;
/// The most bytes of bits in one `BF.SCANDUMP` chunk or one RDB string.
pub const CHUNK_BYTES: usize = 8 << 20;

const FIXED: usize = 48;
const PER_LAYER: usize = 24;
const CHECKSUM: usize = 8;

/// A layer's placement in its header: 0 salted (every header written before the shifted
/// placement, whose field was reserved as 0), 1 shifted.
fn placement_code(placement: Placement) -> u32 {
    match placement {
        Placement::Salted => 0,
        Placement::Shifted => 1,
    }
}

/// The placement of a header's code.
fn placement_of(code: u32) -> Option<Placement> {
    match code {
        0 => Some(Placement::Salted),
        1 => Some(Placement::Shifted),
        _ => None,
    }
}

/// The header of a chain.
pub fn encode_header(chain: &BloomChain) -> Vec<u8> {
    let params = chain.params();
    let layers = chain.layers();
    let mut out = Vec::with_capacity(FIXED + PER_LAYER * layers.len() + CHECKSUM);
    out.extend_from_slice(&MAGIC);
    out.extend_from_slice(&VERSION.to_le_bytes());
    out.extend_from_slice(&0u16.to_le_bytes());
    out.extend_from_slice(&params.error_rate.to_le_bytes());
    out.extend_from_slice(&params.capacity.to_le_bytes());
    out.extend_from_slice(&params.expansion.to_le_bytes());
    out.extend_from_slice(&chain.seed().to_le_bytes());
    out.extend_from_slice(&(layers.len() as u32).to_le_bytes());
    out.extend_from_slice(&0u32.to_le_bytes());
    for layer in layers {
        out.extend_from_slice(&(layer.filter.num_lines() as u64).to_le_bytes());
        out.extend_from_slice(&layer.filter.k().to_le_bytes());
        out.extend_from_slice(&placement_code(layer.filter.placement()).to_le_bytes());
        out.extend_from_slice(&layer.items.to_le_bytes());
    }
    let sum = xxh3_64(&out);
    out.extend_from_slice(&sum.to_le_bytes());
    out
}

/// A chain from its header, its layers allocated and zeroed (the bits come in later chunks),
/// or the reason the header is not one this module wrote.
pub fn decode_header(bytes: &[u8]) -> Result<BloomChain, String> {
    decode_header_within(bytes, crate::chain::max_filter_bytes())
}

/// [`decode_header`] for a filter of at most `max_bytes` bytes of bits.
fn decode_header_within(bytes: &[u8], max_bytes: u64) -> Result<BloomChain, String> {
    let bad = |why: &str| format!("ERR invalid filter header: {why}");
    if bytes.len() < FIXED + CHECKSUM {
        return Err(bad("too short"));
    }
    if bytes[..4] != MAGIC {
        return Err(bad("not a linebloom filter"));
    }
    let version = u16::from_le_bytes([bytes[4], bytes[5]]);
    if version != VERSION {
        return Err(bad(&format!(
            "version {version}; this module reads version {VERSION}"
        )));
    }
    let (body, sum) = bytes.split_at(bytes.len() - CHECKSUM);
    if xxh3_64(body).to_le_bytes() != sum {
        return Err(bad("checksum mismatch"));
    }
    let u64_at = |at: usize| u64::from_le_bytes(body[at..at + 8].try_into().expect("8 bytes"));
    let u32_at = |at: usize| u32::from_le_bytes(body[at..at + 4].try_into().expect("4 bytes"));
    let params = Params {
        error_rate: f64::from_bits(u64_at(8)),
        capacity: u64_at(16),
        expansion: u64_at(24),
    };
    if !params.is_valid() {
        return Err(bad("error rate or capacity out of range"));
    }
    let seed = u64_at(32);
    let count = u32_at(40) as usize;
    if count == 0 || body.len() != FIXED + PER_LAYER * count {
        return Err(bad("layer count disagrees with the length"));
    }
    if !params.scaling() && count != 1 {
        return Err(bad("a non-scaling filter with more than one layer"));
    }
    // All layers' bits together, before any is allocated.
    let mut total = 0u64;
    for i in 0..count {
        total = total.saturating_add(u64_at(FIXED + PER_LAYER * i).saturating_mul(64));
    }
    crate::chain::check_filter_bytes(total, max_bytes)
        .map_err(|e| format!("ERR could not allocate the filter: {e}"))?;
    let mut layers = Vec::with_capacity(count);
    for i in 0..count {
        let at = FIXED + PER_LAYER * i;
        let lines = u64_at(at);
        let hashes = u32_at(at + 8);
        let items = u64_at(at + 16);
        if lines == 0 || !(1..=MAX_K).contains(&hashes) {
            return Err(bad(&format!("layer {i}: {lines} lines, {hashes} probes")));
        }
        let Some(placement) = placement_of(u32_at(at + 12)) else {
            return Err(bad(&format!(
                "layer {i}: unknown placement {}",
                u32_at(at + 12)
            )));
        };
        if items > params.layer_capacity(i) {
            return Err(bad(&format!(
                "layer {i} holds more items than its capacity"
            )));
        }
        let lines = usize::try_from(lines).map_err(|_| bad("layer too large"))?;
        let filter = BlockedBloom::with_lines_placed(lines, hashes, placement, seed)
            .map_err(|e| format!("ERR could not allocate the filter: {e}"))?;
        layers.push(Layer { filter, items });
    }
    Ok(BloomChain::from_layers(params, seed, layers))
}

/// The bits of one layer as bytes.
pub fn layer_bytes(layer: &Layer) -> &[u8] {
    bytemuck::cast_slice(layer.filter.lines())
}

fn layer_bytes_mut(layer: &mut Layer) -> &mut [u8] {
    bytemuck::cast_slice_mut(layer.filter.lines_mut())
}

/// The chunk `BF.SCANDUMP key iter` returns for `iter >= 1`: the iterator of the next call and
/// the bytes, or `None` past the end.
pub fn chunk(chain: &BloomChain, iter: u64) -> Option<(u64, &[u8])> {
    let mut offset = usize::try_from(iter.checked_sub(1)?).ok()?;
    for layer in chain.layers() {
        let bytes = layer_bytes(layer);
        if offset < bytes.len() {
            let end = bytes.len().min(offset + CHUNK_BYTES);
            let data = &bytes[offset..end];
            return Some((iter + data.len() as u64, data));
        }
        offset -= bytes.len();
    }
    None
}

/// Writes `data` where `BF.LOADCHUNK key iter data` puts it: at byte `iter - 1 - len` of the
/// bits, or an error when that range is not inside them.
pub fn load_chunk(chain: &mut BloomChain, iter: u64, data: &[u8]) -> Result<(), String> {
    let invalid = || "ERR invalid offset: the chunk lies outside the filter".to_string();
    let end = usize::try_from(iter.checked_sub(1).ok_or_else(invalid)?).map_err(|_| invalid())?;
    let mut offset = end.checked_sub(data.len()).ok_or_else(invalid)?;
    if end > chain.bits_bytes() {
        return Err(invalid());
    }
    let mut data = data;
    for layer in chain.layers_mut() {
        if data.is_empty() {
            break;
        }
        let bytes = layer_bytes_mut(layer);
        if offset >= bytes.len() {
            offset -= bytes.len();
            continue;
        }
        let take = data.len().min(bytes.len() - offset);
        bytes[offset..offset + take].copy_from_slice(&data[..take]);
        data = &data[take..];
        offset = 0;
    }
    Ok(())
}

/// Calls `each` with the chain's bits in chunks of at most [`CHUNK_BYTES`], oldest layer
/// first, with the `BF.LOADCHUNK` iterator of each.
pub fn for_each_chunk(chain: &BloomChain, mut each: impl FnMut(u64, &[u8])) {
    let mut iter = 1u64;
    while let Some((next, data)) = chunk(chain, iter) {
        each(next, data);
        iter = next;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn grown_chain() -> BloomChain {
        let mut chain = BloomChain::new(Params {
            error_rate: 0.01,
            capacity: 1_000,
            expansion: 2,
        })
        .unwrap();
        let hashes: Vec<u64> = (0..5_000u64)
            .map(|i| chain.hash(&i.to_le_bytes()))
            .collect();
        chain.insert_hashes(&hashes);
        chain
    }

    #[test]
    fn header_and_chunks_rebuild_the_chain() {
        let chain = grown_chain();
        assert!(chain.layers().len() >= 3);
        let mut copy = decode_header(&encode_header(&chain)).unwrap();
        assert_eq!(copy.items(), chain.items());
        assert_ne!(copy, chain);
        let mut chunks = Vec::new();
        for_each_chunk(&chain, |iter, data| chunks.push((iter, data.to_vec())));
        assert_eq!(chunks.len(), chain.layers().len());
        // Any order loads the same bits.
        for (iter, data) in chunks.iter().rev() {
            load_chunk(&mut copy, *iter, data).unwrap();
        }
        assert_eq!(copy, chain);
        assert_eq!(chunk(&chain, chunks.last().unwrap().0), None);
    }

    /// A header written before the shifted placement (0 in each layer's placement field) loads
    /// its layers as salted, so their bits keep every key; a new chain's layers are shifted
    /// and say so; an unknown code is refused.
    #[test]
    fn layer_placements_round_trip_and_old_headers_read_as_salted() {
        let chain = grown_chain();
        assert!(
            chain
                .layers()
                .iter()
                .all(|l| l.filter.placement() == Placement::Shifted)
        );
        let hashes: Vec<u64> = (0..1_000u64)
            .map(|i| chain.hash(&i.to_le_bytes()))
            .collect();
        let mut salted =
            BlockedBloom::with_lines_placed(500, 7, Placement::Salted, chain.seed()).unwrap();
        salted.insert_hashes(&hashes);
        let old = BloomChain::from_layers(
            chain.params(),
            chain.seed(),
            vec![Layer {
                filter: salted,
                items: 1_000,
            }],
        );
        let header = encode_header(&old);
        assert_eq!(
            header[FIXED + 12..FIXED + 16],
            [0, 0, 0, 0],
            "salted is the old 0"
        );
        let mut copy = decode_header(&header).unwrap();
        for_each_chunk(&old, |iter, data| {
            load_chunk(&mut copy, iter, data).unwrap()
        });
        assert_eq!(copy, old);
        assert!(hashes.iter().all(|&h| copy.contains_hash(h)));

        let mut unknown = header.clone();
        unknown[FIXED + 12] = 2;
        let body = unknown.len() - 8;
        let sum = xxh3_64(&unknown[..body]);
        unknown[body..].copy_from_slice(&sum.to_le_bytes());
        assert!(decode_header(&unknown).unwrap_err().contains("placement"));
    }

    #[test]
    fn chunks_split_large_layers_and_loads_may_cross_layers() {
        let mut chain = BloomChain::new(Params {
            error_rate: 0.0001,
            capacity: 10_000_000,
            expansion: 0,
        })
        .unwrap();
        chain.insert_hash(42).unwrap();
        assert!(chain.bits_bytes() > 2 * CHUNK_BYTES);
        let mut iters = Vec::new();
        for_each_chunk(&chain, |iter, data| {
            assert!(data.len() <= CHUNK_BYTES);
            iters.push(iter);
        });
        assert_eq!(iters.len(), chain.bits_bytes().div_ceil(CHUNK_BYTES));
        assert_eq!(*iters.last().unwrap(), chain.bits_bytes() as u64 + 1);

        let grown = grown_chain();
        let all: Vec<u8> = grown
            .layers()
            .iter()
            .flat_map(layer_bytes)
            .copied()
            .collect();
        let mut copy = decode_header(&encode_header(&grown)).unwrap();
        for piece in all.chunks(1000).enumerate() {
            let end = piece.0 * 1000 + piece.1.len();
            load_chunk(&mut copy, end as u64 + 1, piece.1).unwrap();
        }
        assert_eq!(copy, grown);
    }

    #[test]
    fn damaged_headers_and_offsets_are_errors() {
        let chain = grown_chain();
        let header = encode_header(&chain);
        for len in [0, 1, 47, 55, header.len() - 1] {
            assert!(decode_header(&header[..len]).is_err(), "length {len}");
        }
        for byte in 0..header.len() {
            let mut damaged = header.clone();
            damaged[byte] ^= 0x10;
            assert!(decode_header(&damaged).is_err(), "byte {byte}");
        }
        // A header with a valid checksum over nonsense parameters.
        let mut forged = header.clone();
        forged[8..16].copy_from_slice(&f64::NAN.to_le_bytes());
        let body = forged.len() - 8;
        let sum = xxh3_64(&forged[..body]);
        forged[body..].copy_from_slice(&sum.to_le_bytes());
        assert!(decode_header(&forged).unwrap_err().contains("error rate"));

        // Layers that together ask for more than the limit are refused before allocation.
        let refused = decode_header_within(&header, chain.bits_bytes() as u64 - 1);
        assert!(
            refused
                .unwrap_err()
                .contains("more than this machine's memory")
        );

        let mut copy = decode_header(&header).unwrap();
        let total = chain.bits_bytes() as u64;
        assert!(load_chunk(&mut copy, 0, b"").is_err());
        assert!(load_chunk(&mut copy, 3, b"abc").is_err());
        assert!(load_chunk(&mut copy, total + 2, b"a").is_err());
        assert!(load_chunk(&mut copy, u64::MAX, b"a").is_err());
        assert!(load_chunk(&mut copy, total + 1, b"a").is_ok());
    }
}
