"""Generate a synthetic BEIR corpus of any size with SciFact's term statistics.

    python3 bench/gen_corpus.py DOCS OUT.jsonl [--data ../shared/data] [--seed 7]

The model is fitted on SciFact's corpus at every run (nothing fitted is stored):

- Words are drawn independently from a Zipf distribution over ranks, p(r) ~ r^-s, with s fitted
  by least squares on SciFact's rank-frequency curve (ranks 10 to 10,000). Rank r is SciFact's
  r-th most frequent word while SciFact has one, and a made-up word (`zq` + base-36 rank) past
  that, so common query words keep their real posting-list lengths.
- The vocabulary grows with the corpus as Heaps' law says, V(n) = K n^b, with K and b fitted on
  prefixes of SciFact: the Zipf distribution is truncated at V(total words generated).
- Document lengths (in words) are drawn from SciFact's own, capped so that a document fits in one
  chunk of `grk ingest`'s default size (1,750 bytes): DOCS documents make about DOCS chunks.

Words are independent of each other, so there is no topical structure: the corpus is for
measuring cost (posting-list lengths, index size, latency), not relevance. Output is BEIR
corpus JSONL (`_id`, `title`, `text`), ready for `grk ingest --format beir`. Deterministic for a
seed. Needs numpy.
"""

import argparse
import json
import re
import sys
from collections import Counter
from pathlib import Path

import numpy as np

WORD = re.compile(r"[A-Za-z][A-Za-z0-9-]*")
# Words per document at most: SciFact averages about 6.6 bytes per word with its space, so
# this keeps a generated document under the default chunk of 1,750 bytes.
MAX_WORDS = 220
TITLE_WORDS = 12
BATCH = 20_000


def fit(corpus: Path):
    """SciFact's vocabulary by frequency, the Zipf exponent, Heaps' K and b, and doc lengths."""
    counts = Counter()
    lengths = []
    seen = set()
    heaps = []  # (tokens so far, distinct so far) at every document
    tokens = 0
    with corpus.open(encoding="utf-8") as lines:
        for line in lines:
            doc = json.loads(line)
            words = WORD.findall(f"{doc.get('title', '')} {doc.get('text', '')}".lower())
            counts.update(words)
            seen.update(words)
            tokens += len(words)
            lengths.append(len(words))
            heaps.append((tokens, len(seen)))
    vocabulary = [word for word, _ in counts.most_common()]
    freq = np.array([counts[w] for w in vocabulary], dtype=np.float64)
    ranks = np.arange(1, len(freq) + 1, dtype=np.float64)
    window = slice(9, min(10_000, len(freq)))
    slope, _ = np.polyfit(np.log(ranks[window]), np.log(freq[window]), 1)
    n, v = np.array(heaps[len(heaps) // 10 :], dtype=np.float64).T
    b, log_k = np.polyfit(np.log(n), np.log(v), 1)
    return vocabulary, -slope, float(np.exp(log_k)), b, np.array(lengths)


def word(rank: int, vocabulary) -> str:
    """The word at 1-based `rank`: SciFact's while it has one, made up past that."""
    if rank <= len(vocabulary):
        return vocabulary[rank - 1]
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    out = ""
    while rank:
        rank, d = divmod(rank, 36)
        out = digits[d] + out
    return "zq" + out


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("docs", type=int)
    parser.add_argument("out", type=Path)
    parser.add_argument("--data", type=Path, default=Path("../shared/data"))
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()

    vocabulary, s, k, b, lengths = fit(args.data / "scifact" / "corpus.jsonl")
    rng = np.random.default_rng(args.seed)
    lengths = np.clip(lengths[lengths > 0], 1, MAX_WORDS)
    doc_words = rng.choice(lengths, size=args.docs) + TITLE_WORDS
    total = int(doc_words.sum())
    size = int(k * total**b)
    cdf = np.cumsum(np.arange(1, size + 1, dtype=np.float64) ** -s)
    cdf /= cdf[-1]
    print(
        f"zipf s={s:.3f}, heaps K={k:.2f} b={b:.3f}: {args.docs} documents, "
        f"{total} words, vocabulary {size} ({len(vocabulary)} from SciFact)",
        file=sys.stderr,
    )
    # Words as bytes, made once for every rank drawn: made-up words only when first needed.
    table = [w.encode() for w in vocabulary[:size]]
    with args.out.open("wb") as out:
        for start in range(0, args.docs, BATCH):
            lens = doc_words[start : start + BATCH]
            ranks = np.searchsorted(cdf, rng.random(int(lens.sum())), side="right") + 1
            top = int(ranks.max())
            while len(table) < top:
                table.append(word(len(table) + 1, vocabulary).encode())
            words = [table[r - 1] for r in ranks.tolist()]
            at = 0
            for i, n in enumerate(lens.tolist()):
                title = b" ".join(words[at : at + TITLE_WORDS]).decode()
                text = b" ".join(words[at + TITLE_WORDS : at + n]).decode()
                at += n
                record = {"_id": f"g{start + i}", "title": title, "text": text}
                out.write(json.dumps(record).encode() + b"\n")


if __name__ == "__main__":
    main()
