#!/usr/bin/env python3
"""Time from spawning `grk serve --stdio` to its answer to the first `tools/list`.

Usage: bench/startup.py GRK INDEX_DIR [RUNS]

Each run spawns a fresh process, performs the MCP handshake (initialize, then
notifications/initialized), sends tools/list, and stops the clock when that answer's line
arrives. Prints one JSON object with every run and the median, in milliseconds.
"""
import json
import statistics
import subprocess
import sys
import time


def one_run(grk: str, index_dir: str) -> float:
    started = time.perf_counter()
    proc = subprocess.Popen(
        [grk, "--index-dir", index_dir, "serve", "--stdio"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        bufsize=1,
    )
    messages = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize",
         "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                    "clientInfo": {"name": "startup-bench", "version": "1"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
    ]
    for message in messages:
        proc.stdin.write(json.dumps(message) + "\n")
    proc.stdin.flush()
    elapsed = None
    for line in proc.stdout:
        reply = json.loads(line)
        if reply.get("id") == 2:
            elapsed = (time.perf_counter() - started) * 1000.0
            if len(reply["result"]["tools"]) != 4:
                raise SystemExit(f"unexpected tools/list: {line}")
            break
    proc.stdin.close()
    proc.wait(timeout=10)
    if elapsed is None:
        raise SystemExit("grk serve --stdio never answered tools/list")
    return elapsed


def main() -> None:
    grk, index_dir = sys.argv[1], sys.argv[2]
    runs = int(sys.argv[3]) if len(sys.argv) > 3 else 15
    times = [one_run(grk, index_dir) for _ in range(runs)]
    print(json.dumps({"runs_ms": [round(t, 2) for t in times],
                      "median_ms": round(statistics.median(times), 2)}))


if __name__ == "__main__":
    main()
