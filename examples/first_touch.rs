//! What touching fresh memory for the first time costs on this machine: the price of scratch
//! memory allocated per call, which the partitioned insert's buffers pay when they are not kept
//! (`BuildBuffers`).
//!
//! ```sh
//! cargo run --release --example first_touch -- [MIB] [PAUSE_SECONDS]
//! ```
//!
//! (defaults: 238 MiB, the buffers of 100 M keys into a 119 MiB filter at 16 keys per line of a
//! chunk; a pause of 5 s.) Maps MIB of fresh anonymous memory, advised onto small or huge pages,
//! writes one byte in every 4 KiB page from one or two threads, and unmaps it; each way right
//! after the previous one freed its memory, and again after PAUSE_SECONDS (on a VM that hands
//! freed memory back to its host, the pause lets it). Prints the median and range of five
//! rounds in ms, and in ns per key of 100 M keys.

#[cfg(target_os = "linux")]
fn main() {
    use memmap2::{Advice, MmapMut};
    use std::time::{Duration, Instant};

    const PAGE: usize = 4096;
    // Arguments that do not parse fall back to the defaults, as in `bulk_scaling`.
    let mut args = std::env::args().skip(1).map(|a| a.parse::<usize>());
    let mib = args
        .next()
        .and_then(Result::ok)
        .unwrap_or(238)
        .clamp(1, 1 << 20);
    let pause = args.next().and_then(Result::ok).unwrap_or(5) as u64;
    let bytes = mib << 20;

    // One fresh mapping, touched from `threads` threads; the time of the touching alone.
    let touch = |huge: bool, threads: usize| -> f64 {
        let Ok(mut map) = MmapMut::map_anon(bytes) else {
            eprintln!("first_touch: cannot map {mib} MiB");
            std::process::exit(1);
        };
        let advice = if huge {
            Advice::HugePage
        } else {
            Advice::NoHugePage
        };
        // Advice is best effort, as for the filter's own lines.
        let _ = map.advise(advice);
        let share = bytes.div_ceil(threads).next_multiple_of(PAGE);
        let started = Instant::now();
        std::thread::scope(|s| {
            for part in map.chunks_mut(share) {
                s.spawn(move || part.iter_mut().step_by(PAGE).for_each(|b| *b = 1));
            }
        });
        let ms = started.elapsed().as_secs_f64() * 1e3;
        std::hint::black_box(&map);
        ms
    };

    println!("first touch of {mib} MiB of fresh memory, 5 rounds (median, range):");
    for (label, wait) in [("right after a free", 0), ("after a pause", pause)] {
        let ways = [(false, 1), (false, 2), (true, 1), (true, 2)];
        let mut ms = vec![Vec::new(); ways.len()];
        for _ in 0..5 {
            for (&(huge, threads), out) in ways.iter().zip(&mut ms) {
                std::thread::sleep(Duration::from_secs(wait));
                out.push(touch(huge, threads));
            }
        }
        for (&(huge, threads), v) in ways.iter().zip(&mut ms) {
            v.sort_by(f64::total_cmp);
            let pages = if huge { "huge pages " } else { "small pages" };
            println!(
                "  {label:<18} {pages} {threads} thread(s): {:7.1} ms ({:.1}-{:.1}), {:.2} ns per key of 100 M",
                v[2],
                v[0],
                v[4],
                v[2] * 1e6 / 1e8
            );
        }
    }
}

#[cfg(not(target_os = "linux"))]
fn main() {
    eprintln!("first_touch maps memory with Linux's advice; nothing to measure here");
}
