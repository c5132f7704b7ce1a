#!/usr/bin/env python3
"""Search speed and quality of groundkit against bm25s on BEIR SciFact, side by side in one run.

All engines: single thread, one query at a time, the 300 test queries, top-10 with document
content, in interleaved rounds of several passes each (groundkit, bm25s on its numba backend and
bm25s on its default numpy backend take turns, and which goes first rotates); each engine's figure
is the median over rounds of its median pass. Each round also records CPU time per query (bm25s:
this process's; groundkit: its whole search_qps process, start-up included), steadier than
wall-clock time when other work shares the cores. Quality: nDCG@10 on the same qrels (document
level).

bm25s is configured as its documentation serves queries (README "Tokenization" and "Quickstart",
examples/tokenizer_class.py and examples/index_and_retrieve_with_numba.py), over title + text:

- installed as `bm25s[core]`, the extra its README recommends (PyStemmer, numba, orjson, tqdm);
- one `bm25s.tokenization.Tokenizer(stemmer=Stemmer.Stemmer("english"), stopwords="en")` (its
  default lower-casing and splitter, the same as `bm25s.tokenize`), fitted once on the corpus with
  `tokenize(texts, update_vocab=True, return_as="ids")` and reused for every query with
  `tokenize([query], update_vocab=False, return_as="ids")`. Calling `bm25s.tokenize` per query
  instead builds a fresh vocabulary on every call (an earlier version of this script did that);
- `bm25s.BM25(backend="numba")` (row "bm25s"), the faster of its two documented retrieval
  backends, or `bm25s.BM25()`, whose backend is numpy (row "bm25s-numpy"); otherwise defaults
  (`method="lucene"`, k1=1.5, b=0.75). `backend_selection` stays "auto": the numba backend ignores
  it, and on the numpy backend it picks JAX only when JAX is installed, which it is not here;
- `retrieve(query_ids, corpus=records, k=10, n_threads=0, show_progress=False)`, the rest at their
  defaults (`sorted=True`, `return_as="tuple"`): n_threads=0 runs in the calling thread (the
  numba backend then calls its serial kernel; n_threads=1 would start a thread pool per call on
  the numpy backend), and `corpus=records` returns each hit's record, text included;
- every `show_progress` is False.

Usage (from the repository root):

    python3 bench/search_vs_bm25s.py [DATA_DIR] [--rounds R] [--passes N]

DATA_DIR defaults to ../shared/data/scifact. The script creates a virtual environment with
bm25s[core] under target/bench-venv on first use (and again when the package list changes),
builds the release binaries, ingests SciFact into target/bench-index, and prints a table and a
JSON line.
"""

import argparse
import json
import math
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VENV = ROOT / "target" / "bench-venv"
PY_PACKAGES = ["bm25s[core]==0.3.*", "PyStemmer", "numpy", "scipy"]


def ensure_venv():
    """Re-executes this script inside a venv that has bm25s[core]."""
    if os.environ.get("GROUNDKIT_BENCH_IN_VENV") == "1":
        return
    python = VENV / "bin" / "python"
    stamp = VENV / "groundkit-packages.txt"
    wanted = "\n".join(PY_PACKAGES) + "\n"
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True)
    if not stamp.exists() or stamp.read_text() != wanted:
        subprocess.run([str(python), "-m", "pip", "install", "-q", *PY_PACKAGES], check=True)
        stamp.write_text(wanted)
    env = dict(os.environ, GROUNDKIT_BENCH_IN_VENV="1")
    os.execve(str(python), [str(python), __file__, *sys.argv[1:]], env)


def load_beir(data_dir):
    corpus = []
    with open(data_dir / "corpus.jsonl", encoding="utf-8") as f:
        for line in f:
            if line.strip():
                corpus.append(json.loads(line))
    with open(data_dir / "queries.jsonl", encoding="utf-8") as f:
        queries = [json.loads(line) for line in f if line.strip()]
    qrels = {}
    with open(data_dir / "qrels" / "test.tsv", encoding="utf-8") as f:
        for line in f:
            cols = line.rstrip("\n").split("\t")
            if len(cols) < 3 or not cols[2].isdigit():
                continue
            qrels.setdefault(cols[0], {})[cols[1]] = int(cols[2])
    return corpus, queries, qrels


def ndcg10(ranked, judged):
    dcg = sum(judged.get(d, 0) / math.log2(i + 2) for i, d in enumerate(ranked[:10]))
    ideal = sorted((g for g in judged.values() if g > 0), reverse=True)[:10]
    idcg = sum(g / math.log2(i + 2) for i, g in enumerate(ideal))
    return dcg / idcg if idcg else 0.0


def load_average():
    with open("/proc/loadavg") as f:
        return [float(x) for x in f.read().split()[:3]]


class Bm25s:
    """bm25s as its documentation serves queries one at a time (module docstring)."""

    def __init__(self, corpus, backend):
        import bm25s
        import Stemmer
        from bm25s.tokenization import Tokenizer

        texts = [(d.get("title", "") + " " + d.get("text", "")).strip() for d in corpus]
        ids = [d["_id"] for d in corpus]
        self.tokenizer = Tokenizer(stemmer=Stemmer.Stemmer("english"), stopwords="en")
        # Fitting adds every corpus word to the vocabulary; with update_vocab=False a query adds no
        # token id (it only caches the stems of words the corpus lacks).
        corpus_ids = self.tokenizer.tokenize(texts, update_vocab=True, return_as="ids",
                                             show_progress=False)
        self.retriever = bm25s.BM25(backend=backend)
        self.retriever.index(corpus_ids, show_progress=False)
        # "with content": results are the corpus records themselves.
        self.records = [{"id": i, "text": t} for i, t in zip(ids, texts)]
        self.config = {
            "version": bm25s.__version__,
            "backend": self.retriever.backend,
            "method": self.retriever.method,
            "k1": self.retriever.k1,
            "b": self.retriever.b,
            "tokenizer": "Tokenizer(stemmer=english, stopwords=en), fitted once on the corpus",
            "retrieve": "k=10, corpus=records, n_threads=0, show_progress=False, "
                        "sorted=True, return_as=tuple",
        }

    def search(self, query, k=10):
        tokens = self.tokenizer.tokenize([query], update_vocab=False, return_as="ids",
                                         show_progress=False)
        docs, _scores = self.retriever.retrieve(tokens, corpus=self.records, k=k, n_threads=0,
                                                show_progress=False)
        return docs[0]

    def passes(self, queries, passes):
        """Queries/second of each pass, and the CPU microseconds per query over all of them."""
        qps = []
        cpu = time.process_time()
        for _ in range(passes):
            started = time.perf_counter()
            for q in queries:
                self.search(q["text"])
            qps.append(len(queries) / (time.perf_counter() - started))
        return qps, (time.process_time() - cpu) * 1e6 / (passes * len(queries))


def prepare_groundkit(data_dir):
    subprocess.run(["cargo", "build", "--release", "-q", "-p", "groundkit-server", "--bin", "grk"],
                   cwd=ROOT, check=True)
    subprocess.run(["cargo", "build", "--release", "-q", "-p", "groundkit-bench", "--bin",
                    "search_qps"], cwd=ROOT, check=True)
    grk = ROOT / "target" / "release" / "grk"
    index = ROOT / "target" / "bench-index"
    subprocess.run([str(grk), "--index-dir", str(index), "--base-dir", str(data_dir), "ingest",
                    "--collection", "scifact", "--format", "beir", "--json",
                    str(data_dir / "corpus.jsonl")], check=True, stdout=subprocess.DEVNULL)
    ev = subprocess.run([str(grk), "--index-dir", str(index), "eval", "--collection", "scifact",
                         "--queries", str(data_dir / "queries.jsonl"), "--qrels",
                         str(data_dir / "qrels" / "test.tsv"), "--json"],
                        check=True, capture_output=True, text=True)
    return index, json.loads(ev.stdout)


def children_cpu():
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def groundkit_passes(index, data_dir, passes, queries):
    """search_qps's report, with the CPU microseconds per query of the whole process (its start
    and the opening of the collection included, so slightly over the searches' own)."""
    cpu = children_cpu()
    out = subprocess.run([str(ROOT / "target" / "release" / "search_qps"), str(index),
                          "scifact", str(data_dir / "queries.jsonl"), str(passes)],
                         check=True, capture_output=True, text=True)
    report = json.loads(out.stdout)
    report["cpu_us_per_query"] = (children_cpu() - cpu) * 1e6 / (passes * len(queries))
    return report


def main():
    ensure_venv()
    parser = argparse.ArgumentParser()
    parser.add_argument("data_dir", nargs="?", default=str(ROOT.parent / "shared" / "data" / "scifact"))
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--passes", type=int, default=5, help="passes per engine in each round")
    args = parser.parse_args()
    data_dir = Path(args.data_dir).resolve()
    corpus, queries, qrels = load_beir(data_dir)

    index, report = prepare_groundkit(data_dir)
    theirs = {"bm25s": Bm25s(corpus, "numba"), "bm25s-numpy": Bm25s(corpus, "numpy")}
    quality = {"groundkit": report["ndcg_at_10"]}
    for name, engine in theirs.items():  # the first search also compiles numba's kernels
        scores = [ndcg10([d["id"] for d in engine.search(q["text"])], qrels[q["_id"]])
                  for q in queries if q["_id"] in qrels]
        quality[name] = sum(scores) / len(scores)

    names = ["groundkit", *theirs]
    load_before = load_average()
    rounds = []
    for r in range(args.rounds):
        row = {}
        for name in names[r % len(names):] + names[:r % len(names)]:
            if name == "groundkit":
                g = groundkit_passes(index, data_dir, args.passes, queries)
                row[name] = {"qps": g["passes_qps"], "cpu_us": g["cpu_us_per_query"],
                             "p50_ms": g["p50_ms"]}
            else:
                qps, cpu_us = theirs[name].passes(queries, args.passes)
                row[name] = {"qps": qps, "cpu_us": cpu_us}
        rounds.append(row)
        print(f"round {r + 1}: " + "  ".join(
            f"{n} {statistics.median(row[n]['qps']):6.0f}" for n in names) + " queries/s",
            file=sys.stderr)
    load_after = load_average()

    qps = {n: statistics.median(statistics.median(r[n]["qps"]) for r in rounds) for n in names}
    cpu = {n: statistics.median(r[n]["cpu_us"] for r in rounds) for n in names}
    round_ratios = {n: [statistics.median(r["groundkit"]["qps"]) / statistics.median(r[n]["qps"])
                        for r in rounds] for n in theirs}
    print(f"{args.rounds} interleaved rounds of {args.passes} passes over {len(queries)} queries; "
          f"load average {load_before[0]:.2f} before, {load_after[0]:.2f} after")
    print(f"{'engine':<12} {'median q/s':>11} {'CPU us/query':>13} {'nDCG@10':>8}")
    for n in names:
        print(f"{n:<12} {qps[n]:>11.1f} {cpu[n]:>13.1f} {quality[n]:>8.4f}")
    for n in theirs:
        rr = round_ratios[n]
        print(f"groundkit / {n}: {qps['groundkit'] / qps[n]:.2f}x queries/s (per round "
              f"{min(rr):.2f}x-{max(rr):.2f}x, median {statistics.median(rr):.2f}x); "
              f"CPU per query, {n} / groundkit: {cpu[n] / cpu['groundkit']:.2f}x")
    print(json.dumps({
        "queries": len(queries), "rounds": args.rounds, "passes_per_round": args.passes,
        "load_before": load_before, "load_after": load_after,
        "groundkit": {"median_qps": qps["groundkit"], "cpu_us_per_query": cpu["groundkit"],
                      "ndcg_at_10": report["ndcg_at_10"], "recall_at_100": report["recall_at_100"],
                      "mrr_at_10": report["mrr_at_10"],
                      "p50_ms": statistics.median(r["groundkit"]["p50_ms"] for r in rounds)},
        **{n: {"median_qps": qps[n], "cpu_us_per_query": cpu[n], "ndcg_at_10": quality[n],
               "ratio": qps["groundkit"] / qps[n], "cpu_ratio": cpu[n] / cpu["groundkit"],
               "round_ratios": round_ratios[n], **theirs[n].config} for n in theirs},
        "rounds_detail": rounds,
    }))


if __name__ == "__main__":
    main()
