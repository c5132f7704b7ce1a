"""A watched collection published to an OpenSearch cluster: save to searchable for a one-file change.

Run by bench/cluster_watch.sh, which starts the cluster:

    python3 bench/cluster_watch.py GRK URL CORPUS_DIR INDEX_DIR [ROUNDS (5)]

CORPUS_DIR holds BEIR files `pNN/corpus.jsonl`. `grk ingest --watch --backend opensearch` follows
them: its first ingest and publish (every chunk loaded) are timed, then each round rewrites one
record of one file (a new word in its text, the file written aside and renamed over) and times
until a `grk serve` of the cluster finds the word over REST (polled every 20 ms), with what the
watcher's publish reported (chunks sent, seconds of the ingest).
"""

import json
import os
import random
import re
import subprocess
import sys
import threading
import time
import urllib.request
from queue import Queue

GRK, URL, CORPUS, INDEX = sys.argv[1:5]
ROUNDS = int(sys.argv[5]) if len(sys.argv) > 5 else 5


def post(port, body):
    req = urllib.request.Request(
        f"http://127.0.0.1:{port}/search", data=json.dumps(body).encode(),
        headers={"content-type": "application/json"})
    with urllib.request.urlopen(req, timeout=60) as resp:
        return json.loads(resp.read())


def main():
    parts = sorted(os.path.join(CORPUS, d, "corpus.jsonl") for d in os.listdir(CORPUS))
    common = [GRK, "--index-dir", INDEX, "--base-dir", CORPUS, "--opensearch-url", URL]
    started = time.monotonic()
    watcher = subprocess.Popen(
        common + ["ingest", "-c", "grow", "--format", "beir", "--backend", "opensearch",
                  "--watch", "--json", "--stop-on-eof"] + parts,
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    lines = Queue()
    threading.Thread(target=lambda: [lines.put(json.loads(l)) for l in watcher.stdout],
                     daemon=True).start()
    first = lines.get()
    print(f"first ingest and full publish: {time.monotonic() - started:.1f} s, "
          f"{first['chunks']} chunks, published {first['published']}", flush=True)

    server = subprocess.Popen(common[:5] + ["--opensearch-url", URL, "serve", "--port", "0"],
                              stderr=subprocess.PIPE, text=True,
                              env=dict(os.environ, GROUNDKIT_LOG="info"))
    port = None
    for line in server.stderr:
        m = re.search(r"serving REST on http://[^:]+:(\d+)", line)
        if m:
            port = int(m.group(1))
            break
    threading.Thread(target=lambda: [None for _ in server.stderr], daemon=True).start()

    rng = random.Random(11)
    totals = []
    try:
        for r in range(ROUNDS):
            path = parts[rng.randrange(len(parts))]
            with open(path) as f:
                records = f.readlines()
            i = rng.randrange(len(records))
            record = json.loads(records[i])
            word = f"qzx{r}k{rng.randrange(10**9)}"
            record["text"] = f"{record.get('text', '')} {word}"
            records[i] = json.dumps(record) + "\n"
            with open(path + ".tmp", "w") as f:
                f.writelines(records)
            os.rename(path + ".tmp", path)
            t0 = time.monotonic()
            while not post(port, {"collection": "grow", "query": word, "top_k": 1})["results"]:
                time.sleep(0.02)
                if time.monotonic() - t0 > 600:
                    raise SystemExit(f"{word} never found")
            total = time.monotonic() - t0
            totals.append(total)
            report = None
            while report is None or "published" not in report:
                report = lines.get()
            print(f"round {r}: searchable after {total:.2f} s; ingest {report['seconds']:.2f} s, "
                  f"{report['updated']} updated; published {report['published']}", flush=True)
            time.sleep(1)
    finally:
        server.terminate()
        watcher.stdin.close()
        watcher.wait()
    totals.sort()
    print(f"one-record change at {first['chunks']} chunks, save to searchable through the "
          f"cluster: median {totals[len(totals) // 2]:.2f} s, min {totals[0]:.2f} s, "
          f"max {totals[-1]:.2f} s over {ROUNDS} rounds", flush=True)


main()
