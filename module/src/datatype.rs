//! The `linebloom` data type: how the server saves, loads, rewrites, measures, digests, copies
//! and frees a [`BloomChain`].
//!
//! This module owns the type's callbacks and its RDB encoding; the bytes themselves come from
//! `dump.rs`. Every callback catches panics (one would abort the server) and treats a failure
//! as the server expects: a null value from `rdb_load` and `copy`, nothing from the others.
//!
//! # RDB encoding, version 1 ([`ENCODING_VERSION`])
//! One string: the chain's header (`dump.rs`); then each layer's bits, oldest first, as
//! strings of at most `dump::CHUNK_BYTES` bytes (so loading never holds a second copy of a
//! whole large layer). The reader takes whatever string lengths it finds until a layer is full,
//! so a later writer may cut them differently. A later layout gets a new version; this reader
//! refuses versions it does not know, and the later one keeps reading version 1.
//!
//! AOF rewrite emits the key as `BF.LOADCHUNK` commands: the header with iterator 1, then the
//! chunks `BF.SCANDUMP` would return.

use std::ffi::{c_char, c_int, c_longlong, c_void};
use std::panic::{AssertUnwindSafe, catch_unwind};

use linebloom::BlockedBloom;
use redis_module::native_types::RedisType;
use redis_module::raw;

use crate::chain::{BloomChain, Layer};
use crate::dump;

/// The RDB encoding version this build writes (and the only one it reads).
pub const ENCODING_VERSION: i32 = 1;

/// The data type: `TYPE key` answers `linebloom`.
pub static BLOOM_TYPE: RedisType = RedisType::new(
    "linebloom",
    ENCODING_VERSION,
    raw::RedisModuleTypeMethods {
        version: raw::REDISMODULE_TYPE_METHOD_VERSION as u64,
        rdb_load: Some(rdb_load),
        rdb_save: Some(rdb_save),
        aof_rewrite: Some(aof_rewrite),
        mem_usage: Some(mem_usage),
        digest: Some(digest),
        free: Some(free),
        aux_load: None,
        aux_save: None,
        aux_save_triggers: 0,
        free_effort: None,
        unlink: None,
        copy: Some(copy),
        defrag: None,
        mem_usage2: None,
        free_effort2: None,
        unlink2: None,
        copy2: None,
        aux_save2: None,
    },
);

/// Writes a warning into the server's log through an RDB handle.
fn log_io_warning(io: *mut raw::RedisModuleIO, message: &str) {
    let text: Vec<u8> = message
        .bytes()
        .filter(|&b| b != 0)
        .chain(std::iter::once(0))
        .collect();
    // SAFETY: the server's logging call with a printf format of one `%s` and a NUL-terminated
    // string that outlives the call; `io` is the live handle the server passed in.
    unsafe {
        if let Some(log) = raw::RedisModule_LogIOError {
            log(
                io,
                c"warning".as_ptr(),
                c"%s".as_ptr(),
                text.as_ptr().cast::<c_char>(),
            );
        }
    }
}

fn load_chain(rdb: *mut raw::RedisModuleIO, encver: c_int) -> Result<BloomChain, String> {
    if encver != ENCODING_VERSION {
        return Err(format!(
            "linebloom: RDB encoding version {encver}; this module reads {ENCODING_VERSION}"
        ));
    }
    let short = |_| "linebloom: short read in RDB".to_string();
    let header = raw::load_string_buffer(rdb).map_err(short)?;
    let mut chain = dump::decode_header(header.as_ref())?;
    for (i, layer) in chain.layers_mut().iter_mut().enumerate() {
        let bytes: &mut [u8] = bytemuck::cast_slice_mut(layer.filter.lines_mut());
        let mut filled = 0;
        while filled < bytes.len() {
            let piece = raw::load_string_buffer(rdb).map_err(short)?;
            let piece = piece.as_ref();
            if piece.is_empty() || piece.len() > bytes.len() - filled {
                return Err(format!("linebloom: layer {i}'s bits have the wrong length"));
            }
            bytes[filled..filled + piece.len()].copy_from_slice(piece);
            filled += piece.len();
        }
    }
    Ok(chain)
}

unsafe extern "C" fn rdb_load(rdb: *mut raw::RedisModuleIO, encver: c_int) -> *mut c_void {
    match catch_unwind(|| load_chain(rdb, encver)) {
        Ok(Ok(chain)) => Box::into_raw(Box::new(chain)).cast(),
        Ok(Err(message)) => {
            log_io_warning(rdb, &message);
            std::ptr::null_mut()
        }
        Err(_) => std::ptr::null_mut(),
    }
}

/// The chain behind a value pointer the server passes back.
///
/// # Safety
/// `value` is a pointer `rdb_load`, `copy` or `set_value` made from a `Box<BloomChain>`, not
/// yet freed, and nothing writes the chain while the reference lives (the server runs these
/// callbacks on its main thread, or in a forked child, never beside a command).
unsafe fn chain<'a>(value: *const c_void) -> &'a BloomChain {
    // SAFETY: as the function's contract says.
    unsafe { &*value.cast::<BloomChain>() }
}

unsafe extern "C" fn rdb_save(rdb: *mut raw::RedisModuleIO, value: *mut c_void) {
    // SAFETY: the server passes a value of this type.
    let chain = unsafe { chain(value) };
    let _ = catch_unwind(AssertUnwindSafe(|| {
        raw::save_slice(rdb, &dump::encode_header(chain));
        for layer in chain.layers() {
            for piece in dump::layer_bytes(layer).chunks(dump::CHUNK_BYTES) {
                raw::save_slice(rdb, piece);
            }
        }
    }));
}

/// Emits `BF.LOADCHUNK key iter data` into the rewritten AOF.
fn emit_loadchunk(
    aof: *mut raw::RedisModuleIO,
    key: *mut raw::RedisModuleString,
    iter: u64,
    data: &[u8],
) {
    // SAFETY: `EmitAOF` with the format `slb`: a module string (the key the server passed),
    // a long long, and a buffer given as pointer and length, which outlives the call.
    unsafe {
        if let Some(emit) = raw::RedisModule_EmitAOF {
            emit(
                aof,
                c"BF.LOADCHUNK".as_ptr(),
                c"slb".as_ptr(),
                key,
                iter as c_longlong,
                data.as_ptr().cast::<c_char>(),
                data.len(),
            );
        }
    }
}

unsafe extern "C" fn aof_rewrite(
    aof: *mut raw::RedisModuleIO,
    key: *mut raw::RedisModuleString,
    value: *mut c_void,
) {
    // SAFETY: the server passes a value of this type.
    let chain = unsafe { chain(value) };
    let _ = catch_unwind(AssertUnwindSafe(|| {
        emit_loadchunk(aof, key, 1, &dump::encode_header(chain));
        dump::for_each_chunk(chain, |iter, data| emit_loadchunk(aof, key, iter, data));
    }));
}

unsafe extern "C" fn mem_usage(value: *const c_void) -> usize {
    // SAFETY: the server passes a value of this type.
    unsafe { chain(value) }.memory_bytes()
}

unsafe extern "C" fn digest(md: *mut raw::RedisModuleDigest, value: *mut c_void) {
    // SAFETY: the server passes a value of this type.
    let chain = unsafe { chain(value) };
    let _ = catch_unwind(AssertUnwindSafe(|| {
        // SAFETY: the digest calls with the live handle the server passed and buffers that
        // outlive each call.
        unsafe {
            let (Some(add), Some(end)) = (
                raw::RedisModule_DigestAddStringBuffer,
                raw::RedisModule_DigestEndSequence,
            ) else {
                return;
            };
            let header = dump::encode_header(chain);
            add(md, header.as_ptr().cast(), header.len());
            for layer in chain.layers() {
                let bytes = dump::layer_bytes(layer);
                add(md, bytes.as_ptr().cast(), bytes.len());
            }
            end(md);
        }
    }));
}

unsafe extern "C" fn free(value: *mut c_void) {
    // SAFETY: the server frees each value once, and values are `Box<BloomChain>`s.
    drop(unsafe { Box::from_raw(value.cast::<BloomChain>()) });
}

/// A copy of the chain, or `None` when its memory cannot be had.
fn try_clone(chain: &BloomChain) -> Option<BloomChain> {
    let mut layers = Vec::with_capacity(chain.layers().len());
    for layer in chain.layers() {
        let f = &layer.filter;
        let mut filter =
            BlockedBloom::with_lines_placed(f.num_lines(), f.k(), f.placement(), f.seed()).ok()?;
        filter.lines_mut().copy_from_slice(f.lines());
        layers.push(Layer {
            filter,
            items: layer.items,
        });
    }
    Some(BloomChain::from_layers(
        chain.params(),
        chain.seed(),
        layers,
    ))
}

unsafe extern "C" fn copy(
    _from: *mut raw::RedisModuleString,
    _to: *mut raw::RedisModuleString,
    value: *const c_void,
) -> *mut c_void {
    // SAFETY: the server passes a value of this type.
    let chain = unsafe { chain(value) };
    match catch_unwind(AssertUnwindSafe(|| try_clone(chain))) {
        Ok(Some(copy)) => Box::into_raw(Box::new(copy)).cast(),
        _ => std::ptr::null_mut(),
    }
}
