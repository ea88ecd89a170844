"""A Bloom semi-join on Dask: build one filter over a partitioned data set, broadcast it, and
use it to drop the rows of another partitioned data set whose key cannot match.

1. Every partition of the build side builds its own filter, all with the same shape (sized for
   the whole side's key count) and seed, so any two of them OR together.
2. The filters are ORed pairwise up a tree (``Bag.reduction(..., split_every=2)``): no task
   merges more than two filters, and the result is bit for bit the filter one process would
   build from all the keys (OR is commutative and associative).
3. The merged filter goes to every worker once (``Client.scatter(..., broadcast=True)``); it
   pickles as its serialized bytes.
4. Every partition of the probe side keeps the rows whose key the filter may hold (one batched
   ``contains_many`` per partition, the GIL released), so only those rows travel to the exact
   join. No row with a matching key is dropped; a few without one (the filter's FPR) pass.

Spark does the same with ``rdd.mapPartitions(build).reduce(lambda a, b: a | b)`` (or
``treeReduce``), ``sc.broadcast(merged)`` and a ``mapPartitions`` that filters with
``broadcast.value.contains_many``; ``docs/python.md`` shows it.

Run: ``python python/examples/dask_semijoin.py`` (with the wheel, dask and distributed installed).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from functools import partial

import dask.bag as db
import numpy as np
from distributed import Client, LocalCluster

from linebloom import BlockedBloom


def partition_filter(keys: Iterable[str], items: int, fpr: float) -> BlockedBloom:
    """The filter of one partition's keys, shaped for ``items`` keys in all."""
    bloom = BlockedBloom(items, fpr)
    bloom.add_many(list(keys))
    return bloom


def merge_filters(filters: Iterable[BlockedBloom]) -> BlockedBloom:
    """The OR of some partitions' filters (one node of the reduction tree)."""
    filters = iter(filters)
    merged = next(filters).copy()
    for other in filters:
        merged |= other
    return merged


def build_filter(keys: db.Bag, items: int, fpr: float) -> BlockedBloom:
    """One filter over every partition of ``keys``, merged by a binary tree of ORs."""
    tree = keys.reduction(partial(partition_filter, items=items, fpr=fpr), merge_filters, split_every=2)
    return tree.compute()


def keep_matching(rows: list[tuple[str, int]], bloom: BlockedBloom) -> list[tuple[str, int]]:
    """The rows of one probe partition whose key the filter may hold."""
    if not rows:
        return []
    hit = bloom.contains_many([key for key, _ in rows])
    return [row for row, keep in zip(rows, hit) if keep]


def semi_join(client: Client, rows: db.Bag, bloom: BlockedBloom) -> list[list[tuple[str, int]]]:
    """Broadcasts ``bloom`` to every worker and filters each partition of ``rows`` with it."""
    shared = client.scatter(bloom, broadcast=True)
    partitions = client.compute(rows.to_delayed())
    kept = client.map(keep_matching, partitions, bloom=shared)
    return client.gather(kept)


def sample_data(build_keys: int, probe_rows: int, seed: int = 7) -> tuple[list[str], list[tuple[str, int]]]:
    """A build side of distinct keys and a probe side where about one row in four matches."""
    rng = np.random.default_rng(seed)
    keys = [f"customer-{i}" for i in range(build_keys)]
    ids = rng.integers(0, 4 * build_keys, size=probe_rows)
    rows = [(f"customer-{i}", int(v)) for v, i in enumerate(ids)]
    return keys, rows


def main() -> None:
    items, fpr, partitions = 200_000, 0.01, 8
    keys, rows = sample_data(items, 400_000)
    with (
        LocalCluster(n_workers=2, processes=True, threads_per_worker=1, host="127.0.0.1", dashboard_address=None) as cluster,
        Client(cluster) as client,
    ):
        bloom = build_filter(db.from_sequence(keys, npartitions=partitions), items, fpr)
        kept = semi_join(client, db.from_sequence(rows, npartitions=partitions), bloom)
    kept_rows = [row for part in kept for row in part]
    wanted = set(keys)
    matching = sum(key in wanted for key, _ in rows)
    print(f"filter: {bloom.size_bytes} bytes, k={bloom.k}, built over {partitions} partitions")
    print(f"probe rows: {len(rows)}, kept: {len(kept_rows)}, matching: {matching}")
    print(f"dropped: {len(rows) - len(kept_rows)} rows that no key matches")


if __name__ == "__main__":
    main()
