//! `grk serve`'s threads share one malloc arena per core (`cli::memory`): under concurrent
//! searches, a server with more threads than cores still holds no more arenas than cores.

use serde_json::json;

use super::{Serve, corpus};

/// The size of every arena glibc adds to its first (`HEAP_MAX_SIZE` on 64-bit Linux).
const ARENA_HEAP: u64 = 64 << 20;

/// The arenas of `pid` besides the first: anonymous mappings that start on a 64 MiB boundary
/// and, readable and writable then reserved, span exactly 64 MiB (thread stacks and the index
/// files are neither).
fn added_arenas(pid: u32) -> usize {
    let maps = std::fs::read_to_string(format!("/proc/{pid}/maps")).expect("maps");
    let regions: Vec<(u64, u64, &str, bool)> = maps
        .lines()
        .map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            let (start, end) = fields[0].split_once('-').expect("address range");
            let hex = |text| u64::from_str_radix(text, 16).expect("hex address");
            (hex(start), hex(end), fields[1], fields.len() <= 5)
        })
        .collect();
    regions
        .iter()
        .enumerate()
        .filter(|&(i, &(start, end, perms, anonymous))| {
            let reserved = regions
                .get(i + 1)
                .filter(|next| next.0 == end && next.2 == "---p" && next.3)
                .map_or(end, |next| next.1);
            anonymous
                && perms == "rw-p"
                && start % ARENA_HEAP == 0
                && reserved - start == ARENA_HEAP
        })
        .count()
}

fn threads(pid: u32) -> usize {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("status");
    status
        .lines()
        .find_map(|line| line.strip_prefix("Threads:"))
        .and_then(|n| n.trim().parse().ok())
        .expect("Threads line")
}

#[test]
fn a_busy_server_holds_at_most_one_malloc_arena_per_core() {
    let fx = corpus();
    let server = Serve::start(&mut fx.grk());
    let body = json!({"collection": "papers", "query": "tea tests chain"}).to_string();
    std::thread::scope(|scope| {
        for _ in 0..16 {
            scope.spawn(|| {
                for _ in 0..20 {
                    let response = server.post("/search", &body);
                    assert_eq!(response.status, 200, "{}", response.body);
                }
            });
        }
    });
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    let pid = server.pid();
    // Without the cap glibc gives each of these threads an arena of its own.
    assert!(threads(pid) > cores, "{} threads", threads(pid));
    assert!(
        added_arenas(pid) < cores,
        "{} arenas besides the first on {cores} cores",
        added_arenas(pid)
    );
}
