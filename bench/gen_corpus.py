"""Generate a synthetic BEIR corpus of any size with SciFact's term statistics.

    python3 bench/gen_corpus.py DOCS OUT.jsonl [--data ../shared/data] [--seed 7]
                                [--words bursty|independent]

The model is fitted on SciFact's corpus at every run (nothing fitted is stored):

- Each word's marginal law is a Zipf distribution over ranks, p(r) ~ r^-s, with s fitted by
  least squares on SciFact's rank-frequency curve (ranks 10 to 10,000). Rank r is SciFact's r-th
  most frequent word while SciFact has one, and a made-up word (`zq` + base-36 rank) past that, so
  common query words keep their real frequencies.
- The vocabulary grows with the corpus as Heaps' law says, V(n) = K n^b, with K and b fitted on
  prefixes of SciFact: the Zipf distribution is truncated at V(total words generated).
- Document lengths (in words) are drawn from SciFact's own, capped so that a document fits in one
  chunk of `grk ingest`'s default size (1,750 bytes): DOCS documents make about DOCS chunks.
- Words come in bursts (`--words bursty`, the default): a document is a Polya urn over the Zipf
  law. Its i-th word is a fresh Zipf draw with probability a / (a + i), else a copy of one of its
  own earlier words, picked uniformly. Every word keeps the Zipf marginal; what changes is how
  many documents a word's occurrences fall into. The concentration a is fitted so that, for the
  words of frequency ranks 100 to 5,000, occurrences per document holding the word match
  SciFact's (document frequency / collection frequency, about 0.68 there; independent draws give
  about 0.99, which spreads every mid-frequency word over a third more documents than real text
  does). `--words independent` draws every word afresh, the earlier model.

There is no topical structure beyond the bursts: the corpus is for measuring cost (posting-list
lengths, index size, latency), not relevance. Output is BEIR corpus JSONL (`_id`, `title`,
`text`), ready for `grk ingest --format beir`. Deterministic for a seed. Needs numpy.
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
# The frequency ranks (0-based, SciFact's order) the burst model is fitted on. The top hundred
# are function words, in nearly every document whatever the model; past 5,000 SciFact has too
# few occurrences per word to measure.
BAND = slice(99, 5000)


def fit(corpus: Path):
    """SciFact's vocabulary by frequency, the Zipf exponent, Heaps' K and b, and doc lengths."""
    counts = Counter()
    documents = Counter()
    lengths = []
    seen = set()
    heaps = []  # (tokens so far, distinct so far) at every document
    tokens = 0
    with corpus.open(encoding="utf-8") as lines:
        for line in lines:
            doc = json.loads(line)
            words = WORD.findall(f"{doc.get('title', '')} {doc.get('text', '')}".lower())
            counts.update(words)
            documents.update(set(words))
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
    spread = float(np.mean([documents[w] / counts[w] for w in vocabulary[BAND]]))
    return vocabulary, -slope, float(np.exp(log_k)), b, np.array(lengths), spread


def urn(rng, fresh, lens, a):
    """Words of documents of lengths `lens` from `fresh` Zipf draws (one per word, in order):
    a document's i-th word keeps its fresh draw with probability a / (a + i), else copies one of
    the document's earlier words, picked uniformly. `a = None` keeps every fresh draw."""
    if a is None:
        return fresh
    n = len(fresh)
    starts = np.repeat(np.cumsum(lens) - lens, lens)
    at = np.arange(n)
    i = at - starts
    copied = rng.random(n) >= a / (a + i)
    source = np.where(copied, starts + (rng.random(n) * i).astype(np.int64), at)
    # A copy may point at a copy: follow the pointers (by doubling) to a fresh draw.
    while True:
        further = source[source]
        if np.array_equal(further, source):
            return fresh[source]
        source = further


def spread_of(ranks, lens, size):
    """Mean document frequency / collection frequency over the ranks in BAND."""
    doc = np.repeat(np.arange(len(lens)), lens)
    pairs = np.unique(doc * (size + 1) + ranks)
    df = np.bincount(pairs % (size + 1), minlength=size + 1)[1:]
    cf = np.bincount(ranks, minlength=size + 1)[1:]
    band = slice(BAND.start, min(BAND.stop, size))
    held = cf[band] > 0
    return float(np.mean(df[band][held] / cf[band][held]))


def concentration(lengths, cdf, target, seed):
    """The urn's concentration that gives SciFact's spread (`target`) on documents of `lengths`
    (as many as SciFact has, as long as the generator makes them), by bisection on log a (the
    spread grows with a)."""
    low, high = np.log(1.0), np.log(1e5)
    for _ in range(24):
        mid = (low + high) / 2
        rng = np.random.default_rng(seed)
        fresh = draw(rng, cdf, int(lengths.sum()))
        ranks = urn(rng, fresh, lengths, float(np.exp(mid)))
        if spread_of(ranks, lengths, len(cdf)) < target:
            low = mid
        else:
            high = mid
    return float(np.exp((low + high) / 2))


def draw(rng, cdf, n):
    """`n` independent Zipf ranks (1-based)."""
    return np.searchsorted(cdf, rng.random(n), side="right") + 1


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
    parser.add_argument("--words", choices=("bursty", "independent"), default="bursty")
    args = parser.parse_args()

    vocabulary, s, k, b, lengths, spread = fit(args.data / "scifact" / "corpus.jsonl")
    lengths = np.clip(lengths[lengths > 0], 1, MAX_WORDS)
    a = None
    if args.words == "bursty":
        # Fitted on as many documents as SciFact has, with the lengths generated here.
        sample = lengths + TITLE_WORDS
        size = int(k * int(sample.sum()) ** b)
        cdf = np.cumsum(np.arange(1, size + 1, dtype=np.float64) ** -s)
        a = concentration(sample, cdf / cdf[-1], spread, args.seed)
    rng = np.random.default_rng(args.seed)
    doc_words = rng.choice(lengths, size=args.docs) + TITLE_WORDS
    total = int(doc_words.sum())
    size = int(k * total**b)
    cdf = np.cumsum(np.arange(1, size + 1, dtype=np.float64) ** -s)
    cdf /= cdf[-1]
    burst = "independent words" if a is None else f"urn concentration a={a:.1f}"
    print(
        f"zipf s={s:.3f}, heaps K={k:.2f} b={b:.3f}, SciFact df/cf {spread:.3f} over ranks "
        f"100-5000, {burst}: {args.docs} documents, {total} words, vocabulary {size} "
        f"({len(vocabulary)} from SciFact)",
        file=sys.stderr,
    )
    # Words as bytes, made once for every rank drawn: made-up words only when first needed.
    table = [w.encode() for w in vocabulary[:size]]
    with args.out.open("wb") as out:
        for start in range(0, args.docs, BATCH):
            lens = doc_words[start : start + BATCH]
            ranks = urn(rng, draw(rng, cdf, int(lens.sum())), lens, a)
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
