//! The memory C brotli instances are created on: blocks they free are kept for the next
//! instance on the same [`Blocks`], up to a bound, instead of going back to the system.
//!
//! A C encoder cannot be reset, so each stream creates one; what a pool can keep is its
//! memory. A new encoder at the same quality asks for the same sizes (state, ring buffer,
//! hasher, command and output buffers), and gets the blocks of the last one, which spares
//! the system allocator's work and, for the large ones, mmap and page faults. Blocks are
//! not cleared: C brotli never reads memory it has not written (it runs on `malloc`).

use std::alloc::{Layout, alloc, dealloc};
use std::ffi::c_void;
use std::ptr::NonNull;

/// Bytes before each block, holding its size; 16 keeps blocks aligned as `malloc`'s are.
const HEADER: usize = 16;

/// A block is reused for a request at least half its size (else it would hold a large
/// block for a small request, and the large request would take a new one).
const MAX_SLACK: usize = 2;

/// Blocks handed out and kept. Used only through the callbacks below while an instance
/// runs, and through `&mut` between calls: never by two at once.
pub(crate) struct Blocks {
    /// Kept blocks: the address given out, and the usable size.
    free: Vec<(NonNull<u8>, usize)>,
    /// Bytes kept (usable sizes).
    kept: usize,
    /// Bytes handed out and not freed.
    live: usize,
    /// The most bytes kept.
    keep: usize,
    /// Blocks taken from the system so far.
    made: u64,
}

impl Blocks {
    /// An empty set, keeping at most `keep` bytes of freed blocks.
    pub(crate) fn new(keep: usize) -> Self {
        Blocks {
            free: Vec::new(),
            kept: 0,
            live: 0,
            keep,
            made: 0,
        }
    }

    /// Bytes of freed blocks kept for reuse.
    pub(crate) fn kept(&self) -> usize {
        self.kept
    }

    /// Bytes handed out and not freed.
    pub(crate) fn live(&self) -> usize {
        self.live
    }

    /// Blocks taken from the system so far (the rest were reused).
    #[cfg(test)]
    pub(crate) fn made(&self) -> u64 {
        self.made
    }

    /// A block of at least `size` bytes: the smallest kept one that fits (and is at most
    /// [`MAX_SLACK`] times too large), else a new one. `None` when out of memory.
    fn take(&mut self, size: usize) -> Option<NonNull<u8>> {
        let fits = |cap: usize| cap >= size && cap / MAX_SLACK <= size;
        let best = (0..self.free.len())
            .filter(|&i| fits(self.free[i].1))
            .min_by_key(|&i| self.free[i].1);
        if let Some(i) = best {
            let (ptr, cap) = self.free.swap_remove(i);
            self.kept -= cap;
            self.live += cap;
            return Some(ptr);
        }
        let ptr = new_block(size)?;
        self.live += size;
        self.made += 1;
        Some(ptr)
    }

    /// Takes back a block from [`take`](Blocks::take): kept if the bound allows, else freed.
    ///
    /// # Safety
    /// `ptr` came from `take` on this `Blocks` and has not been given back since.
    unsafe fn give_back(&mut self, ptr: NonNull<u8>) {
        // SAFETY: by the contract, `ptr` is a live block of ours: its header is readable.
        let cap = unsafe { block_size(ptr) };
        self.live = self.live.saturating_sub(cap);
        if self.kept + cap <= self.keep {
            self.free.push((ptr, cap));
            self.kept += cap;
        } else {
            // SAFETY: as above; it is freed once, here.
            unsafe { free_block(ptr, cap) };
        }
    }

    /// Frees kept blocks until at most `keep` bytes are kept.
    pub(crate) fn trim(&mut self, keep: usize) {
        self.free.sort_unstable_by_key(|&(_, cap)| cap);
        while self.kept > keep {
            let Some((ptr, cap)) = self.free.pop() else {
                break;
            };
            self.kept -= cap;
            // SAFETY: a kept block is ours and not handed out; freed once, here.
            unsafe { free_block(ptr, cap) };
        }
    }
}

impl Drop for Blocks {
    fn drop(&mut self) {
        // Blocks still handed out belong to an instance destroyed before this (the owners
        // in `encoder.rs` and `decoder.rs` destroy theirs first); only kept ones are here.
        self.trim(0);
    }
}

/// The layout of a block of `size` usable bytes, header included.
fn layout(size: usize) -> Option<Layout> {
    Layout::from_size_align(size.checked_add(HEADER)?, HEADER).ok()
}

/// A new block of `size` usable bytes, its size written in its header.
fn new_block(size: usize) -> Option<NonNull<u8>> {
    let layout = layout(size)?;
    // SAFETY: the layout's size is at least HEADER, never zero.
    let base = NonNull::new(unsafe { alloc(layout) })?;
    // SAFETY: the allocation is HEADER + size bytes aligned to 16: the header holds a
    // `usize` at its start, and the block starts HEADER bytes in.
    unsafe {
        base.cast::<usize>().write(size);
        Some(base.add(HEADER))
    }
}

/// The usable size of a block.
///
/// # Safety
/// `ptr` is a live block from [`new_block`].
unsafe fn block_size(ptr: NonNull<u8>) -> usize {
    // SAFETY: the header written by `new_block` is HEADER bytes before the block.
    unsafe { ptr.sub(HEADER).cast::<usize>().read() }
}

/// Frees a block of `size` usable bytes.
///
/// # Safety
/// `ptr` is a live block from [`new_block`] of that size, not used after this.
unsafe fn free_block(ptr: NonNull<u8>, size: usize) {
    let layout = layout(size).expect("the layout the block was allocated with");
    // SAFETY: the allocation starts HEADER bytes before the block, with this layout.
    unsafe { dealloc(ptr.sub(HEADER).as_ptr(), layout) };
}

/// brotli's `brotli_alloc_func` over a [`Blocks`]: `opaque` is the `*mut Blocks` the
/// instance was created with. Null when out of memory, as brotli expects.
pub(super) extern "C" fn alloc_block(opaque: *mut c_void, size: usize) -> *mut c_void {
    // SAFETY: brotli passes back the opaque pointer its instance was created with: a live
    // `Blocks` owned by the instance's owner, which touches it only between brotli calls
    // (this runs inside one), so this is the only reference to it now.
    let blocks = unsafe { &mut *opaque.cast::<Blocks>() };
    blocks
        .take(size)
        .map_or(std::ptr::null_mut(), |ptr| ptr.as_ptr().cast())
}

/// brotli's `brotli_free_func` over a [`Blocks`]; a null address is ignored, as brotli's
/// API requires.
pub(super) extern "C" fn free_block_callback(opaque: *mut c_void, address: *mut c_void) {
    let Some(ptr) = NonNull::new(address.cast::<u8>()) else {
        return;
    };
    // SAFETY: as in `alloc_block`.
    let blocks = unsafe { &mut *opaque.cast::<Blocks>() };
    // SAFETY: brotli frees only what its allocator (`alloc_block`, on this same opaque
    // pointer) gave it, once.
    unsafe { blocks.give_back(ptr) };
}

/// A `Blocks` at a fixed address, for brotli's opaque pointer: owned through a raw pointer
/// so that the pointer brotli holds and Rust's own uses derive from one (no `Box`
/// uniqueness to invalidate it).
pub(super) struct Arena(NonNull<Blocks>);

impl Arena {
    pub(super) fn new(keep: usize) -> Self {
        Arena(NonNull::from(Box::leak(Box::new(Blocks::new(keep)))))
    }

    /// The opaque pointer to create an instance with.
    pub(super) fn opaque(&self) -> *mut c_void {
        self.0.as_ptr().cast()
    }

    /// The blocks, between brotli calls.
    pub(super) fn get(&self) -> &Blocks {
        // SAFETY: the pointer is live until `drop`; brotli uses it only inside its calls,
        // which the owners make through `&mut self`, so none runs while this borrow lives.
        unsafe { self.0.as_ref() }
    }

    /// The blocks, between brotli calls.
    pub(super) fn get_mut(&mut self) -> &mut Blocks {
        // SAFETY: as in `get`, and `&mut self` excludes every other use.
        unsafe { self.0.as_mut() }
    }
}

impl Drop for Arena {
    fn drop(&mut self) {
        // SAFETY: made by `Box::leak` in `new`, reclaimed once. The owners destroy their
        // instance before dropping the arena (field order and their `Drop`).
        drop(unsafe { Box::from_raw(self.0.as_ptr()) });
    }
}

// SAFETY: an arena is plain memory with no thread affinity; it moves with its owner, and is
// only used through `&mut` or inside brotli calls made through `&mut` (never two at once).
unsafe impl Send for Arena {}
