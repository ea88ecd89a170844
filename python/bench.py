"""What the Python binding costs: `contains_many` against the Rust batched call on the same filter
and hashes, and the one-key `in` against rbloom's.

    python python/bench.py [--probes N] [--items N] [--rust PATH] [--json]

Needs the wheel and numpy installed; rbloom (`pip install rbloom`) for the one-key comparison
(skipped without it). The Rust figure comes from `examples/batched_lookup.rs`: build it first
with `cargo build --release --example batched_lookup` (or pass `--rust` to its binary).

- batched: a filter of ITEMS keys at 10 bits per key (cache-sized by default), PROBES random
  uint64 hashes never inserted; the best pass of one `contains_many` call over all of them,
  beside the best of `contains_hashes` in Rust over the same saved filter and the same
  hashes, the two sides taking turns (3 rounds of 7 passes each);
- keyed batch: `contains_many` on a list of 1 Mi str keys (hashed in Rust, one pass);
- one key: `key in f` in a Python loop over 1 Mi str keys, and the same loop over an rbloom
  filter of the same size and FPR; the loop with a plain set lookup is the floor of the loop
  itself. The best of 5 passes each.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

import linebloom

REPO = Path(__file__).resolve().parents[1]


def best_of(passes: int, run) -> float:
    best = float("inf")
    for _ in range(passes):
        t = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - t)
    return best


def one_key_loop(filter_, keys) -> None:
    for key in keys:
        key in filter_  # noqa: B015


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--probes", type=int, default=10_000_000)
    parser.add_argument("--items", type=int, default=100_000)
    parser.add_argument("--rust", type=Path, default=REPO / "target/release/examples/batched_lookup")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    rng = np.random.default_rng(1)
    f = linebloom.BlockedBloom.with_bits_per_key(args.items, 10.0)
    f.add_many(rng.integers(0, 2**64, size=args.items, dtype=np.uint64))
    probes = rng.integers(0, 2**64, size=args.probes, dtype=np.uint64)
    rows = {"filter_bytes": f.size_bytes, "probes": args.probes, "simd_path": linebloom.simd_path()}

    # Python and Rust take turns (3 rounds of 7 passes each, the best pass of each side kept),
    # so that a shared host's slow moments fall on both sides alike.
    yes = int(f.contains_many(probes).sum())
    python_best, rust_best = float("inf"), 0.0
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "f.lbf").write_bytes(f.to_bytes())
        probes.astype("<u8").tofile(Path(tmp) / "probes.u64")
        for _ in range(3):
            python_best = min(python_best, best_of(7, lambda: f.contains_many(probes)))
            if not args.rust.is_file():
                continue
            out = subprocess.run(
                [args.rust, Path(tmp) / "f.lbf", Path(tmp) / "probes.u64"],
                check=True,
                capture_output=True,
                text=True,
            ).stdout
            rust = json.loads(out)
            assert rust["yes"] == yes, "Rust and Python disagree on the same filter and hashes"
            rust_best = max(rust_best, float(rust["keys_per_s"]))
    rows["python_contains_many_keys_per_s"] = args.probes / python_best
    if rust_best:
        rows["rust_contains_hashes_keys_per_s"] = rust_best
        rows["rust_over_python"] = rust_best / rows["python_contains_many_keys_per_s"]
    else:
        print(f"no {args.rust}: cargo build --release --example batched_lookup", file=sys.stderr)

    keys = [f"user:{i}" for i in range(1 << 20)]
    seconds = best_of(3, lambda: f.contains_many(keys))
    rows["python_contains_many_str_keys_per_s"] = len(keys) / seconds

    g = linebloom.BlockedBloom(len(keys), 0.01)
    g.add_many(keys[::2])
    rows["python_in_ns"] = best_of(5, lambda: one_key_loop(g, keys)) / len(keys) * 1e9
    half = set(keys[::2])
    rows["set_in_ns"] = best_of(5, lambda: one_key_loop(half, keys)) / len(keys) * 1e9
    try:
        import rbloom
    except ImportError:
        print("no rbloom: pip install rbloom for the one-key comparison", file=sys.stderr)
    else:
        r = rbloom.Bloom(len(keys), 0.01)
        r.update(keys[::2])
        rows["rbloom_in_ns"] = best_of(5, lambda: one_key_loop(r, keys)) / len(keys) * 1e9
        rows["rbloom_version"] = importlib.metadata.version("rbloom")
        rows["python_in_over_rbloom"] = rows["python_in_ns"] / rows["rbloom_in_ns"]
    rows["python"] = platform.python_version()

    if args.json:
        print(json.dumps(rows, indent=2))
        return
    for name, value in rows.items():
        print(f"{name:40} {value:,.2f}" if isinstance(value, float) else f"{name:40} {value}")


if __name__ == "__main__":
    main()
