//! # linebloom-module
//!
//! RedisBloom's Bloom commands as a Redis / Valkey module on linebloom's blocked filter: one
//! cache line per item on the server instead of k scattered bits, and the same commands and
//! replies, so clients that speak `BF.*` (redis-py's `bf()`, Jedis, go-redis, node-redis) work
//! unchanged.
//!
//! ```text
//! cargo build --release -p linebloom-module
//! redis-server --loadmodule target/release/liblinebloom_module.so
//! ```
//!
//! This repository builds for its own CPU (`.cargo/config.toml`: `-C target-cpu=native`); for
//! a server on another machine, build with `RUSTFLAGS= cargo build --release -p
//! linebloom-module`: the engine still picks its AVX2 / AVX-512 path at run time.
//!
//! Commands: `BF.RESERVE`, `BF.ADD`, `BF.MADD`, `BF.EXISTS`, `BF.MEXISTS`, `BF.INSERT`,
//! `BF.INFO`, `BF.CARD`, `BF.SCANDUMP`, `BF.LOADCHUNK` (`commands.rs`). A key holds a chain of
//! blocked filters (`chain.rs`) with RedisBloom's parameters; the data type (`datatype.rs`)
//! saves it to RDB, rewrites it into the AOF, and supports `MEMORY USAGE`, `DEBUG DIGEST`,
//! `COPY`, `RENAME` and `DEL` like any key; writes replicate verbatim. Saved bytes: `dump.rs`.
//!
//! Needs Redis 7.0 or later (or Valkey): the module refuses to load where the server lacks the
//! calls it replies with. Memory comes from the server's allocator (`alloc.rs`), so filters
//! count in `used_memory` and `maxmemory`. Little-endian machines only: the saved bits are the
//! in-memory lines.

#[cfg(target_endian = "big")]
compile_error!("linebloom-module saves its lines as they lie in memory: little-endian only");

// Unit tests run on the system allocator; the server tests load the module, which uses it.
#[cfg_attr(test, allow(dead_code))]
mod alloc;
mod args;
mod chain;
mod commands;
mod datatype;
mod dump;

use redis_module::{Context, RedisString, Status, raw, redis_module};

use crate::commands::guarded;
use crate::datatype::BLOOM_TYPE;

/// The module's allocator: the server's heap in the module, the system's in unit tests (no
/// server there to hand out its API).
#[cfg(not(test))]
type ModuleAllocator = alloc::RedisHeap;
#[cfg(test)]
type ModuleAllocator = std::alloc::System;
#[cfg(not(test))]
const MODULE_ALLOCATOR: ModuleAllocator = alloc::RedisHeap;
#[cfg(test)]
const MODULE_ALLOCATOR: ModuleAllocator = std::alloc::System;

fn init(ctx: &Context, _args: &[RedisString]) -> Status {
    // SAFETY: the server has filled in its API before calling `init`; these are reads.
    let complete = unsafe {
        let (bool_reply, map_reply) = (
            raw::RedisModule_ReplyWithBool,
            raw::RedisModule_ReplyWithMap,
        );
        bool_reply.is_some() && map_reply.is_some()
    };
    if !complete {
        ctx.log_warning("linebloom: this server is older than Redis 7.0; the module needs 7.0+");
        return Status::Err;
    }
    // Filters of 8 MiB and more would otherwise get their own huge-page mappings, which the
    // server's memory accounting does not see (and which Redis's `disable-thp` turns back
    // into small pages anyway); on the server's heap every filter counts in `maxmemory`.
    linebloom::blocked::set_huge_pages(false);
    if let Some(bytes) = machine_memory() {
        chain::set_max_filter_bytes(bytes);
    }
    ctx.set_module_options(raw::ModuleOptions::HANDLE_IO_ERRORS);
    Status::Ok
}

/// The memory this server can have: the machine's (`MemTotal`), or its cgroup's limit where
/// that is lower. `None` where neither can be read.
fn machine_memory() -> Option<u64> {
    let total = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|info| {
            let line = info.lines().find(|l| l.starts_with("MemTotal:"))?;
            let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
            kib.checked_mul(1024)
        });
    let cgroup = std::fs::read_to_string("/sys/fs/cgroup/memory.max")
        .ok()
        .and_then(|limit| limit.trim().parse::<u64>().ok());
    match (total, cgroup) {
        (Some(t), Some(c)) => Some(t.min(c)),
        (t, c) => t.or(c),
    }
}

redis_module! {
    name: "linebloom",
    version: 1,
    allocator: (ModuleAllocator, MODULE_ALLOCATOR),
    data_types: [BLOOM_TYPE],
    init: init,
    commands: [
        ["BF.RESERVE", |c: &Context, a| guarded(c, a, commands::reserve), "write deny-oom", 1, 1, 1, ""],
        ["BF.ADD", |c: &Context, a| guarded(c, a, commands::add), "write deny-oom", 1, 1, 1, ""],
        ["BF.MADD", |c: &Context, a| guarded(c, a, commands::madd), "write deny-oom", 1, 1, 1, ""],
        ["BF.INSERT", |c: &Context, a| guarded(c, a, commands::insert), "write deny-oom", 1, 1, 1, ""],
        ["BF.EXISTS", |c: &Context, a| guarded(c, a, commands::exists), "readonly fast", 1, 1, 1, ""],
        ["BF.MEXISTS", |c: &Context, a| guarded(c, a, commands::mexists), "readonly fast", 1, 1, 1, ""],
        ["BF.CARD", |c: &Context, a| guarded(c, a, commands::card), "readonly fast", 1, 1, 1, ""],
        ["BF.INFO", |c: &Context, a| guarded(c, a, commands::info), "readonly fast", 1, 1, 1, ""],
        ["BF.SCANDUMP", |c: &Context, a| guarded(c, a, commands::scandump), "readonly", 1, 1, 1, ""],
        ["BF.LOADCHUNK", |c: &Context, a| guarded(c, a, commands::loadchunk), "write deny-oom", 1, 1, 1, ""],
    ],
}
