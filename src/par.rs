//! The one place the library meets rayon (feature `rayon`, on by default). Without the feature
//! the same calls run on the calling thread: `current_num_threads` is 1, and `par_chunks` and
//! its siblings are the slices' sequential iterators, which have the same `zip`,
//! `enumerate`, `for_each` and `try_for_each`. Every parallel path gives the same bits either
//! way (its tasks own disjoint lines and OR commutes); only the threads differ.

#[cfg(feature = "rayon")]
pub(crate) use rayon::current_num_threads;
#[cfg(feature = "rayon")]
pub(crate) use rayon::prelude::*;

/// One thread: the calling one.
#[cfg(not(feature = "rayon"))]
pub(crate) fn current_num_threads() -> usize {
    1
}

/// rayon's slice methods, sequential.
#[cfg(not(feature = "rayon"))]
pub(crate) trait ParSlice<T> {
    fn par_chunks(&self, size: usize) -> core::slice::Chunks<'_, T>;
}

#[cfg(not(feature = "rayon"))]
impl<T> ParSlice<T> for [T] {
    fn par_chunks(&self, size: usize) -> core::slice::Chunks<'_, T> {
        self.chunks(size)
    }
}

/// rayon's mutable slice methods, sequential.
#[cfg(not(feature = "rayon"))]
pub(crate) trait ParSliceMut<T> {
    fn par_chunks_mut(&mut self, size: usize) -> core::slice::ChunksMut<'_, T>;
    fn par_iter_mut(&mut self) -> core::slice::IterMut<'_, T>;
}

#[cfg(not(feature = "rayon"))]
impl<T> ParSliceMut<T> for [T] {
    fn par_chunks_mut(&mut self, size: usize) -> core::slice::ChunksMut<'_, T> {
        self.chunks_mut(size)
    }
    fn par_iter_mut(&mut self) -> core::slice::IterMut<'_, T> {
        self.iter_mut()
    }
}
