"""Writes the Parquet fixtures of cli/tests/parquet.rs (run from this directory).

Pinned versions (python 3.11):  pip install pyarrow==26.0.1 duckdb==2.0.0

The files are committed, so the tests need no Python. Values are deterministic:
  name  (string / VARCHAR): "user-<i>" for i in 0..N
  id    (int64 / BIGINT):   i * 7919 - 1_000_000
  small (int32):            i % 1000 (pyarrow only, no filter: a column without one)
with N = 20_000 rows in row groups of 5_000.
"""
import duckdb
import pyarrow as pa
import pyarrow.parquet as pq

N = 20_000
ROW_GROUP = 5_000

names = [f"user-{i}" for i in range(N)]
ids = [i * 7919 - 1_000_000 for i in range(N)]
small = [i % 1000 for i in range(N)]

table = pa.table(
    {
        "name": pa.array(names, pa.string()),
        "id": pa.array(ids, pa.int64()),
        "small": pa.array(small, pa.int32()),
    }
)
pq.write_table(
    table,
    "pyarrow.parquet",
    row_group_size=ROW_GROUP,
    compression="snappy",
    bloom_filter_options={
        "name": {"ndv": ROW_GROUP, "fpp": 0.01},
        "id": {"ndv": ROW_GROUP, "fpp": 0.05},
    },
)

con = duckdb.connect()
con.register("t", table.select(["name", "id"]))
con.execute(
    f"""COPY (SELECT * FROM t) TO 'duckdb.parquet'
        (FORMAT parquet, ROW_GROUP_SIZE {ROW_GROUP}, DICTIONARY_SIZE_LIMIT 1000000,
         BLOOM_FILTER_FALSE_POSITIVE_RATIO 0.01)"""
)

for path in ["pyarrow.parquet", "duckdb.parquet"]:
    md = pq.ParquetFile(path).metadata
    print(path, md.num_row_groups, "row groups")
    for rg in range(md.num_row_groups):
        for c in range(md.num_columns):
            col = md.row_group(rg).column(c)
            print(" ", rg, col.path_in_schema, col.bloom_filter_offset, col.bloom_filter_length)
