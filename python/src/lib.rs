//! The Python module `linebloom._linebloom`: [`linebloom::BlockedBloom`] as the class
//! `linebloom.BlockedBloom`, through the library's public API only.
//!
//! This crate owns the mapping of Python values onto the library's keys and hashes, the
//! conversion of the library's errors into Python exceptions, and when the GIL is released. It
//! owns no filter logic: every bit is set and tested by the library.
//!
//! Keys hash exactly as the same key does from Rust ([`linebloom::Key`]), so a filter built on
//! either side answers alike on the other:
//! - `bytes` and `bytearray`: their bytes, as `&[u8]`;
//! - `str`: its UTF-8 bytes, as `&str` (a string with lone surrogates has none, and is an error);
//! - `int` (and `bool`, an `int`): the 8 little-endian bytes of its 64-bit two's complement, as
//!   Rust's `u64` (`0..2**64`) or `i64` (`-2**63..0`) keys, which agree wherever both exist.
//!   Other widths (Rust's `u32` keys hash 4 bytes) are passed as `bytes`.
//!
//! The batched calls (`add_many`, `contains_many`) take either an array of `uint64` hashes (any
//! object numpy reads without a copy: ndarray, `array.array('Q')`, a `memoryview`), which go to
//! `insert_hashes` / `contains_hashes` as they are, or any other iterable of keys, hashed here
//! while the GIL is held (the objects are Python's) and then looked up with it released. The
//! lookups and inserts themselves never hold the GIL, so other Python threads run meanwhile; a
//! filter being written by one thread cannot be used by another (PyO3's borrow check raises
//! `RuntimeError`), while lookups from many threads at once share it.

use linebloom::blocked::Placement;
use linebloom::{BlockedBloom, Key};
use numpy::{
    PyArray1, PyArrayDescrMethods, PyArrayMethods, PyReadonlyArray1, PyUntypedArray,
    PyUntypedArrayMethods,
};
use pyo3::buffer::PyBuffer;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::pybacked::PyBackedBytes;
use pyo3::types::{PyByteArray, PyBytes, PyInt, PyList, PyMemoryView, PyString, PyTuple, PyType};

/// A library error as a Python exception: every one is a bad value (a size, a rate, a shape,
/// serialized bytes), so `ValueError`, with the library's message.
fn value_error(err: linebloom::Error) -> PyErr {
    PyValueError::new_err(err.to_string())
}

/// The hash of one Python key under `seed`, as the same key hashes from Rust.
fn key_hash(key: &Bound<'_, PyAny>, seed: u64) -> PyResult<u64> {
    if let Ok(b) = key.cast::<PyBytes>() {
        return Ok(b.as_bytes().hash_with_seed(seed));
    }
    if let Ok(s) = key.cast::<PyString>() {
        return Ok(s.to_str()?.hash_with_seed(seed));
    }
    if let Ok(i) = key.cast::<PyInt>() {
        // Non-negative ints are Rust's u64 keys, negative ones its i64 keys: both hash the same
        // 8 little-endian bytes, so the two ranges join without a seam.
        if let Ok(v) = i.extract::<u64>() {
            return Ok(v.hash_with_seed(seed));
        }
        if let Ok(v) = i.extract::<i64>() {
            return Ok(v.hash_with_seed(seed));
        }
        return Err(PyValueError::new_err(format!(
            "an int key must be in [-2**63, 2**64) (got {i})"
        )));
    }
    if let Ok(b) = key.cast::<PyByteArray>() {
        return Ok(b.to_vec().hash_with_seed(seed));
    }
    Err(PyTypeError::new_err(format!(
        "a key is bytes, bytearray, str or int (got {})",
        key.get_type().name()?
    )))
}

/// The two kinds of batch the batched calls take.
enum Batch<'py> {
    /// An array of precomputed hashes, read in place.
    Hashes(PyReadonlyArray1<'py, u64>),
    /// Keys, hashed under the filter's seed.
    Keys(Vec<u64>),
}

impl Batch<'_> {
    /// The hashes, whichever kind the batch is.
    fn hashes(&self) -> PyResult<&[u64]> {
        match self {
            Batch::Hashes(a) => a
                .as_slice()
                .map_err(|e| PyValueError::new_err(e.to_string())),
            Batch::Keys(h) => Ok(h),
        }
    }
}

/// Hashes every key of an iterable (no Python-level loop: the iteration runs here).
fn hash_keys(keys: &Bound<'_, PyAny>, seed: u64) -> PyResult<Vec<u64>> {
    if let Ok(list) = keys.cast::<PyList>() {
        let mut out = Vec::with_capacity(list.len());
        for key in list.iter() {
            out.push(key_hash(&key, seed)?);
        }
        return Ok(out);
    }
    if let Ok(tuple) = keys.cast::<PyTuple>() {
        let mut out = Vec::with_capacity(tuple.len());
        for key in tuple.iter() {
            out.push(key_hash(&key, seed)?);
        }
        return Ok(out);
    }
    let mut out = Vec::with_capacity(keys.len().unwrap_or(0));
    for key in keys.try_iter()? {
        out.push(key_hash(&key?, seed)?);
    }
    Ok(out)
}

/// The placement a `placement=` argument names.
fn placement_arg(name: &str) -> PyResult<Placement> {
    match name {
        "shifted" => Ok(Placement::Shifted),
        "salted" => Ok(Placement::Salted),
        other => Err(PyValueError::new_err(format!(
            "placement must be \"shifted\" or \"salted\" (got {other:?})"
        ))),
    }
}

/// Sorts a batched call's argument into hashes or keys.
///
/// Arrays (ndarrays, and objects that expose the buffer protocol or `__array__`, read through
/// `numpy.asarray`) of dtype `uint64` are hashes; arrays of `object`, `str` or `bytes` dtype are
/// keys; arrays of any other dtype are a `TypeError` rather than a guess (an `int64` array could
/// mean either). A lone `str` or `bytes` is a `TypeError` too: it is one key, not a batch.
fn batch<'py>(x: &Bound<'py, PyAny>, seed: u64) -> PyResult<Batch<'py>> {
    let py = x.py();
    if x.is_instance_of::<PyString>()
        || x.is_instance_of::<PyBytes>()
        || x.is_instance_of::<PyByteArray>()
    {
        return Err(PyTypeError::new_err(
            "a batch is an array of uint64 hashes or an iterable of keys, not one str or bytes \
             key (use add / in for one key)",
        ));
    }
    if x.is_instance_of::<PyList>() || x.is_instance_of::<PyTuple>() {
        return Ok(Batch::Keys(hash_keys(x, seed)?));
    }
    let array = if x.is_instance_of::<PyUntypedArray>() {
        x.clone()
    } else if is_array_like(x)? {
        py.import("numpy")?.call_method1("asarray", (x,))?
    } else {
        return Ok(Batch::Keys(hash_keys(x, seed)?));
    };
    let untyped = array.cast::<PyUntypedArray>()?;
    let dtype = untyped.dtype();
    match dtype.kind() {
        b'O' | b'U' | b'S' => return Ok(Batch::Keys(hash_keys(&array, seed)?)),
        b'u' if dtype.itemsize() == 8 => {}
        _ => {
            return Err(PyTypeError::new_err(format!(
                "an array batch holds uint64 hashes (got dtype {}); pass keys as a list, or \
                 hash them with hash_many",
                dtype.str()?
            )));
        }
    }
    if untyped.ndim() != 1 {
        return Err(PyValueError::new_err(format!(
            "an array of hashes is one-dimensional (got {} dimensions)",
            untyped.ndim()
        )));
    }
    let array = if untyped.is_c_contiguous() && dtype.is_native_byteorder() != Some(false) {
        array
    } else {
        // A strided view or a byte-swapped dtype: one native, contiguous copy.
        let numpy = py.import("numpy")?;
        let uint64 = numpy.getattr("uint64")?;
        numpy.call_method1("ascontiguousarray", (array, uint64))?
    };
    let hashes = array.cast_into::<PyArray1<u64>>()?;
    let hashes = hashes
        .try_readonly()
        .map_err(|e| PyValueError::new_err(e.to_string()))?;
    Ok(Batch::Hashes(hashes))
}

/// Whether numpy can read `x` as an array: it exposes the buffer protocol or `__array__`.
fn is_array_like(x: &Bound<'_, PyAny>) -> PyResult<bool> {
    if x.hasattr("__array__")? || x.hasattr("__array_interface__")? {
        return Ok(true);
    }
    Ok(PyMemoryView::from(x).is_ok())
}

/// Reads the filter's sizes from Python: a count of items, never negative.
fn items_arg(items: i64) -> PyResult<u64> {
    u64::try_from(items)
        .map_err(|_| PyValueError::new_err(format!("items must be at least 1 (got {items})")))
}

/// A register-blocked Bloom filter: every key sets and tests its bits in one 64-byte line.
#[pyclass(name = "BlockedBloom", module = "linebloom")]
#[derive(Clone)]
struct PyBlockedBloom {
    inner: BlockedBloom,
}

impl PyBlockedBloom {
    /// Builds an empty filter with the builder's rules and our optional arguments.
    fn build(
        items: i64,
        size: impl FnOnce(linebloom::BlockedBloomBuilder) -> linebloom::BlockedBloomBuilder,
        k: Option<i64>,
        seed: Option<u64>,
        placement: Option<&str>,
    ) -> PyResult<Self> {
        let mut builder = size(BlockedBloom::builder(items_arg(items)?));
        if let Some(name) = placement {
            builder = builder.placement(placement_arg(name)?);
        }
        if let Some(k) = k {
            let k = u32::try_from(k)
                .map_err(|_| PyValueError::new_err(format!("k must be in 1..=16 (got {k})")))?;
            builder = builder.k(k);
        }
        if let Some(seed) = seed {
            builder = builder.seed(seed);
        }
        Ok(Self {
            inner: builder.build().map_err(value_error)?,
        })
    }
}

#[pymethods]
impl PyBlockedBloom {
    /// An empty filter for `items` keys at a false-positive rate of about `fpr`.
    #[new]
    #[pyo3(signature = (items, fpr = 0.01, *, k = None, seed = None, placement = None))]
    fn new(
        items: i64,
        fpr: f64,
        k: Option<i64>,
        seed: Option<u64>,
        placement: Option<&str>,
    ) -> PyResult<Self> {
        Self::build(items, |b| b.fpr(fpr), k, seed, placement)
    }

    /// An empty filter for `items` keys at `bits_per_key` bits each.
    #[classmethod]
    #[pyo3(signature = (items, bits_per_key, *, k = None, seed = None, placement = None))]
    fn with_bits_per_key(
        _cls: &Bound<'_, PyType>,
        items: i64,
        bits_per_key: f64,
        k: Option<i64>,
        seed: Option<u64>,
        placement: Option<&str>,
    ) -> PyResult<Self> {
        Self::build(items, |b| b.bits_per_key(bits_per_key), k, seed, placement)
    }

    /// Reads a filter from the serialized format (as `to_bytes` and the Rust crate write it).
    #[classmethod]
    fn from_bytes(_cls: &Bound<'_, PyType>, data: &Bound<'_, PyAny>) -> PyResult<Self> {
        let py = data.py();
        // `bytes` and `bytearray` are read where they lie; any other buffer (a memoryview, an
        // mmap) is copied once first.
        let inner = if let Ok(bytes) = data.extract::<PyBackedBytes>() {
            py.detach(|| BlockedBloom::from_bytes(&bytes))
        } else {
            let copy = PyBuffer::<u8>::get(data)?.to_vec(py)?;
            py.detach(|| BlockedBloom::from_bytes(&copy))
        };
        Ok(Self {
            inner: inner.map_err(value_error)?,
        })
    }

    /// The filter in the serialized format.
    fn to_bytes<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        let bytes = py.detach(|| self.inner.to_bytes());
        PyBytes::new(py, &bytes)
    }

    /// Adds one key (bytes, bytearray, str or int).
    fn add(&mut self, key: &Bound<'_, PyAny>) -> PyResult<()> {
        let hash = key_hash(key, self.inner.seed())?;
        self.inner.insert_hash(hash);
        Ok(())
    }

    fn __contains__(&self, key: &Bound<'_, PyAny>) -> PyResult<bool> {
        Ok(self.inner.contains_hash(key_hash(key, self.inner.seed())?))
    }

    /// Adds many keys, or many precomputed hashes (an array of uint64).
    fn add_many(&mut self, py: Python<'_>, x: &Bound<'_, PyAny>) -> PyResult<()> {
        let batch = batch(x, self.inner.seed())?;
        let hashes = batch.hashes()?;
        let inner = &mut self.inner;
        py.detach(|| inner.insert_hashes(hashes));
        Ok(())
    }

    /// For many keys or precomputed hashes, whether each may be present (a numpy bool array).
    fn contains_many<'py>(
        &self,
        py: Python<'py>,
        x: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyArray1<bool>>> {
        let batch = batch(x, self.inner.seed())?;
        let hashes = batch.hashes()?;
        let mut out = vec![false; hashes.len()];
        py.detach(|| self.inner.contains_hashes(hashes, &mut out))
            .map_err(value_error)?;
        Ok(PyArray1::from_vec(py, out))
    }

    /// The 64-bit hash of one key under this filter's seed (what `add` inserts).
    fn hash(&self, key: &Bound<'_, PyAny>) -> PyResult<u64> {
        key_hash(key, self.inner.seed())
    }

    /// The hashes of many keys under this filter's seed, as a numpy uint64 array.
    fn hash_many<'py>(
        &self,
        py: Python<'py>,
        keys: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyArray1<u64>>> {
        match batch(keys, self.inner.seed())? {
            Batch::Keys(hashes) => Ok(PyArray1::from_vec(py, hashes)),
            Batch::Hashes(_) => Err(PyTypeError::new_err(
                "hash_many takes keys; an array of uint64 already holds hashes",
            )),
        }
    }

    /// Adds every key of `other` (same shape and seed), in place.
    fn update(&mut self, py: Python<'_>, other: PyRef<'_, Self>) -> PyResult<()> {
        let inner = &mut self.inner;
        let other = &other.inner;
        py.detach(|| inner.union(other)).map_err(value_error)
    }

    /// A filter holding the keys of both (same shape and seed).
    fn __or__(&self, py: Python<'_>, other: PyRef<'_, Self>) -> PyResult<Self> {
        let mut union = self.clone();
        let other = &other.inner;
        py.detach(|| union.inner.union(other))
            .map_err(value_error)?;
        Ok(union)
    }

    fn __ior__(&mut self, py: Python<'_>, other: PyRef<'_, Self>) -> PyResult<()> {
        self.update(py, other)
    }

    fn __eq__(&self, other: PyRef<'_, Self>) -> bool {
        self.inner == other.inner
    }

    /// A copy of the filter.
    fn copy(&self) -> Self {
        self.clone()
    }

    fn __copy__(&self) -> Self {
        self.clone()
    }

    fn __deepcopy__(&self, _memo: &Bound<'_, PyAny>) -> Self {
        self.clone()
    }

    /// Removes every key.
    fn clear(&mut self) {
        self.inner.clear();
    }

    /// Pickles as `BlockedBloom.from_bytes(self.to_bytes())`.
    fn __reduce__<'py>(
        slf: &Bound<'py, Self>,
    ) -> PyResult<(Bound<'py, PyAny>, (Bound<'py, PyBytes>,))> {
        let from_bytes = slf.get_type().getattr("from_bytes")?;
        Ok((from_bytes, (slf.borrow().to_bytes(slf.py()),)))
    }

    fn __repr__(&self) -> String {
        format!(
            "BlockedBloom(bits={}, k={}, seed={:#x})",
            self.inner.num_bits(),
            self.inner.k(),
            self.inner.seed()
        )
    }

    /// Number of bits (512 per line).
    #[getter]
    fn bits(&self) -> u64 {
        self.inner.num_bits()
    }

    /// Bits set per key (probes), all in one line.
    #[getter]
    fn k(&self) -> u32 {
        self.inner.k()
    }

    /// The hash seed (stored in the serialized format).
    #[getter]
    fn seed(&self) -> u64 {
        self.inner.seed()
    }

    /// Where each key's bits go in its line: `"shifted"` (new filters) or `"salted"` (filters
    /// written before it, or asked for); stored in the serialized format.
    #[getter]
    fn placement(&self) -> &'static str {
        self.inner.placement().name()
    }

    /// Bytes of filter data (64 per line).
    #[getter]
    fn size_bytes(&self) -> usize {
        self.inner.size_bytes()
    }

    /// The fraction of bits set.
    #[getter]
    fn fill_ratio(&self) -> f64 {
        self.inner.fill_ratio()
    }

    /// The number of distinct keys inserted, estimated from the bits.
    #[getter]
    fn estimated_items(&self) -> f64 {
        self.inner.estimated_items()
    }

    /// The false-positive rate expected from the bits set now.
    #[getter]
    fn fpr_estimate(&self) -> f64 {
        self.inner.current_fpr()
    }

    /// The false-positive rate the model expects once `items` distinct keys are in.
    fn expected_fpr(&self, items: u64) -> f64 {
        self.inner.expected_fpr(items)
    }
}

/// The name of the SIMD path the library's lookups run on this machine (`avx512`, `avx2`, ...).
#[pyfunction]
fn simd_path() -> &'static str {
    linebloom::simd_path().name()
}

#[pymodule]
fn _linebloom(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyBlockedBloom>()?;
    m.add_function(wrap_pyfunction!(simd_path, m)?)?;
    m.add("DEFAULT_SEED", linebloom::hash::DEFAULT_SEED)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
