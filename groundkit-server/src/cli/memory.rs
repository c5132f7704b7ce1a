//! The allocator settings of `grk serve`: how many malloc arenas its threads may spread over.
//!
//! glibc gives each new thread that allocates an arena of its own, up to eight per core, and
//! each arena keeps the memory its thread freed for reuse. A server runs a few executor threads
//! and a pool of blocking threads (two per core for local searches), so under load it would hold
//! an arena per thread. One arena per core is as many as can be busy at once, and the cap is
//! set before any thread starts (test:
//! `service::memory::a_busy_server_holds_at_most_one_malloc_arena_per_core`). Only the `grk`
//! binary sets it: an application that embeds the server keeps its own allocator settings.

#![allow(unsafe_code)]

/// Caps malloc's arenas at `arenas` (at least one). Should glibc refuse, its default stays.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
pub(super) fn limit_arenas(arenas: usize) {
    let arenas = libc::c_int::try_from(arenas.max(1)).unwrap_or(libc::c_int::MAX);
    // SAFETY: `mallopt` sets a tuning parameter of glibc's allocator under the allocator's own
    // lock; it touches no memory of the caller's and is safe to call at any time.
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, arenas);
    }
}

/// Caps malloc's arenas: nothing to set outside glibc.
#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
pub(super) fn limit_arenas(_arenas: usize) {}
