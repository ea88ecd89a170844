//! The short measurement behind a recommendation: the chosen filter built at a size the budget
//! allows, filled, and its lookups timed.

use super::*;

/// How long the measurement may take and how large a filter it may build.
#[derive(Clone, Copy, Debug)]
pub struct MeasureBudget {
    /// The largest filter built; a larger recommendation is measured at this size with the
    /// same parameters.
    pub max_bytes: usize,
    /// Time for filling the filter (lookups take about a fifth more on top).
    pub fill_time: Duration,
    /// Lookups per batch.
    pub lookups: usize,
}

impl Default for MeasureBudget {
    /// 64 MiB (past a 32 MiB last-level cache), 1.2 s of filling, 1 Mi lookups per batch (64
    /// MiB of lines, so repeated batches do not run from the cache): about 2 s.
    fn default() -> Self {
        MeasureBudget {
            max_bytes: 64 << 20,
            fill_time: Duration::from_millis(1200),
            lookups: 1 << 20,
        }
    }
}

/// Builds the recommended filter (or one of its parameters at the budget's size), fills it
/// for at most the budget's time, and measures its lookups.
pub fn measure(rec: &Recommendation, budget: MeasureBudget, seed: u64) -> Result<Measured> {
    let c = &rec.chosen;
    // A growing filter is measured grown: its size and bits per key at GROWN_FACTOR times
    // its start, from a start a GROWN_FACTOR-th of the keys it is filled with.
    let (full_bytes, bits_per_key) = match &c.grown {
        Some(g) => (g.bytes, g.bits_per_key),
        None => (c.bytes, c.bits_per_key),
    };
    // A chain's inserts and misses read each of its filters: measured no larger than the
    // report's speed sweep measures it, so that the fill completes in the time budget.
    let contender = Contender::Ours(c.filter);
    let most = contender
        .speed_sweep_max_bytes()
        .map_or(budget.max_bytes, |m| m.min(budget.max_bytes));
    let bytes = (full_bytes as usize).min(most.max(64));
    let items = ((bytes as f64 * 8.0 / bits_per_key) as usize).max(1);
    let mut subject: Box<dyn Subject> = match c.filter {
        FilterKind::Scalable => Box::new(
            ScalableBlockedBloom::builder((items as u64 / GROWN_FACTOR).max(1))
                .fpr(c.fpr)
                .seed(seed)
                .build()?,
        ),
        _ => build_subject(contender, items, c.bits_per_key, seed)?,
    };
    let pool = if subject.has_parallel_insert() {
        Some(thread_pool(
            std::thread::available_parallelism().map_or(1, |n| n.get()),
        )?)
    } else {
        None
    };
    let chunk = (items / 16).clamp(1 << 12, 1 << 20);
    let (mut inserted, mut fill) = (0usize, Duration::ZERO);
    let mut buffer = Vec::with_capacity(chunk);
    while inserted < items && fill < budget.fill_time {
        let end = (inserted + chunk).min(items);
        buffer.clear();
        buffer.extend((inserted as u64..end as u64).map(|i| key_hash(seed, 0, i)));
        let how = match &pool {
            Some(pool) => Method::Parallel(pool),
            None => Method::OneByOne,
        };
        fill += timed_insert(how, &mut subject, &buffer)?.1;
        inserted = end;
    }
    subject.finish()?;
    let sampling = Sampling {
        reps: 3,
        min_sample: Duration::from_millis(20),
    };
    let n = budget.lookups.max(1);
    let hits: Vec<u64> = (0..n as u64)
        .map(|j| key_hash(seed, 0, reduce(mix64(j), inserted) as u64))
        .collect();
    let misses: Vec<u64> = (0..n as u64).map(|j| key_hash(seed, 1, j)).collect();
    let hit = sample_batch(sampling, n, || subject.count_each(black_box(&hits)));
    let miss = sample_batch(sampling, n, || subject.count_each(black_box(&misses)));
    let mut out = vec![false; n];
    let batched_miss = sample_batch(sampling, n, || {
        subject
            .count_batched(black_box(&misses), &mut out)
            .and_then(|r| r.ok())
            .unwrap_or(0)
    });
    let filled = inserted as f64 / items as f64;
    let mut note = if bytes < full_bytes as usize {
        format!(
            "measured on a {} filter with the same parameters (the recommended {} is larger \
             than the measurement builds); a larger filter can only be slower per lookup",
            crate::report::byte_size::format_byte_size(bytes),
            crate::report::byte_size::format_byte_size(full_bytes as usize)
        )
    } else {
        format!(
            "measured on the recommended {} filter",
            crate::report::byte_size::format_byte_size(bytes)
        )
    };
    if filled < 1.0 {
        note.push_str(&format!(
            ", filled to {:.0} % of its keys in the time budget",
            filled * 100.0
        ));
    }
    Ok(Measured {
        bytes: subject.size_bytes(),
        items,
        filled,
        insert_ns: crate::report::measure::ns_per_op(fill, inserted),
        parallel_insert: pool.is_some(),
        hit,
        miss,
        batched_miss,
        note,
    })
}
