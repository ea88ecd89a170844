"""Type stubs of the Rust extension ``linebloom._linebloom`` (re-exported by ``linebloom``)."""

from collections.abc import Iterable
from typing import Any, ClassVar, Literal, Self, SupportsIndex, final

import numpy as np
import numpy.typing as npt

__all__ = ["BlockedBloom", "DEFAULT_SEED", "simd_path", "__version__"]

__version__: str

DEFAULT_SEED: int
"""The seed of every filter built without one (the Rust crate's ``hash::DEFAULT_SEED``)."""

_Key = bytes | bytearray | str | int
"""A key: bytes as they are, str as UTF-8, int in [-2**63, 2**64) as 8 little-endian bytes."""

_Batch = npt.NDArray[np.uint64] | memoryview | Iterable[_Key] | Any
"""A batch: an array (or buffer) of uint64 hashes, or an iterable of keys."""

def simd_path() -> str:
    """The SIMD path the library's lookups run on this machine."""

@final
class BlockedBloom:
    """A register-blocked Bloom filter: each key sets and tests k bits in one 64-byte line."""

    def __new__(
        cls,
        items: int,
        fpr: float = 0.01,
        *,
        k: int | None = None,
        seed: int | None = None,
        placement: Literal["shifted", "salted"] | None = None,
    ) -> Self:
        """An empty filter for ``items`` keys at a false-positive rate of about ``fpr``.

        ``placement`` is where a key's bits go in its line: ``"shifted"`` (the default) or
        ``"salted"`` (what builds before the shifted placement read and write).

        Raises ``ValueError`` for ``items < 1``, ``fpr`` outside (0, 1), ``k`` outside
        1..=16, an unknown placement, or a filter too large for this process.
        """

    @classmethod
    def with_bits_per_key(
        cls,
        items: int,
        bits_per_key: float,
        *,
        k: int | None = None,
        seed: int | None = None,
        placement: Literal["shifted", "salted"] | None = None,
    ) -> BlockedBloom:
        """An empty filter for ``items`` keys at ``bits_per_key`` bits each."""

    @classmethod
    def from_bytes(cls, data: bytes | bytearray | memoryview) -> BlockedBloom:
        """Reads a filter saved by ``to_bytes`` or by the Rust crate (``ValueError`` if corrupt)."""

    def to_bytes(self) -> bytes:
        """The filter in the Rust crate's serialized format."""

    def add(self, key: _Key) -> None:
        """Adds one key (``TypeError`` for other types, ``ValueError`` for an int out of range)."""

    def __contains__(self, key: _Key, /) -> bool: ...

    def add_many(self, x: _Batch) -> None:
        """Adds an array of uint64 hashes (as ``insert_hashes``) or an iterable of keys.

        The GIL is released while the filter is written.
        """

    def contains_many(self, x: _Batch) -> npt.NDArray[np.bool_]:
        """Looks up an array of uint64 hashes or an iterable of keys; one bool per entry.

        The GIL is released during the lookups.
        """

    def hash(self, key: _Key) -> int:
        """The 64-bit hash of ``key`` under this filter's seed."""

    def hash_many(self, keys: Iterable[_Key]) -> npt.NDArray[np.uint64]:
        """The hashes of ``keys`` under this filter's seed."""

    def update(self, other: BlockedBloom) -> None:
        """Adds every key of ``other`` (``ValueError`` unless both have the same shape and seed)."""

    def __or__(self, other: BlockedBloom, /) -> BlockedBloom: ...
    def __ror__(self, other: BlockedBloom, /) -> BlockedBloom: ...
    def __ior__(self, other: BlockedBloom, /) -> Self: ...
    def __eq__(self, other: object, /) -> bool: ...
    __hash__: ClassVar[None]  # type: ignore[assignment]
    def copy(self) -> BlockedBloom: ...
    def __copy__(self) -> BlockedBloom: ...
    def __deepcopy__(self, memo: Any) -> BlockedBloom: ...
    def clear(self) -> None:
        """Removes every key."""

    def __reduce__(self) -> tuple[Any, tuple[bytes]]: ...
    @property
    def bits(self) -> int:
        """Number of bits (512 per line)."""

    @property
    def k(self) -> int:
        """Bits set per key."""

    @property
    def seed(self) -> int:
        """The hash seed (stored in the serialized format)."""

    @property
    def placement(self) -> Literal["shifted", "salted"]:
        """Where each key's bits go in its line (stored in the serialized format)."""

    @property
    def size_bytes(self) -> int:
        """Bytes of filter data."""

    @property
    def fill_ratio(self) -> float:
        """The fraction of bits set."""

    @property
    def estimated_items(self) -> float:
        """The number of distinct keys inserted, estimated from the bits."""

    @property
    def fpr_estimate(self) -> float:
        """The false-positive rate expected from the bits set now."""

    def expected_fpr(self, items: SupportsIndex) -> float:
        """The false-positive rate the model expects once ``items`` distinct keys are in."""
