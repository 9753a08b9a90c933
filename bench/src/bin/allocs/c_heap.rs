//! Allocations made outside Rust's allocator: libzstd and libdeflate are C and call `malloc`
//! themselves. This binary defines glibc's allocation entry points (the statically linked C
//! code, and Rust's `System`, bind to these), counts each call and forwards it to glibc's
//! `__libc_*` functions. Rust's own allocations pass through here too (`System` calls
//! `malloc`, `calloc`, `realloc` or `posix_memalign` once per allocation), so the C share is
//! these counts minus the Rust counters.
//!
//! Without glibc the C share is not measured (reported as zero).

#[cfg(all(target_os = "linux", target_env = "gnu"))]
mod glibc {
    use std::ffi::{c_int, c_void};
    use std::sync::atomic::{AtomicU64, Ordering};

    pub static CALLS: AtomicU64 = AtomicU64::new(0);
    pub static BYTES: AtomicU64 = AtomicU64::new(0);

    unsafe extern "C" {
        fn __libc_malloc(size: usize) -> *mut c_void;
        fn __libc_calloc(n: usize, size: usize) -> *mut c_void;
        fn __libc_realloc(ptr: *mut c_void, size: usize) -> *mut c_void;
        fn __libc_memalign(align: usize, size: usize) -> *mut c_void;
    }

    fn count(bytes: usize) {
        CALLS.fetch_add(1, Ordering::Relaxed);
        BYTES.fetch_add(bytes as u64, Ordering::Relaxed);
    }

    /// # Safety
    /// As glibc's `malloc`.
    #[unsafe(no_mangle)]
    pub unsafe extern "C" fn malloc(size: usize) -> *mut c_void {
        count(size);
        // SAFETY: forwarded as is.
        unsafe { __libc_malloc(size) }
    }

    /// # Safety
    /// As glibc's `calloc`.
    #[unsafe(no_mangle)]
    pub unsafe extern "C" fn calloc(n: usize, size: usize) -> *mut c_void {
        count(n.saturating_mul(size));
        // SAFETY: forwarded as is.
        unsafe { __libc_calloc(n, size) }
    }

    /// # Safety
    /// As glibc's `realloc`.
    #[unsafe(no_mangle)]
    pub unsafe extern "C" fn realloc(ptr: *mut c_void, size: usize) -> *mut c_void {
        if size != 0 || ptr.is_null() {
            count(size);
        }
        // SAFETY: forwarded as is.
        unsafe { __libc_realloc(ptr, size) }
    }

    /// # Safety
    /// As glibc's `posix_memalign`.
    #[unsafe(no_mangle)]
    pub unsafe extern "C" fn posix_memalign(
        out: *mut *mut c_void,
        align: usize,
        size: usize,
    ) -> c_int {
        const EINVAL: c_int = 22;
        const ENOMEM: c_int = 12;
        if !align.is_power_of_two() || align % size_of::<usize>() != 0 {
            return EINVAL;
        }
        count(size);
        // SAFETY: a valid alignment; `out` is the caller's to write.
        unsafe {
            let ptr = __libc_memalign(align, size);
            if ptr.is_null() {
                return ENOMEM;
            }
            *out = ptr;
        }
        0
    }

    /// # Safety
    /// As glibc's `aligned_alloc`.
    #[unsafe(no_mangle)]
    pub unsafe extern "C" fn aligned_alloc(align: usize, size: usize) -> *mut c_void {
        count(size);
        // SAFETY: forwarded as is.
        unsafe { __libc_memalign(align, size) }
    }

    /// # Safety
    /// As glibc's `memalign`.
    #[unsafe(no_mangle)]
    pub unsafe extern "C" fn memalign(align: usize, size: usize) -> *mut c_void {
        count(size);
        // SAFETY: forwarded as is.
        unsafe { __libc_memalign(align, size) }
    }

    /// (calls, bytes) so far, Rust's allocations included.
    pub fn totals() -> Option<(u64, u64)> {
        Some((CALLS.load(Ordering::Relaxed), BYTES.load(Ordering::Relaxed)))
    }
}
#[cfg(all(target_os = "linux", target_env = "gnu"))]
pub use glibc::*;

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
mod other {
    pub fn totals() -> Option<(u64, u64)> {
        None
    }
}
#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
pub use other::*;
