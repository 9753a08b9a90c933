//! The allocator brotli's encoder and decoder are built on: freed blocks kept in bounded
//! per-type lists, and cleared before they are handed out again.

use std::any::{Any, TypeId};
use std::sync::{Arc, Mutex, MutexGuard};

use brotli::enc::BrotliAlloc;
use brotli::{Allocator, SliceWrapper, SliceWrapperMut};

use super::MAX_KEPT_ENCODER;

/// Freed blocks, one list per element type, bounded in bytes.
///
/// brotli allocates a few dozen types (bytes, `u32`s, histograms, commands, Huffman
/// tables); a list is found by `TypeId` in a short vector and holds `Vec<Vec<T>>`.
pub(crate) struct FreeLists {
    lists: Vec<(TypeId, Box<dyn Any + Send>)>,
    /// Bytes held by the lists (capacity, not length).
    bytes: usize,
    /// Bytes handed out and not freed back (a block brotli drops without freeing stays
    /// counted, which only makes the bound stricter).
    live: usize,
    limit: usize,
}

impl FreeLists {
    pub(super) fn new(limit: usize) -> Self {
        FreeLists {
            lists: Vec::new(),
            bytes: 0,
            live: 0,
            limit,
        }
    }

    fn list<T: Send + 'static>(lists: &mut Vec<(TypeId, Box<dyn Any + Send>)>) -> &mut Vec<Vec<T>> {
        let id = TypeId::of::<T>();
        let index = match lists.iter().position(|(t, _)| *t == id) {
            Some(index) => index,
            None => {
                lists.push((id, Box::new(Vec::<Vec<T>>::new())));
                lists.len() - 1
            }
        };
        lists[index]
            .1
            .downcast_mut()
            .expect("each list is stored under its element's TypeId")
    }

    /// `len` default values, in a kept block when one is large enough (the smallest such),
    /// else in a new one. When no kept block fits, the largest too-small one is freed, so a
    /// list never holds more blocks than brotli had live at once.
    pub(super) fn alloc<T: Clone + Default + Send + 'static>(&mut self, len: usize) -> Vec<T> {
        if len == 0 {
            return Vec::new();
        }
        let size = size_of::<T>().max(1);
        let block = self.take_block(len, size);
        self.live += block.capacity() * size;
        block
    }

    fn take_block<T: Clone + Default + Send + 'static>(
        &mut self,
        len: usize,
        size: usize,
    ) -> Vec<T> {
        let list = Self::list::<T>(&mut self.lists);
        let mut best: Option<usize> = None;
        let mut largest: Option<usize> = None;
        for (i, block) in list.iter().enumerate() {
            let cap = block.capacity();
            if cap >= len && best.is_none_or(|b| cap < list[b].capacity()) {
                best = Some(i);
            }
            if largest.is_none_or(|l| cap > list[l].capacity()) {
                largest = Some(i);
            }
        }
        match best.or(largest) {
            Some(i) => {
                let mut block = list.swap_remove(i);
                self.bytes -= block.capacity() * size;
                if block.capacity() < len {
                    // Too small: give it back to the system and take a fresh one.
                    return vec![T::default(); len];
                }
                block.clear();
                block.resize(len, T::default());
                block
            }
            None => vec![T::default(); len],
        }
    }

    /// Keeps `block` for reuse unless that would take the lists past their limit.
    pub(super) fn free<T: Send + 'static>(&mut self, block: Vec<T>) {
        let bytes = block.capacity() * size_of::<T>().max(1);
        self.live = self.live.saturating_sub(bytes);
        if bytes == 0 || self.bytes + bytes > self.limit {
            return;
        }
        self.bytes += bytes;
        Self::list::<T>(&mut self.lists).push(block);
    }

    /// Bytes kept for reuse.
    pub(super) fn kept(&self) -> usize {
        self.bytes
    }

    /// Bytes handed out and not freed.
    pub(super) fn live(&self) -> usize {
        self.live
    }
}

/// A block handed to brotli: exactly the length it asked for.
pub(crate) struct Block<T>(Vec<T>);

impl<T> Default for Block<T> {
    fn default() -> Self {
        Block(Vec::new())
    }
}

impl<T> SliceWrapper<T> for Block<T> {
    fn slice(&self) -> &[T] {
        &self.0
    }
}

impl<T> SliceWrapperMut<T> for Block<T> {
    fn slice_mut(&mut self) -> &mut [T] {
        &mut self.0
    }
}

/// The encoder's allocator: owns its free lists (the encoder state is owned by one
/// [`CompressorState`], and its `m8` field is public, so no sharing is needed).
pub(crate) struct EncAlloc(pub(super) FreeLists);

impl Default for EncAlloc {
    fn default() -> Self {
        EncAlloc(FreeLists::new(MAX_KEPT_ENCODER))
    }
}

impl<T: Clone + Default + Send + 'static> Allocator<T> for EncAlloc {
    type AllocatedMemory = Block<T>;

    fn alloc_cell(&mut self, len: usize) -> Block<T> {
        Block(self.0.alloc(len))
    }

    fn free_cell(&mut self, block: Block<T>) {
        self.0.free(block.0);
    }
}

impl BrotliAlloc for EncAlloc {}

/// The decoder's allocator: a handle on free lists shared by its three allocator slots and
/// by the [`DecompressorState`] that outlives each `BrotliState` (whose `Drop` frees every
/// block into these lists). The lock is uncontended: one decoder uses it at a time.
#[derive(Clone)]
pub(crate) struct DecAlloc(pub(super) Arc<Mutex<FreeLists>>);

impl DecAlloc {
    pub(super) fn lists(&self) -> MutexGuard<'_, FreeLists> {
        crate::sync::lock(&self.0)
    }
}

impl<T: Clone + Default + Send + 'static> Allocator<T> for DecAlloc {
    type AllocatedMemory = Block<T>;

    fn alloc_cell(&mut self, len: usize) -> Block<T> {
        Block(self.lists().alloc(len))
    }

    fn free_cell(&mut self, block: Block<T>) {
        self.lists().free(block.0);
    }
}
