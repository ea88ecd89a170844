//! The concurrent filter under contention: several threads insert and query at once. Every
//! insert that returned is visible to later lookups on its own thread, and on other threads
//! once they synchronised with it (join, channel); the final bits equal a sequential build.

use std::sync::mpsc;

use linebloom::hash::mix64;
use linebloom::{AtomicBlockedBloom, BlockedBloom};

const THREADS: u64 = 4;
const PER_THREAD: u64 = 50_000;

fn key(thread: u64, i: u64) -> u64 {
    mix64(thread << 32 | i)
}

#[test]
fn concurrent_inserts_and_lookups_lose_nothing_and_match_a_sequential_build() {
    for k in [3, 7, 16] {
        // A small filter (64 KiB), so threads contend for the same lines all the time.
        let filter = AtomicBlockedBloom::with_lines(1024, k, 17).unwrap();
        std::thread::scope(|s| {
            for t in 0..THREADS {
                let filter = &filter;
                s.spawn(move || {
                    for i in 0..PER_THREAD {
                        filter.insert_hash(key(t, i));
                        // Own inserts are visible at once.
                        assert!(filter.contains_hash(key(t, i)), "k={k} t={t} i={i}");
                        // And every earlier one still is, while other threads write the lines.
                        let earlier = mix64(i) % (i + 1);
                        assert!(filter.contains_hash(key(t, earlier)));
                    }
                });
            }
            // A reader racing the writers: its answers may go either way for keys being
            // inserted, but it must never crash or tear a line.
            let filter = &filter;
            s.spawn(move || {
                let mut yes = 0u64;
                for i in 0..PER_THREAD {
                    yes += u64::from(filter.contains_hash(key(i % THREADS, i)));
                }
                assert!(yes <= PER_THREAD);
            });
        });
        // After the join, every insert happened before these lookups.
        for t in 0..THREADS {
            assert!(
                (0..PER_THREAD).all(|i| filter.contains_hash(key(t, i))),
                "k={k}"
            );
        }
        let mut sequential = BlockedBloom::with_lines(1024, k, 17).unwrap();
        for t in 0..THREADS {
            for i in 0..PER_THREAD {
                sequential.insert_hash(key(t, i));
            }
        }
        assert_eq!(filter.to_blocked(), sequential, "k={k}");
        assert_eq!(filter.into_blocked(), sequential, "k={k}");
    }
}

#[test]
fn inserts_handed_over_through_a_channel_are_visible_to_the_receiver() {
    let filter = AtomicBlockedBloom::with_lines(4096, 7, 1).unwrap();
    let (tx, rx) = mpsc::channel::<u64>();
    std::thread::scope(|s| {
        let writer = &filter;
        s.spawn(move || {
            for batch in 0..200u64 {
                for i in batch * 100..(batch + 1) * 100 {
                    writer.insert(&i);
                }
                // The send orders the batch's inserts before the receiver's lookups.
                tx.send((batch + 1) * 100).unwrap();
            }
        });
        let reader = &filter;
        s.spawn(move || {
            for done in rx {
                assert!((0..done).all(|i| reader.contains(&i)), "up to {done}");
            }
        });
    });
}

#[test]
fn conversions_keep_the_bits() {
    let mut owned = BlockedBloom::with_fpr(10_000, 0.01).unwrap();
    (0..5_000u64).for_each(|i| owned.insert(&i));
    let atomic = AtomicBlockedBloom::from(owned.clone());
    assert_eq!(
        (atomic.k(), atomic.seed(), atomic.num_lines()),
        (owned.k(), owned.seed(), owned.num_lines())
    );
    assert_eq!(atomic.size_bytes(), owned.size_bytes());
    assert!((0..5_000u64).all(|i| atomic.contains(&i)));
    (5_000..10_000u64).for_each(|i| atomic.insert(&i));
    (5_000..10_000u64).for_each(|i| owned.insert(&i));
    let mut back = BlockedBloom::from(atomic);
    assert_eq!(back, owned);
    back.clear();
    let mut atomic = AtomicBlockedBloom::from(back);
    atomic.clear();
    assert!(!atomic.contains(&1u64));
    assert_eq!(atomic.to_blocked().count_ones(), 0);
    assert!(AtomicBlockedBloom::with_lines(0, 7, 0).is_err());
    assert!(AtomicBlockedBloom::with_lines(1, 17, 0).is_err());
}
