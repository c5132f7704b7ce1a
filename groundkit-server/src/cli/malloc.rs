//! How `grk serve` asks glibc's allocator to hand large blocks back. A request body is one block
//! of up to `max_body_bytes`; glibc maps such a block on its own and unmaps it when it is freed,
//! until the first one is freed: then it raises its threshold for mapping to that size and
//! serves later bodies from heaps it keeps, so after a burst of large bodies the process stays
//! at its peak. Fixing the threshold keeps every block of 128 KiB or more mapped on its own, so
//! what a burst took goes back to the system when its requests end.
#![allow(unsafe_code)]

/// glibc's default threshold, made fixed (setting it turns the raising off).
#[cfg(all(target_os = "linux", target_env = "gnu"))]
const MMAP_THRESHOLD: libc::c_int = 128 * 1024;

/// Fixes the allocator's mapping threshold; a no-op where the allocator is not glibc's.
pub(super) fn return_large_blocks() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only sets an allocator parameter; it is called before any thread is
    // started, and a refusal (return value 0) leaves the allocator as it was.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, MMAP_THRESHOLD);
    }
}
