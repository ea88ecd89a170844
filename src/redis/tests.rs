use super::layout::{Params, check_name, shard_key};
use super::line_from;
use crate::BlockedBloom;
use crate::filter::Sizing;
use crate::hash::mix64;

fn params(shards: u32) -> Params {
    Params::new(10_000, Sizing::Fpr(0.01), None, 7, shards).unwrap()
}

/// Sets Redis bit `offset` of `bytes` the way `SETBIT` does: bit 0 is the most significant bit
/// of byte 0.
fn redis_setbit(bytes: &mut [u8], offset: u64) {
    bytes[(offset / 8) as usize] |= 0x80 >> (offset % 8);
}

#[test]
fn redis_bit_offsets_give_the_engines_bytes() {
    for shards in [1, 3] {
        let p = params(shards);
        // The shared filter places bits as the salted placement (its configuration records no
        // other).
        let salted = crate::blocked::Placement::Salted;
        let mut engine =
            BlockedBloom::with_lines_placed(p.total_lines() as usize, p.hashes, salted, p.seed)
                .unwrap();
        let shard_bytes = (p.lines_per_shard * 64) as usize;
        let mut redis = vec![vec![0u8; shard_bytes]; shards as usize];
        let mut offsets = Vec::new();
        for i in 0..5_000u64 {
            let h = mix64(i);
            engine.insert_hash(h);
            offsets.clear();
            let (shard, n) = p.offsets(h, &mut offsets);
            assert_eq!(n, offsets.len());
            assert!(n as u32 <= p.hashes && n >= 1);
            for &o in &offsets {
                redis_setbit(&mut redis[shard], o);
            }
        }
        let joined: Vec<u8> = redis.concat();
        assert_eq!(joined, bytemuck::cast_slice::<_, u8>(engine.lines()));
        // A line read back from those bytes answers as the engine does.
        for i in 0..10_000u64 {
            let h = mix64(i);
            let (shard, line) = p.locate(h);
            let start = (line * 64) as usize;
            let got = line_from(&redis[shard][start..start + 64])
                .test(crate::engine::mask::lookup_mask_for(h, p.hashes));
            assert_eq!(got, engine.contains_hash(h), "key {i}");
        }
    }
}

#[test]
fn a_short_line_reads_as_zeros_past_its_end() {
    assert_eq!(line_from(&[]), crate::blocked::Line::ZERO);
    let line = line_from(&[0xff; 3]);
    assert_eq!(line.count_ones(), 24);
}

#[test]
fn config_text_round_trips_and_rejects_damage() {
    let p = params(4);
    assert_eq!(Params::decode(&p.encode()).unwrap(), p);
    let b = Params::new(500, Sizing::BitsPerKey(9.5), Some(5), 1, 1).unwrap();
    assert_eq!(Params::decode(&b.encode()).unwrap(), b);
    let text = p.encode();
    // Scheme 2, as every config written before the shifted placement: shared filters keep
    // the salted placement, so clients of either version open each other's filters.
    assert!(text.contains(" scheme=2 "), "{text}");
    for bad in [
        String::new(),
        text.replace("version=2", "version=1"),
        // Any edit, even to a value in range, breaks the checksum.
        text.replace("seed=7", "seed=8"),
        text.replace("shards=4", "shards=2"),
        text.replace(" check=", " x=1 check="),
        text[..text.len() - 1].to_owned(),
        text.replace("scheme=", "scheme=9"),
        text.replace("shards=4", "shards=0"),
        text.replace("hashes=", "hashes=99"),
        text.replace(" fpr=0.01", ""),
        format!("{text} bits_per_key=3"),
        text.replace("seed=7", "seed=x"),
        "garbage".into(),
    ] {
        assert!(Params::decode(&bad).is_err(), "{bad}");
    }
}

#[test]
fn parameters_are_checked() {
    assert!(Params::new(0, Sizing::Fpr(0.01), None, 0, 1).is_err());
    assert!(Params::new(10, Sizing::Fpr(1.5), None, 0, 1).is_err());
    assert!(Params::new(10, Sizing::Fpr(0.01), None, 0, 0).is_err());
    assert!(Params::new(10, Sizing::Fpr(0.01), Some(17), 0, 1).is_err());
    // 1 G keys at 1 % need about 1.2 GB: more than one Redis string holds.
    let err = Params::new(1 << 30, Sizing::Fpr(0.01), None, 0, 1).unwrap_err();
    assert!(err.to_string().contains("512 MiB"), "{err}");
    assert!(Params::new(1 << 30, Sizing::Fpr(0.01), None, 0, 4).is_ok());
}

#[test]
fn names_and_shard_keys() {
    assert!(check_name("seen").is_ok());
    assert!(check_name("").is_err());
    assert!(check_name("a{b}").is_err());
    assert_eq!(shard_key("seen", 2), "seen:{seen:2}");
}

#[test]
fn trailers_name_their_filter_and_shard() {
    let p = params(4);
    let t = p.trailer(2);
    assert_eq!(p.trailer_mismatch(2, &t), None);
    let why = |shard, bytes: &[u8]| p.trailer_mismatch(shard, bytes).unwrap();
    assert!(why(1, &t).contains("holds shard 2"), "{}", why(1, &t));
    assert!(why(2, &[]).contains("missing"));
    assert!(why(2, &t[..63]).contains("missing"));
    assert!(why(2, &[0; 64]).contains("missing"));
    // Another create of the same shape has another id.
    let other = params(4);
    assert_ne!(other.id, p.id);
    assert!(why(2, &other.trailer(2)).contains("another filter"));
    // Another config of the same id (edited and re-checksummed) differs too.
    let edited = Params {
        seed: 8,
        ..p.clone()
    };
    assert!(why(2, &edited.trailer(2)).contains("config"));
    let mut flipped = t;
    flipped[30] ^= 1;
    assert!(p.trailer_mismatch(2, &flipped).is_some());
    assert_eq!(super::layout::trailer_shards(&t), Some(4));
    assert_eq!(super::layout::shard_count_of(&p.encode()), Some(4));
}
