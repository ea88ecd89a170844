"""Files cross the language boundary: what Rust writes, Python reads, and the other way round.

- `tests/data/blocked_v1.lbf` and `blocked_v1_scheme3.lbf` are the Rust crate's golden files
  (pinned by `tests/format.rs`), one per placement: Python builds the same filters from the same
  keys and must write the same bytes.
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


@pytest.mark.parametrize(
    "name, placement", [("blocked_v1.lbf", "salted"), ("blocked_v1_scheme3.lbf", "shifted")]
)
def test_rust_golden_file(repo, name, placement):
    golden = (repo / "tests/data" / name).read_bytes()
    # `BlockedBloom::with_lines_placed(4, 7, placement, 42)` with "key-0".."key-39" inserted.
    f = BlockedBloom.with_bits_per_key(40, 4 * 512 / 40, k=7, seed=42, placement=placement)
    f.add_many([f"key-{i}" for i in range(40)])
    assert f.placement == placement
    assert f.to_bytes() == golden
    g = BlockedBloom.from_bytes(golden)
    assert g == f and g.placement == placement and all(f"key-{i}" in g for i in range(40))


def test_an_unknown_placement_is_a_value_error():
    with pytest.raises(ValueError, match="placement"):
        BlockedBloom(100, placement="scattered")  # type: ignore[arg-type]


def test_file_written_by_the_cli(data):
    keys = read_keys(data / "cli_keys.txt")
    assert b"" in keys and "ünïcode".encode() in keys
    from_cli = BlockedBloom.from_bytes((data / "cli_blocked.lbf").read_bytes())
    assert from_cli.contains_many(keys).all()
    assert all(k.decode() in from_cli for k in keys)
    # The CLI sizes the filter for the keys it read at the asked FPR, as Python does here; the
    # bits agree (the file also records the CLI's item count, so only the filters compare).
    # It predates the shifted placement, so its bits are salted.
    assert from_cli.placement == "salted"
    ours = BlockedBloom(len(keys), 0.01, placement="salted")
    ours.add_many(keys)
    assert ours == from_cli


def cli_binary(repo: Path) -> Path | None:
    if os.environ.get("LINEBLOOM_CLI"):
        return Path(os.environ["LINEBLOOM_CLI"])
    # The newest build: a release binary left from an older checkout must not stand in for
    # the one `cargo test` just built.
    built = [repo / "target" / p / "linebloom" for p in ["release", "debug"]]
    built = [p for p in built if p.is_file()]
    return max(built, key=lambda p: p.stat().st_mtime, default=None)


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
