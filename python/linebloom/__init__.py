"""linebloom: a register-blocked Bloom filter (one 64-byte line per key, SIMD masks).

The filter is the Rust crate's ``BlockedBloom``; keys hash as they do from Rust, and
``to_bytes`` / ``from_bytes`` use the crate's serialized format, so a filter saved on one side
loads on the other. See ``docs/python.md`` for the key mapping, batching and the GIL.
"""

from ._linebloom import DEFAULT_SEED, BlockedBloom, __version__, simd_path

__all__ = ["BlockedBloom", "DEFAULT_SEED", "simd_path", "__version__"]
