//! The words of a recommendation: what the chosen filter gives and costs next to the others.

use super::*;

/// Two or three lines on what the chosen filter gives and costs next to the others.
pub(super) fn explain(chosen: &Candidate, premium: Option<f64>, all: &[Candidate]) -> Vec<String> {
    let other = |k: FilterKind| all.iter().find(|c| c.filter == k);
    let mut lines = Vec::new();
    match chosen.filter {
        FilterKind::Blocked => {
            lines.push(format!(
                "blocked: every lookup reads one 64-byte line (one cache miss), where a classic \
                 filter reads up to {} and a cuckoo filter two.",
                other(FilterKind::Classic).map_or(chosen.hashes, |c| c.hashes)
            ));
            if let Some(p) = premium {
                lines.push(format!(
                    "The price: {:.1} % more memory than the smallest alternative for the same \
                     FPR (the rule accepts up to {:.0} %; the premium grows as the FPR falls).",
                    p * 100.0,
                    BLOCKED_PREMIUM_LIMIT * 100.0
                ));
            }
        }
        FilterKind::Classic => {
            lines.push(format!(
                "classic: the lowest FPR per bit of the three, but a lookup of a present key \
                 reads {} scattered lines (an absent key stops at its first zero bit, about 2).",
                chosen.hashes
            ));
            if let Some(p) = premium {
                lines.push(format!(
                    "The blocked filter would need {:.0} % more memory for this FPR (the rule \
                     takes it up to {:.0} %).",
                    p * 100.0,
                    BLOCKED_PREMIUM_LIMIT * 100.0
                ));
            }
        }
        FilterKind::Cuckoo => {
            lines.push(format!(
                "cuckoo: {}-bit fingerprints, two buckets per lookup, and keys can be removed; \
                 its fixed widths (8, 12, 16 bits) make it the smallest only near their FPRs \
                 (2.9 %, 0.19 %, 0.012 %), and inserts slow down as the table fills.",
                chosen.hashes
            ));
            if let Some(p) = premium {
                lines.push(format!(
                    "The blocked filter would need {:.0} % more memory for this FPR.",
                    p * 100.0
                ));
            }
        }
        FilterKind::Counting => lines.push(format!(
            "counting: the blocked layout with 4-bit counters (k={}), so keys can be removed \
             and an insert never fails; one line per lookup, for four times the memory of a \
             blocked filter with as many counters per key as it has bits.",
            chosen.hashes
        )),
        FilterKind::Scalable => {
            lines.push(
                "scalable: a chain of blocked filters that grows with its keys, its FPR under \
                 the target however far it grows; a miss reads one line in each filter."
                    .to_string(),
            );
            if let Some(g) = &chosen.grown {
                lines.push(format!(
                    "At {}x its start ({} keys) it is {} filters, {:.1} bits per key; one \
                     blocked filter sized for that count would take {:.1} and read one line: \
                     if the most keys it will hold is known, give that as --items without \
                     --grows.",
                    GROWN_FACTOR, g.items, g.filters, g.bits_per_key, g.blocked_bits_per_key
                ));
            }
        }
        FilterKind::SplitBlock => lines.push(
            "split-block: Parquet's layout (32-byte blocks, 8 bits per key), for filters that \
             Parquet readers must read."
                .to_string(),
        ),
    }
    lines
}
