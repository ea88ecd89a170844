//! What a storage engine embeds: views over bare lines it keeps in its own blocks, opens that
//! skip the checksum, streaming reads and writes, and `serde` (feature `serde`).

use linebloom::blocked::{AlignedBytes, Line, Placement};
use linebloom::hash::mix64;
use linebloom::{BlockedBloom, BlockedBloomRef, Error};

fn filled(keys: u64) -> BlockedBloom {
    filled_placed(keys, Placement::Shifted)
}

fn filled_placed(keys: u64, placement: Placement) -> BlockedBloom {
    let mut f = BlockedBloom::builder(keys)
        .fpr(0.01)
        .seed(9)
        .placement(placement)
        .build()
        .unwrap();
    f.insert_hashes(&(0..keys).map(mix64).collect::<Vec<_>>());
    f
}

/// Every answer of `view`, one key and batched, equals the filter's.
fn assert_answers_alike(view: &BlockedBloomRef<'_>, f: &BlockedBloom, keys: u64) {
    let probes: Vec<u64> = (0..2 * keys).map(mix64).collect();
    let mut want = vec![false; probes.len()];
    let mut got = vec![true; probes.len()];
    f.contains_hashes(&probes, &mut want).unwrap();
    view.contains_hashes(&probes, &mut got).unwrap();
    assert_eq!(got, want);
    assert!(
        probes
            .iter()
            .zip(&want)
            .all(|(&h, &w)| view.contains_hash(h) == w)
    );
    assert!(want[..keys as usize].iter().all(|&y| y), "a false negative");
}

#[test]
fn bare_lines_answer_as_the_filter_and_bad_parameters_are_errors() {
    for (keys, placement) in [1u64, 1_000, 300_000]
        .into_iter()
        .flat_map(|n| [(n, Placement::Shifted), (n, Placement::Salted)])
    {
        let f = filled_placed(keys, placement);
        let (k, seed) = (f.k(), f.seed());
        let view = BlockedBloomRef::from_lines(f.lines(), k, placement, seed).unwrap();
        assert_answers_alike(&view, &f, keys);
        let bytes: &[u8] = bytemuck::cast_slice(f.lines());
        let raw = BlockedBloomRef::from_raw_bytes(bytes, k, placement, seed).unwrap();
        assert_answers_alike(&raw, &f, keys);
        assert_eq!(raw.to_filter().unwrap(), f);
        let owned = BlockedBloom::from_lines(f.lines().to_vec(), k, placement, seed).unwrap();
        assert_eq!(owned, f);
        let mut rebuilt =
            BlockedBloom::with_lines_placed(f.num_lines(), k, placement, seed).unwrap();
        rebuilt.lines_mut().copy_from_slice(f.lines());
        assert_eq!(rebuilt, f);
    }
    let f = filled(100);
    let lines = f.lines();
    for k in [0, 17, u32::MAX] {
        assert!(
            BlockedBloomRef::from_lines(lines, k, Placement::Shifted, 0).is_err(),
            "k {k}"
        );
        assert!(BlockedBloom::from_lines(lines.to_vec(), k, Placement::Shifted, 0).is_err());
    }
    assert!(BlockedBloomRef::from_lines(&[], 6, Placement::Shifted, 0).is_err());
    assert!(BlockedBloom::from_lines(Vec::new(), 6, Placement::Shifted, 0).is_err());
    let bytes: &[u8] = bytemuck::cast_slice(lines);
    assert!(BlockedBloomRef::from_raw_bytes(&bytes[..63], 6, Placement::Shifted, 0).is_err());
    assert!(BlockedBloomRef::from_raw_bytes(&[], 6, Placement::Shifted, 0).is_err());
    // One byte in: misaligned, said so.
    let shifted: Vec<Line> = vec![Line::ZERO; 3];
    let shifted: &[u8] = bytemuck::cast_slice(&shifted);
    let e =
        BlockedBloomRef::from_raw_bytes(&shifted[1..129], 6, Placement::Shifted, 0).unwrap_err();
    assert!(matches!(e, Error::InvalidParameter { .. }), "{e}");
    assert!(e.to_string().contains("64-byte boundary"), "{e}");
}

#[test]
fn an_unverified_open_checks_the_header_and_length_but_not_the_checksum() {
    let f = filled(10_000);
    let bytes = AlignedBytes::from_slice(&f.to_bytes()).unwrap();
    let view = BlockedBloomRef::from_bytes_unverified(&bytes).unwrap();
    assert_answers_alike(&view, &f, 10_000);
    linebloom::format::verify(&bytes).unwrap();
    // A flipped payload bit: the checked opens refuse it, the unverified one opens.
    let mut damaged = bytes.to_vec();
    damaged[64 + 100] ^= 4;
    let damaged = AlignedBytes::from_slice(&damaged).unwrap();
    assert!(BlockedBloomRef::from_bytes(&damaged).is_err());
    assert!(linebloom::format::verify(&damaged).is_err());
    assert!(BlockedBloomRef::from_bytes_unverified(&damaged).is_ok());
    // A damaged header or length is refused either way.
    let mut bad_magic = bytes.to_vec();
    bad_magic[0] ^= 1;
    let bad_magic = AlignedBytes::from_slice(&bad_magic).unwrap();
    assert!(BlockedBloomRef::from_bytes_unverified(&bad_magic).is_err());
    let short = AlignedBytes::from_slice(&bytes[..bytes.len() - 1]).unwrap();
    assert!(BlockedBloomRef::from_bytes_unverified(&short).is_err());
    let cuckoo = linebloom::CuckooFilter::with_fpr(100, 0.01)
        .unwrap()
        .to_bytes();
    let cuckoo = AlignedBytes::from_slice(&cuckoo).unwrap();
    assert!(BlockedBloomRef::from_bytes_unverified(&cuckoo).is_err());
}

#[test]
fn read_from_streams_into_lines_and_leaves_what_follows() {
    for keys in [1u64, 5_000, 200_000] {
        let f = filled(keys);
        let mut file = Vec::new();
        f.write_to(&mut file).unwrap();
        assert_eq!(file, f.to_bytes());
        let len = file.len();
        file.extend_from_slice(b"next block");
        let mut input = &file[..];
        assert_eq!(BlockedBloom::read_from(&mut input).unwrap(), f);
        assert_eq!(input, b"next block");
        // Cut anywhere: an error, never a panic.
        for cut in [0, 1, 63, 64, 65, len / 2, len - 8, len - 1] {
            let e = BlockedBloom::read_from(&file[..cut]).unwrap_err();
            assert!(matches!(e, Error::Corrupt(_)), "cut {cut}: {e}");
        }
        // Any flipped byte: an error.
        for at in [0, 11, 40, 64, len / 2, len - 9, len - 1] {
            let mut damaged = file[..len].to_vec();
            damaged[at] ^= 0x10;
            assert!(BlockedBloom::read_from(&damaged[..]).is_err(), "byte {at}");
        }
    }
    // A header announcing far more lines than the stream holds: an error, after reading only
    // what is there.
    let mut huge = filled(10).to_bytes();
    let lines = u64::from_le_bytes(huge[32..40].try_into().unwrap());
    huge[32..40].copy_from_slice(&(lines << 30).to_le_bytes());
    huge[56..64].copy_from_slice(&((lines << 30) * 64).to_le_bytes());
    assert!(BlockedBloom::read_from(&huge[..]).is_err());
    // A failing reader is an I/O error.
    struct Failing;
    impl std::io::Read for Failing {
        fn read(&mut self, _: &mut [u8]) -> std::io::Result<usize> {
            Err(std::io::Error::other("disk on fire"))
        }
    }
    let e = BlockedBloom::read_from(Failing).unwrap_err();
    assert!(
        matches!(e, Error::Io(_)) && e.to_string().contains("disk on fire"),
        "{e}"
    );
}

#[cfg(feature = "serde")]
#[test]
fn every_filter_round_trips_through_serde_as_its_format_bytes() {
    use linebloom::{
        AnyFilter, ClassicBloom, CountingBlockedBloom, CuckooFilter, ScalableBlockedBloom,
        SplitBlockBloom,
    };

    fn round_trip<F>(f: &F, bytes: Vec<u8>)
    where
        F: serde::Serialize + serde::de::DeserializeOwned + PartialEq + std::fmt::Debug,
    {
        let json = serde_json::to_string(f).unwrap();
        let back: F = serde_json::from_str(&json).unwrap();
        assert_eq!(&back, f);
        // The value is the format's bytes.
        let as_bytes: Vec<u8> = serde_json::from_str(&json).unwrap();
        assert_eq!(as_bytes, bytes);
        // A damaged value is an error, not a filter.
        let mut damaged = bytes;
        let last = damaged.len() - 1;
        damaged[last] ^= 1;
        let json = serde_json::to_string(&damaged).unwrap();
        assert!(serde_json::from_str::<F>(&json).is_err());
    }

    let hashes: Vec<u64> = (0..2_000).map(mix64).collect();
    let mut blocked = BlockedBloom::with_fpr(2_000, 0.01).unwrap();
    let mut classic = ClassicBloom::with_fpr(2_000, 0.01).unwrap();
    let mut cuckoo = CuckooFilter::with_fpr(2_000, 0.01).unwrap();
    let mut counting = CountingBlockedBloom::with_fpr(2_000, 0.01).unwrap();
    let mut scalable = ScalableBlockedBloom::with_fpr(100, 0.01).unwrap();
    let mut split = SplitBlockBloom::with_fpr(2_000, 0.01).unwrap();
    for &h in &hashes {
        blocked.insert_hash(h);
        classic.insert_hash(h);
        cuckoo.insert_hash(h).unwrap();
        counting.insert_hash(h);
        scalable.insert_hash(h);
        split.insert_hash(h);
    }
    round_trip(&blocked, blocked.to_bytes());
    round_trip(&classic, classic.to_bytes());
    round_trip(&cuckoo, cuckoo.to_bytes());
    round_trip(&counting, counting.to_bytes());
    round_trip(&scalable, scalable.to_bytes());
    round_trip(&split, split.to_bytes());
    let any = AnyFilter::from(blocked.clone());
    round_trip(&any, any.to_bytes());
    // A filter of one kind does not deserialize as another.
    let json = serde_json::to_string(&classic).unwrap();
    assert!(serde_json::from_str::<BlockedBloom>(&json).is_err());
}
