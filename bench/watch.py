"""A watched working tree: `grk serve --watch` on a generated code tree, measured from outside.

    bench/watch.sh [FILES (10000)] [ROUNDS (60)] [IDLE_SECONDS (600)] [SOAK_SECONDS (1800)]

Phases, in one run against one server:

  latency   ROUNDS one-file edits (a line with a new word appended to a random file, written in
            place); for each, the time from the write's close to the first REST search that
            finds the word (polled every 5 ms). A quiet 300 ms between rounds.
  checkout  `git checkout` between two commits FILES/2 files apart (and the edits above); the time from its start
            until the watcher is idle on a newer generation and 300 sampled changed files are
            all found; the generations published; the watcher's peak RSS (VmHWM) over the run
            so far. A reader thread searches throughout and counts failed requests.
  idle      the watcher's CPU time (utime + stime) over IDLE_SECONDS with nothing changing.
  soak      SOAK_SECONDS of random edits, renames and deletes (one every 200 ms, then undone so
            the tree stays the same size); the watcher's RSS and the index directory's size,
            sampled every 30 s.

With EMBED_MODEL=DIR in the environment, the server (and so its watcher) embeds with the
sentence-transformers model in DIR: every edit is then embedded before it is published.

Prints one line per measurement and a summary.
"""

import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request

GRK = sys.argv[1]
FILES = int(sys.argv[2]) if len(sys.argv) > 2 else 10000
ROUNDS = int(sys.argv[3]) if len(sys.argv) > 3 else 60
IDLE = float(sys.argv[4]) if len(sys.argv) > 4 else 600
SOAK = float(sys.argv[5]) if len(sys.argv) > 5 else 1800

WORDS = ("parse render index fetch cache token stream buffer record field value query "
         "shard merge score rank chunk source cursor filter vector graph commit build").split()


def module_text(rng, i, salt=""):
    lines = [f"# module {i} {salt}".rstrip()]
    for f in range(6):
        a, b = rng.choice(WORDS), rng.choice(WORDS)
        lines.append(f"def {a}_{b}_{i}_{f}(items, limit=10):")
        lines.append(f'    """{a.title()} the {b} of every item, up to limit."""')
        lines.append(f"    return [item.{a}() for item in items[:limit] if item.{b}]")
        lines.append("")
    return "\n".join(lines) + "\n"


def rel_of(i):
    return f"pkg{i % 50:02d}/sub{(i // 50) % 10}/mod_{i}.py"


def post(port, path, body):
    req = urllib.request.Request(
        f"http://127.0.0.1:{port}{path}", data=json.dumps(body).encode(),
        headers={"content-type": "application/json"})
    with urllib.request.urlopen(req, timeout=30) as resp:
        return json.loads(resp.read())


def get(port, path):
    with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=30) as resp:
        return json.loads(resp.read())


def found(port, word, rel=None):
    try:
        hits = post(port, "/search", {"collection": "tree", "query": word, "top_k": 1})["results"]
    except urllib.error.HTTPError:
        return False
    return bool(hits) and (rel is None or hits[0]["document_id"] == rel)


def status(port):
    try:
        return get(port, "/collections/tree/status")
    except urllib.error.HTTPError:
        return None


def watcher_pid(server_pid):
    for task in os.listdir(f"/proc/{server_pid}/task"):
        with open(f"/proc/{server_pid}/task/{task}/children") as f:
            for pid in f.read().split():
                return int(pid)
    return None


def proc_status(pid, key):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    return 0


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def du_kib(path):
    out = subprocess.run(["du", "-sk", path], capture_output=True, text=True, check=True)
    return int(out.stdout.split()[0])


def pct(values, q):
    values = sorted(values)
    return values[min(len(values) - 1, int(round(q * (len(values) - 1))))]


def main():
    rng = random.Random(7)
    work = tempfile.mkdtemp(prefix="grk-watch-")
    tree = os.path.join(work, "tree")
    index = os.path.join(work, "index")
    server = None
    try:
        for i in range(FILES):
            path = os.path.join(tree, rel_of(i))
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w") as f:
                f.write(module_text(rng, i))
        git = ["git", "-C", tree, "-c", "user.name=bench", "-c", "user.email=bench@localhost"]
        subprocess.run(git + ["init", "-q", "-b", "main"], check=True)
        subprocess.run(git + ["add", "-A"], check=True)
        subprocess.run(git + ["commit", "-qm", "a"], check=True)
        subprocess.run(git + ["checkout", "-qb", "other"], check=True)
        changed = list(range(0, FILES, 2))
        for i in changed:
            with open(os.path.join(tree, rel_of(i)), "w") as f:
                f.write(module_text(rng, i, salt=f"branchword{i}"))
        subprocess.run(git + ["commit", "-qam", "b"], check=True)
        subprocess.run(git + ["checkout", "-q", "main"], check=True)
        print(f"tree: {FILES} files; the other branch rewrites {len(changed)}", flush=True)

        embed = ["--embed-model", os.environ["EMBED_MODEL"]] if os.environ.get("EMBED_MODEL") else []
        server = subprocess.Popen(
            [GRK, "--index-dir", index, "--base-dir", tree] + embed
            + ["serve", "--port", "0", "--watch", tree, "--watch-collection", "tree"],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
            env=dict(os.environ, GROUNDKIT_LOG="info"))
        port = None
        for line in server.stderr:
            m = re.search(r"serving REST on http://[^:]+:(\d+)", line)
            if m:
                port = int(m.group(1))
                break
        threading.Thread(target=lambda: [None for _ in server.stderr], daemon=True).start()
        started = time.monotonic()
        while True:
            s = status(port)
            if s and s["document_count"] == FILES and s.get("watcher", {}).get("generations", 0) >= 1:
                break
            time.sleep(0.05)
        print(f"first ingest: {time.monotonic() - started:.1f} s to serve {FILES} files", flush=True)
        watcher = watcher_pid(server.pid)

        # latency
        latencies = []
        for r in range(ROUNDS):
            i = rng.randrange(FILES)
            rel = rel_of(i)
            word = f"zqx{r}w{rng.randrange(10**9)}"
            with open(os.path.join(tree, rel), "a") as f:
                f.write(f"# edited: {word}\n")
            t0 = time.monotonic()
            while not found(port, word, rel):
                time.sleep(0.005)
                if time.monotonic() - t0 > 30:
                    raise SystemExit(f"{word} never found")
            latencies.append(time.monotonic() - t0)
            print(f"latency round {r}: {latencies[-1] * 1000:.0f} ms", flush=True)
            time.sleep(0.3)
        print(f"save to searchable over {ROUNDS} edits: p50 {pct(latencies, 0.5) * 1000:.0f} ms, "
              f"p95 {pct(latencies, 0.95) * 1000:.0f} ms, max {max(latencies) * 1000:.0f} ms",
              flush=True)

        # checkout (the edits above committed first, so git leaves none in the way)
        subprocess.run(git + ["commit", "-qam", "edits"], check=True)
        failures, reads = [0], [0]
        stop = threading.Event()

        def reader():
            while not stop.is_set():
                try:
                    post(port, "/search", {"collection": "tree", "query": rng.choice(WORDS), "top_k": 10})
                except Exception:
                    failures[0] += 1
                reads[0] += 1

        thread = threading.Thread(target=reader, daemon=True)
        thread.start()
        before = status(port)["generation"]
        sample = rng.sample(changed, 300)
        t0 = time.monotonic()
        subprocess.run(git + ["checkout", "-q", "other"], check=True)
        checkout_done = time.monotonic() - t0
        while True:
            s = status(port)
            w = s.get("watcher", {})
            if (s["generation"] > before and w.get("pending_changes") == 0 and not w.get("publishing")
                    and all(found(port, f"branchword{i}", rel_of(i)) for i in sample)):
                break
            time.sleep(0.02)
        elapsed = time.monotonic() - t0
        stop.set()
        thread.join()
        s = status(port)
        print(f"checkout of {len(changed)} changed files: git took {checkout_done:.2f} s; all "
              f"searchable after {elapsed:.2f} s; {s['generation'] - before} generations; "
              f"watcher peak RSS {proc_status(watcher, 'VmHWM') / 1024:.0f} MiB; "
              f"{failures[0]} failed of {reads[0]} concurrent searches", flush=True)

        # idle
        cpu0 = cpu_seconds(watcher)
        time.sleep(IDLE)
        print(f"idle: watcher CPU {cpu_seconds(watcher) - cpu0:.3f} s over {IDLE:.0f} s", flush=True)

        # soak
        if SOAK > 0:
            samples = []
            end = time.monotonic() + SOAK
            next_sample = time.monotonic()
            ops = 0
            while time.monotonic() < end:
                if time.monotonic() >= next_sample:
                    samples.append((proc_status(watcher, "VmRSS"), du_kib(index)))
                    print(f"soak sample: watcher RSS {samples[-1][0] / 1024:.1f} MiB, "
                          f"index {samples[-1][1] / 1024:.1f} MiB", flush=True)
                    next_sample += 30
                i = rng.randrange(FILES)
                path = os.path.join(tree, rel_of(i))
                kind = rng.choice(("edit", "rename", "delete"))
                if kind == "edit":
                    with open(path, "w") as f:
                        f.write(module_text(rng, i, salt=f"soak{ops}"))
                elif kind == "rename":
                    os.rename(path, path + ".moved.py")
                    time.sleep(0.2)
                    os.rename(path + ".moved.py", path)
                else:
                    text = open(path).read()
                    os.remove(path)
                    time.sleep(0.2)
                    with open(path, "w") as f:
                        f.write(text)
                ops += 1
                time.sleep(0.2)
            samples.append((proc_status(watcher, "VmRSS"), du_kib(index)))
            rss = [s[0] / 1024 for s in samples]
            disk = [s[1] / 1024 for s in samples]
            print(f"soak: {ops} changes over {SOAK:.0f} s; watcher RSS first {rss[0]:.1f}, "
                  f"max {max(rss):.1f}, last {rss[-1]:.1f} MiB; index first {disk[0]:.1f}, "
                  f"max {max(disk):.1f}, last {disk[-1]:.1f} MiB", flush=True)
    finally:
        if server:
            server.terminate()
            server.wait()
        shutil.rmtree(work, ignore_errors=True)


main()
