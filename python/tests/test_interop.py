"""Files cross the language boundary: what Rust writes, Python reads, and the other way round.

- `tests/data/blocked_v1.lbf` is the Rust crate's golden file (pinned by `tests/format.rs`):
  Python builds the same filter from the same keys and must write the same bytes.
- `python/tests/data/cli_blocked.lbf` was written by `linebloom build` from `cli_keys.txt`.
- With the CLI binary at hand (`LINEBLOOM_CLI`, else `target/{debug,release}/linebloom`, which
  `cargo test` builds before `.ci/run` runs these tests), a fresh round trip through it.
"""

import os
import subprocess
from pathlib import Path

import pytest

from linebloom import BlockedBloom


def read_keys(path: Path) -> list[bytes]:
    # The CLI's rule: one key per line, its bytes without the newline.
    return path.read_bytes().split(b"\n")[:-1]


def test_rust_golden_file(repo):
    golden = (repo / "tests/data/blocked_v1.lbf").read_bytes()
    # `BlockedBloom::with_lines(4, 7, 42)` with "key-0".."key-39" inserted, in Rust.
    f = BlockedBloom.with_bits_per_key(40, 4 * 512 / 40, k=7, seed=42)
    f.add_many([f"key-{i}" for i in range(40)])
    assert f.to_bytes() == golden
    g = BlockedBloom.from_bytes(golden)
    assert g == f and all(f"key-{i}" in g for i in range(40))


def test_file_written_by_the_cli(data):
    keys = read_keys(data / "cli_keys.txt")
    assert b"" in keys and "ünïcode".encode() in keys
    from_cli = BlockedBloom.from_bytes((data / "cli_blocked.lbf").read_bytes())
    assert from_cli.contains_many(keys).all()
    assert all(k.decode() in from_cli for k in keys)
    # The CLI sizes the filter for the keys it read at the asked FPR, as Python does here; the
    # bits agree (the file also records the CLI's item count, so only the filters compare).
    ours = BlockedBloom(len(keys), 0.01)
    ours.add_many(keys)
    assert ours == from_cli


def cli_binary(repo: Path) -> Path | None:
    if os.environ.get("LINEBLOOM_CLI"):
        return Path(os.environ["LINEBLOOM_CLI"])
    for profile in ["release", "debug"]:
        path = repo / "target" / profile / "linebloom"
        if path.is_file():
            return path
    return None


def test_round_trip_through_the_cli(repo, data, tmp_path):
    cli = cli_binary(repo)
    if cli is None:
        pytest.skip("no linebloom CLI binary built (cargo build -p linebloom-cli)")
    keys = read_keys(data / "cli_keys.txt")
    # Rust writes, Python reads.
    built = tmp_path / "rust.lbf"
    subprocess.run(
        [cli, "build", "--filter", "blocked", "--fpr", "0.01", "--input", data / "cli_keys.txt", "--output", built],
        check=True,
        capture_output=True,
    )
    from_rust = BlockedBloom.from_bytes(built.read_bytes())
    ours = BlockedBloom(len(keys), 0.01)
    ours.add_many(keys)
    assert from_rust == ours
    # Python writes, Rust reads: every key of ours is "yes"; int keys go as their 8 bytes.
    ours.add(12345)
    written = tmp_path / "python.lbf"
    written.write_bytes(ours.to_bytes())
    probe = [k.decode() for k in keys if k and b"\t" not in k] + ["surely-absent-key"]
    out = subprocess.run(
        [cli, "query", written],
        input="\n".join(probe) + "\n",
        check=True,
        capture_output=True,
        text=True,
    ).stdout.splitlines()
    answers = dict(line.rsplit("\t", 1) for line in out)
    assert all(answers[k] == "yes" for k in probe[:-1])
    assert answers["surely-absent-key"] == ("yes" if "surely-absent-key" in ours else "no")
    stats = subprocess.run([cli, "stats", written, "--json"], check=True, capture_output=True, text=True).stdout
    assert '"blocked"' in stats
