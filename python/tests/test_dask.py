"""The Dask example on a real cluster: two worker processes, one filter per partition, a tree of
ORs, a broadcast, and the semi-join it drives (`python/examples/dask_semijoin.py`)."""

import importlib.util
import os
import sys
from pathlib import Path

import pytest

from linebloom import BlockedBloom

pytest.importorskip("distributed")
import dask.bag as db  # noqa: E402
from distributed import Client, LocalCluster  # noqa: E402


EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "dask_semijoin.py"


@pytest.fixture(scope="module")
def example():
    spec = importlib.util.spec_from_file_location("dask_semijoin", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def client():
    with (
        LocalCluster(
            n_workers=2,
            processes=True,
            threads_per_worker=1,
            host="127.0.0.1",
            dashboard_address=None,
        ) as cluster,
        Client(cluster) as client,
    ):
        # The workers import the example's functions by name, as they would a job's module.
        client.upload_file(str(EXAMPLE))
        yield client


def test_semijoin_on_two_worker_processes(example, client):
    pids = client.run(os.getpid)
    assert len(pids) == 2 and len(set(pids.values())) == 2 and os.getpid() not in pids.values()

    items, fpr, partitions = 20_000, 0.01, 6
    keys, rows = example.sample_data(items, 40_000)
    build_side = db.from_sequence(keys, npartitions=partitions)
    assert build_side.npartitions >= 4

    merged = example.build_filter(build_side, items, fpr)
    single = BlockedBloom(items, fpr)
    single.add_many(keys)
    assert merged.to_bytes() == single.to_bytes()

    # The broadcast reaches every worker.
    shared = client.scatter(merged, broadcast=True)
    assert len(client.who_has(shared)[shared.key]) == 2

    kept = example.semi_join(client, db.from_sequence(rows, npartitions=8), merged)
    assert len(kept) == 8
    kept_rows = [row for part in kept for row in part]
    wanted = set(keys)
    matching = [row for row in rows if row[0] in wanted]
    # No matching row is lost, and the filter drops most of the others.
    assert set(matching) <= set(kept_rows)
    assert len(kept_rows) - len(matching) < 0.03 * (len(rows) - len(matching))
