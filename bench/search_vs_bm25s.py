#!/usr/bin/env python3
"""Search speed and quality of groundkit against bm25s on BEIR SciFact, side by side in one run.

Both engines: single thread, one query at a time, the 300 test queries, top-10 with document
content, several passes, median queries/second. Quality: nDCG@10 on the same qrels (document
level). bm25s runs with its documented defaults (English stop words, PyStemmer English stemmer,
method "lucene", k1=1.5, b=0.75) on title + text.

Usage (from the repository root):

    python3 bench/search_vs_bm25s.py [DATA_DIR] [--passes N]

DATA_DIR defaults to ../shared/data/scifact. The script creates a virtual environment with bm25s
and PyStemmer under target/bench-venv on first use, builds the release binaries, ingests SciFact
into target/bench-index, and prints a table and a JSON line.
"""

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VENV = ROOT / "target" / "bench-venv"
PY_PACKAGES = ["bm25s==0.3.*", "PyStemmer", "numpy", "scipy"]


def ensure_venv():
    """Re-executes this script inside a venv that has bm25s."""
    if os.environ.get("GROUNDKIT_BENCH_IN_VENV") == "1":
        return
    python = VENV / "bin" / "python"
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True)
        subprocess.run([str(python), "-m", "pip", "install", "-q", *PY_PACKAGES], check=True)
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
        for i, line in enumerate(f):
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


def run_bm25s(corpus, queries, qrels, passes):
    import bm25s
    import Stemmer

    stemmer = Stemmer.Stemmer("english")
    texts = [(d.get("title", "") + " " + d.get("text", "")).strip() for d in corpus]
    ids = [d["_id"] for d in corpus]
    retriever = bm25s.BM25()
    retriever.index(bm25s.tokenize(texts, stopwords="en", stemmer=stemmer, show_progress=False),
                    show_progress=False)
    # "with content": results are the corpus records themselves.
    records = [{"id": i, "text": t} for i, t in zip(ids, texts)]

    def one(query, k):
        tokens = bm25s.tokenize(query, stopwords="en", stemmer=stemmer, show_progress=False)
        docs, _scores = retriever.retrieve(tokens, corpus=records, k=k, n_threads=1,
                                           show_progress=False)
        return docs[0]

    qps = []
    for _ in range(passes):
        started = time.perf_counter()
        for q in queries:
            one(q["text"], 10)
        qps.append(len(queries) / (time.perf_counter() - started))
    scores = [ndcg10([d["id"] for d in one(q["text"], 10)], qrels[q["_id"]])
              for q in queries if q["_id"] in qrels]
    return {"engine": "bm25s", "passes_qps": qps, "median_qps": statistics.median(qps),
            "ndcg_at_10": sum(scores) / len(scores)}


def run_groundkit(data_dir, passes):
    subprocess.run(["cargo", "build", "--release", "-q", "-p", "groundkit-server", "--bin", "grk"],
                   cwd=ROOT, check=True)
    subprocess.run(["cargo", "build", "--release", "-q", "-p", "groundkit-bench", "--bin",
                    "search_qps"], cwd=ROOT, check=True)
    grk = ROOT / "target" / "release" / "grk"
    index = ROOT / "target" / "bench-index"
    subprocess.run([str(grk), "--index-dir", str(index), "--base-dir", str(data_dir), "ingest",
                    "--collection", "scifact", "--format", "beir", "--json",
                    str(data_dir / "corpus.jsonl")], check=True, stdout=subprocess.DEVNULL)
    out = subprocess.run([str(ROOT / "target" / "release" / "search_qps"), str(index),
                          "scifact", str(data_dir / "queries.jsonl"), str(passes)],
                         check=True, capture_output=True, text=True)
    result = json.loads(out.stdout)
    ev = subprocess.run([str(grk), "--index-dir", str(index), "eval", "--collection", "scifact",
                         "--queries", str(data_dir / "queries.jsonl"), "--qrels",
                         str(data_dir / "qrels" / "test.tsv"), "--json"],
                        check=True, capture_output=True, text=True)
    report = json.loads(ev.stdout)
    result["ndcg_at_10"] = report["ndcg_at_10"]
    result["recall_at_100"] = report["recall_at_100"]
    result["mrr_at_10"] = report["mrr_at_10"]
    return result


def main():
    ensure_venv()
    parser = argparse.ArgumentParser()
    parser.add_argument("data_dir", nargs="?", default=str(ROOT.parent / "shared" / "data" / "scifact"))
    parser.add_argument("--passes", type=int, default=5)
    args = parser.parse_args()
    data_dir = Path(args.data_dir).resolve()
    corpus, queries, qrels = load_beir(data_dir)
    ours = run_groundkit(data_dir, args.passes)
    theirs = run_bm25s(corpus, queries, qrels, args.passes)
    ratio = ours["median_qps"] / theirs["median_qps"]
    print(f"{'engine':<10} {'median q/s':>12} {'nDCG@10':>9}")
    for r in (ours, theirs):
        print(f"{r['engine']:<10} {r['median_qps']:>12.1f} {r['ndcg_at_10']:>9.4f}")
    print(f"speed ratio groundkit / bm25s: {ratio:.2f}x")
    print(json.dumps({"groundkit": ours, "bm25s": theirs, "ratio": ratio}))


if __name__ == "__main__":
    main()
