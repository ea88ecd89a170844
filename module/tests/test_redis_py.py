"""Every BF command through redis-py's own `bf()` calls, unchanged, against a real
redis-server with the module loaded (RESP2 and RESP3).

Run by `.ci/run` from the venv it creates (`.venv`, packages pinned in
`module/tests/requirements.txt`), after `cargo test` built the module. The module comes from
`LINEBLOOM_MODULE`, else from `target/debug/deps/liblinebloom_module.so`. Each test module run
starts its own server on a free loopback port and stops it by its PID.
"""

import os
import pathlib
import socket
import subprocess
import tempfile
import time

import pytest
import redis
from redis.exceptions import ResponseError

ROOT = pathlib.Path(__file__).resolve().parents[2]


def module_path():
    if "LINEBLOOM_MODULE" in os.environ:
        return pathlib.Path(os.environ["LINEBLOOM_MODULE"])
    for candidate in ("target/debug/deps", "target/debug", "target/release"):
        path = ROOT / candidate / "liblinebloom_module.so"
        if path.exists():
            return path
    pytest.fail("liblinebloom_module.so not built: run `cargo test -p linebloom-module` first")


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture(scope="module")
def server():
    workdir = tempfile.TemporaryDirectory(prefix="linebloom-py-")
    port = free_port()
    process = subprocess.Popen(
        ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "",
         "--appendonly", "no", "--dir", workdir.name, "--logfile", "server.log",
         "--loadmodule", str(module_path())],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    try:
        client = redis.Redis(port=port)
        for _ in range(500):
            if process.poll() is not None:
                pytest.fail(f"redis-server exited: {workdir.name}/server.log")
            try:
                client.ping()
                break
            except redis.ConnectionError:
                time.sleep(0.02)
        yield port
    finally:
        process.kill()
        process.wait(timeout=10)
        workdir.cleanup()


@pytest.fixture()
def r(server):
    client = redis.Redis(port=server)
    client.flushall()
    yield client
    client.close()


@pytest.fixture()
def r3(server):
    client = redis.Redis(port=server, protocol=3)
    client.flushall()
    yield client
    client.close()


def test_create_add_exists_and_card(r):
    bf = r.bf()
    assert bf.create("bf", 0.01, 1000)
    assert bf.add("bf", "apple") == 1
    assert bf.add("bf", "apple") == 0
    assert bf.madd("bf", "pear", "apple", b"\x00\xff") == [1, 0, 1]
    assert bf.exists("bf", "pear") == 1
    assert bf.exists("bf", "kiwi") == 0
    assert bf.mexists("bf", "apple", "kiwi", b"\x00\xff") == [1, 0, 1]
    assert bf.card("bf") == 3
    assert bf.card("missing") == 0
    assert bf.exists("missing", "x") == 0


def test_info(r):
    bf = r.bf()
    bf.create("bf", 0.001, 500, expansion=4)
    bf.madd("bf", *range(1200))
    info = bf.info("bf")
    assert info.capacity == 500 + 2000
    assert info.filterNum == 2
    assert info.insertedNum == bf.card("bf") > 1190
    assert info.expansionRate == 4
    assert info.size > 0
    bf.create("fixed", 0.01, 10, noScale=True)
    assert bf.info("fixed").expansionRate is None
    with pytest.raises(ResponseError, match="not found"):
        bf.info("missing")


def test_insert_options(r):
    bf = r.bf()
    assert bf.insert("bf", ["a", "b", "a"], capacity=10, error=0.001, expansion=3) == [1, 1, 0]
    assert bf.info("bf").capacity == 10
    assert bf.info("bf").expansionRate == 3
    with pytest.raises(ResponseError, match="^not found$"):
        bf.insert("missing", ["a"], noCreate=True)
    assert bf.insert("fixed", ["a", "b", "c"], capacity=2, noScale=True)[:2] == [1, 1]
    assert bf.card("fixed") == 2
    with pytest.raises(ResponseError, match="non scaling filter is full"):
        bf.add("fixed", "z")


def test_errors(r):
    bf = r.bf()
    bf.create("bf", 0.01, 100)
    with pytest.raises(ResponseError, match="^item exists$"):
        bf.create("bf", 0.01, 100)
    with pytest.raises(ResponseError, match=r"^\(0 < error rate range < 1\)$"):
        bf.create("other", 1.5, 100)
    with pytest.raises(ResponseError, match=r"^\(capacity should be larger than 0\)$"):
        bf.create("other", 0.01, 0)
    with pytest.raises(ResponseError, match="^bad expansion$"):
        bf.create("other", 0.01, 100, expansion=-2)
    r.set("text", "x")
    with pytest.raises(ResponseError, match="WRONGTYPE"):
        bf.add("text", "x")
    with pytest.raises(ResponseError, match="WRONGTYPE"):
        bf.info("text")
    assert bf.exists("text", "x") == 0
    assert r.ping()


def test_scandump_and_loadchunk(r):
    bf = r.bf()
    bf.create("bf", 0.01, 200)
    items = [f"item:{i}" for i in range(1000)]
    bf.madd("bf", *items)
    chunks = []
    it = 0
    while True:
        it, data = bf.scandump("bf", it)
        if it == 0:
            break
        chunks.append((it, data))
    assert len(chunks) == 1 + bf.info("bf").filterNum
    for it, data in chunks:
        bf.loadchunk("copy", it, data)
    assert all(bf.mexists("copy", *items))
    assert bf.card("copy") == bf.card("bf")
    assert bf.info("copy").capacity == bf.info("bf").capacity
    assert [bf.scandump("copy", it) for it, _ in chunks] == [
        bf.scandump("bf", it) for it, _ in chunks]


def test_resp3_booleans_and_map(r3):
    bf = r3.bf()
    bf.create("bf", 0.01, 100)
    assert bf.add("bf", "a") in (True, 1)
    assert r3.execute_command("BF.ADD", "bf", "a") is False
    assert r3.execute_command("BF.EXISTS", "bf", "a") is True
    assert r3.execute_command("BF.MEXISTS", "bf", "a", "b") == [True, False]
    # A map in RESP3, which redis-py hands over as a dict.
    info = bf.info("bf")
    assert info[b"Capacity"] == 100
    assert info[b"Number of items inserted"] == 1
    assert info[b"Expansion rate"] == 2
