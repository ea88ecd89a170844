//! The `BF.*` commands: arguments in, a [`BloomChain`] read or changed, RedisBloom's replies
//! out.
//!
//! This module owns the commands' replies, their errors and what each replicates; the chain
//! (`chain.rs`), the argument rules (`args.rs`) and the saved bytes (`dump.rs`) are called from
//! here. Every command runs inside [`guarded`]: a panic would unwind into the server, which
//! aborts, so one is caught and answered as an error.
//!
//! Replies: `BF.ADD`, `BF.EXISTS` and the items of `BF.MADD`, `BF.MEXISTS` and `BF.INSERT` are
//! booleans, which the server sends as the integers 1 and 0 to RESP2 clients; `BF.INFO` is a
//! map (a flat array in RESP2). A wrong-type key is `WRONGTYPE`, except for `BF.EXISTS` and
//! `BF.MEXISTS`, which answer 0 for it as for a missing key, as RedisBloom does.

use std::ffi::{CStr, c_char, c_long};
use std::panic::{AssertUnwindSafe, catch_unwind};

use redis_module::key::{RedisKey, RedisKeyWritable};
use redis_module::{Context, RedisError, RedisResult, RedisString, RedisValue, raw};

use crate::args::{self, InfoField};
use crate::chain::{BloomChain, Params};
use crate::datatype::BLOOM_TYPE;
use crate::dump;

const NOT_FOUND: &str = "ERR not found";
const ITEM_EXISTS: &str = "ERR item exists";

/// Runs a command; a panic (a bug) becomes an error reply instead of an aborted server.
pub fn guarded(
    ctx: &Context,
    args: Vec<RedisString>,
    command: fn(&Context, &[RedisString]) -> RedisResult,
) -> RedisResult {
    catch_unwind(AssertUnwindSafe(|| command(ctx, &args))).unwrap_or(Err(RedisError::Str(
        "ERR linebloom: internal error (a bug; please report it)",
    )))
}

/// The arguments' bytes, for the argument rules.
fn bytes(args: &[RedisString]) -> Vec<&[u8]> {
    args.iter().map(RedisString::as_slice).collect()
}

/// The chain under a key opened for reading; `Err` for a key of another type.
fn read_chain(key: &RedisKey) -> Result<Option<&BloomChain>, RedisError> {
    key.get_value::<BloomChain>(&BLOOM_TYPE)
        .map_err(|_| RedisError::WrongType)
}

/// The chain under a key opened for writing; `Err` for a key of another type.
fn write_chain(key: &RedisKeyWritable) -> Result<Option<&mut BloomChain>, RedisError> {
    key.get_value::<BloomChain>(&BLOOM_TYPE)
        .map_err(|_| RedisError::WrongType)
}

fn create_error(e: String) -> RedisError {
    RedisError::String(format!("ERR could not create filter: {e}"))
}

/// Stores a new chain under an empty key and returns it.
fn create(key: &RedisKeyWritable, params: Params) -> Result<&mut BloomChain, RedisError> {
    let chain = BloomChain::new(params).map_err(create_error)?;
    key.set_value(&BLOOM_TYPE, chain)?;
    write_chain(key)?.ok_or(RedisError::Str("ERR the new filter could not be stored"))
}

fn reply_bools(ctx: &Context, answers: &[bool], error: Option<&'static str>) {
    raw::reply_with_array(
        ctx.ctx,
        (answers.len() + usize::from(error.is_some())) as c_long,
    );
    for &a in answers {
        raw::reply_with_bool(ctx.ctx, a.into());
    }
    if let Some(e) = error {
        ctx.reply_error_string(e);
    }
}

/// `BF.RESERVE key error_rate capacity [EXPANSION expansion] [NONSCALING]`
pub fn reserve(ctx: &Context, args: &[RedisString]) -> RedisResult {
    if !(4..=7).contains(&args.len()) {
        return Err(RedisError::WrongArity);
    }
    let params = args::reserve(&bytes(&args[2..])).map_err(RedisError::Str)?;
    let key = ctx.open_key_writable(&args[1]);
    if write_chain(&key)?.is_some() {
        return Err(RedisError::Str(ITEM_EXISTS));
    }
    create(&key, params)?;
    ctx.replicate_verbatim();
    Ok(RedisValue::SimpleStringStatic("OK"))
}

/// `BF.ADD key item`
pub fn add(ctx: &Context, args: &[RedisString]) -> RedisResult {
    let [_, name, item] = args else {
        return Err(RedisError::WrongArity);
    };
    let key = ctx.open_key_writable(name);
    let (chain, created) = match write_chain(&key)? {
        Some(chain) => (chain, false),
        None => (create(&key, Params::DEFAULT)?, true),
    };
    let added = chain
        .insert_hash(chain.hash(item.as_slice()))
        .map_err(|e| RedisError::Str(e.message()))?;
    if added || created {
        ctx.replicate_verbatim();
    }
    Ok(RedisValue::Bool(added))
}

/// Adds `items` to the chain under `key` (created with `params` when missing, unless
/// `nocreate`), replying one boolean per item up to the first that could not be added.
fn add_items(
    ctx: &Context,
    name: &RedisString,
    items: &[RedisString],
    params: Params,
    nocreate: bool,
) -> RedisResult {
    let key = ctx.open_key_writable(name);
    let (chain, created) = match write_chain(&key)? {
        Some(chain) => (chain, false),
        None if nocreate => return Err(RedisError::Str(NOT_FOUND)),
        None => (create(&key, params)?, true),
    };
    let hashes: Vec<u64> = items.iter().map(|i| chain.hash(i.as_slice())).collect();
    let (answers, error) = chain.insert_hashes(&hashes);
    if created || answers.contains(&true) {
        ctx.replicate_verbatim();
    }
    reply_bools(ctx, &answers, error.map(|e| e.message()));
    Ok(RedisValue::NoReply)
}

/// `BF.MADD key item [item ...]`
pub fn madd(ctx: &Context, args: &[RedisString]) -> RedisResult {
    if args.len() < 3 {
        return Err(RedisError::WrongArity);
    }
    add_items(ctx, &args[1], &args[2..], Params::DEFAULT, false)
}

/// `BF.INSERT key [CAPACITY capacity] [ERROR error] [EXPANSION expansion] [NOCREATE]
/// [NONSCALING] ITEMS item [item ...]`
pub fn insert(ctx: &Context, args: &[RedisString]) -> RedisResult {
    if args.len() < 4 {
        return Err(RedisError::WrongArity);
    }
    let Some(insert) = args::insert(&bytes(&args[2..])).map_err(RedisError::Str)? else {
        return Err(RedisError::WrongArity);
    };
    let items = &args[2 + insert.items_at..];
    add_items(ctx, &args[1], items, insert.params, insert.nocreate)
}

/// `BF.EXISTS key item`
pub fn exists(ctx: &Context, args: &[RedisString]) -> RedisResult {
    let [_, name, item] = args else {
        return Err(RedisError::WrongArity);
    };
    let key = ctx.open_key(name);
    let found = match read_chain(&key) {
        Ok(Some(chain)) => chain.contains_hash(chain.hash(item.as_slice())),
        Ok(None) | Err(_) => false,
    };
    Ok(RedisValue::Bool(found))
}

/// `BF.MEXISTS key item [item ...]`: the items are hashed first, then looked up in every
/// layer with the batched, prefetching lookup.
pub fn mexists(ctx: &Context, args: &[RedisString]) -> RedisResult {
    if args.len() < 3 {
        return Err(RedisError::WrongArity);
    }
    let items = &args[2..];
    let key = ctx.open_key(&args[1]);
    let mut found = vec![false; items.len()];
    if let Ok(Some(chain)) = read_chain(&key) {
        let hashes: Vec<u64> = items.iter().map(|i| chain.hash(i.as_slice())).collect();
        chain.contains_hashes(&hashes, &mut found);
    }
    reply_bools(ctx, &found, None);
    Ok(RedisValue::NoReply)
}

/// `BF.CARD key`
pub fn card(ctx: &Context, args: &[RedisString]) -> RedisResult {
    let [_, name] = args else {
        return Err(RedisError::WrongArity);
    };
    let key = ctx.open_key(name);
    let items = read_chain(&key)?.map_or(0, BloomChain::items);
    Ok(RedisValue::Integer(items.min(i64::MAX as u64) as i64))
}

fn info_value(chain: &BloomChain, field: InfoField) -> Option<i64> {
    let clamp = |v: u64| v.min(i64::MAX as u64) as i64;
    match field {
        InfoField::Capacity => Some(clamp(chain.capacity())),
        InfoField::Size => Some(clamp(chain.memory_bytes() as u64)),
        InfoField::Filters => Some(chain.layers().len() as i64),
        InfoField::Items => Some(clamp(chain.items())),
        InfoField::Expansion => {
            let expansion = chain.params().expansion;
            (expansion != 0).then(|| clamp(expansion))
        }
    }
}

fn reply_optional_integer(ctx: &Context, value: Option<i64>) {
    match value {
        Some(v) => raw::reply_with_long_long(ctx.ctx, v),
        None => raw::reply_with_null(ctx.ctx),
    };
}

/// `BF.INFO key [CAPACITY | SIZE | FILTERS | ITEMS | EXPANSION]`: all five as a map (a flat
/// array in RESP2), or one as an array of one; a non-scaling filter's expansion is null.
pub fn info(ctx: &Context, args: &[RedisString]) -> RedisResult {
    if !(2..=3).contains(&args.len()) {
        return Err(RedisError::WrongArity);
    }
    let key = ctx.open_key(&args[1]);
    let chain = read_chain(&key)?.ok_or(RedisError::Str(NOT_FOUND))?;
    if let Some(field) = args.get(2) {
        let field = args::info_field(field.as_slice()).map_err(RedisError::Str)?;
        raw::reply_with_array(ctx.ctx, 1);
        reply_optional_integer(ctx, info_value(chain, field));
        return Ok(RedisValue::NoReply);
    }
    const FIELDS: [(&CStr, InfoField); 5] = [
        (c"Capacity", InfoField::Capacity),
        (c"Size", InfoField::Size),
        (c"Number of filters", InfoField::Filters),
        (c"Number of items inserted", InfoField::Items),
        (c"Expansion rate", InfoField::Expansion),
    ];
    raw::reply_with_map(ctx.ctx, FIELDS.len() as c_long);
    for (name, field) in FIELDS {
        raw::reply_with_simple_string(ctx.ctx, name.as_ptr());
        reply_optional_integer(ctx, info_value(chain, field));
    }
    Ok(RedisValue::NoReply)
}

fn reply_chunk(ctx: &Context, iter: u64, data: &[u8]) {
    raw::reply_with_array(ctx.ctx, 2);
    raw::reply_with_long_long(ctx.ctx, iter.min(i64::MAX as u64) as i64);
    raw::reply_with_string_buffer(ctx.ctx, data.as_ptr().cast::<c_char>(), data.len());
}

/// `BF.SCANDUMP key iterator`: `[1, header]` for iterator 0, then `[next, chunk]` pairs, then
/// `[0, ""]` (see `dump.rs`).
pub fn scandump(ctx: &Context, args: &[RedisString]) -> RedisResult {
    let [_, name, iter] = args else {
        return Err(RedisError::WrongArity);
    };
    let iter = args::iterator(iter.as_slice()).map_err(RedisError::Str)?;
    let key = ctx.open_key(name);
    let chain = read_chain(&key)?.ok_or(RedisError::Str(NOT_FOUND))?;
    if iter == 0 {
        reply_chunk(ctx, 1, &dump::encode_header(chain));
    } else {
        match dump::chunk(chain, iter) {
            Some((next, data)) if next <= i64::MAX as u64 => reply_chunk(ctx, next, data),
            _ => reply_chunk(ctx, 0, b""),
        }
    }
    Ok(RedisValue::NoReply)
}

/// `BF.LOADCHUNK key iterator data`: iterator 1 carries the header and replaces whatever filter
/// the key holds; every other writes its chunk into the filter the header created.
pub fn loadchunk(ctx: &Context, args: &[RedisString]) -> RedisResult {
    let [_, name, iter, data] = args else {
        return Err(RedisError::WrongArity);
    };
    let iter = args::iterator(iter.as_slice()).map_err(RedisError::Str)?;
    let key = ctx.open_key_writable(name);
    let existing = write_chain(&key)?;
    if iter == 1 {
        let chain = dump::decode_header(data.as_slice()).map_err(RedisError::String)?;
        key.set_value(&BLOOM_TYPE, chain)?;
    } else {
        let chain = existing.ok_or(RedisError::Str(NOT_FOUND))?;
        dump::load_chunk(chain, iter, data.as_slice()).map_err(RedisError::String)?;
    }
    ctx.replicate_verbatim();
    Ok(RedisValue::SimpleStringStatic("OK"))
}
