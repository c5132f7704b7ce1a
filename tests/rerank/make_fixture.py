#!/usr/bin/env python3
"""Make the tiny cross-encoder fixture and its golden logits (run once; the output is committed).

    python tests/rerank/make_fixture.py OUT_DIR GOLDEN_JSON

Needs torch and transformers (bench/.venv-st has both). Writes, into OUT_DIR, a randomly
initialised BertForSequenceClassification with one label (2 layers, hidden size 32, 4 heads,
64 positions) and its WordPiece tokenizer, in the standard layout `save_pretrained` produces
(config.json, model.safetensors, tokenizer.json, vocab.txt, ...). The vocabulary is every
lowercase letter and digit, alone and as a `##` continuation, plus common English words, so any
ASCII text tokenizes without [UNK].

GOLDEN_JSON gets the logits `transformers` computes for a few dozen (query, passage) pairs,
tokenized the way groundkit tokenizes them: the passage is truncated to fit the 64 positions
(`only_second`); a query too long for that is truncated with the passage (`longest_first`).
Pairs include passages far longer than 64 tokens and a query longer than 64 tokens.
"""
import json
import string
import sys
from pathlib import Path

import torch
from transformers import BertConfig, BertForSequenceClassification, BertTokenizerFast

MAX_POSITIONS = 64
WORDS = """the of and to in is that for it as was with be by on not he this are or his from at
which but have an they you were her she there been one all we their has would when if so no will
what can out other about more into some time could them only then do these two may first any
like now my over such our man me even most made after also did many before must through back
years where much your way well down should because each just those people how too little state
good very make world still own see men work long get here between both life being under never
day same another know while last might us great old year off come since against go came right
used take three sleep jet lag travel circadian rhythm disruption light melatonin bone cancer
cell cells protein gene genes patients risk study studies treatment disease blood heart brain
vitamin dose effect effects trial clinical mice human immune infection virus""".split()


def vocabulary():
    special = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    chars = list(string.ascii_lowercase + string.digits)
    punctuation = list(".,;:!?'\"()-/%")
    words = sorted(set(WORDS) - set(chars))
    return special + chars + ["##" + c for c in chars] + punctuation + words


def pairs():
    passage = ("Jet lag is a circadian rhythm disruption after travel across time zones; light "
               "and melatonin help the body clock adjust. ")
    long_passage = " ".join([passage] * 6)
    long_query = " ".join(["what helps with jet lag after long travel"] * 8)
    queries = ["what helps with jet lag", "bone cancer treatment", "vitamin d dose"]
    passages = [
        passage,
        "Bone cancer patients in the clinical trial received a new treatment.",
        "The study found no effect of vitamin D on heart disease risk.",
        "Mice with the gene had a stronger immune response to the virus.",
        "Sleep and light",
        "x",
        long_passage,
        "Zebrafish 42 qwerty unknownword hyphen-ated (parenthetical) 99%.",
    ]
    out = [(q, p) for q in queries for p in passages]
    out += [(long_query, passage), (long_query, long_passage), ("", passage)]
    return out


def tokenize(tokenizer, query, passage):
    kwargs = dict(max_length=MAX_POSITIONS, return_tensors="pt")
    try:
        return tokenizer(query, passage, truncation="only_second", **kwargs)
    except Exception:
        return tokenizer(query, passage, truncation="longest_first", **kwargs)


def main(out_dir: Path, golden: Path):
    out_dir.mkdir(parents=True, exist_ok=True)
    vocab_file = out_dir / "vocab.txt"
    vocab_file.write_text("\n".join(vocabulary()) + "\n", encoding="utf-8")
    vocab = {token: i for i, token in enumerate(vocabulary())}
    tokenizer = BertTokenizerFast(vocab=vocab, do_lower_case=True, model_max_length=MAX_POSITIONS)
    if tokenizer.backend_tokenizer.get_vocab_size() != len(vocab):
        sys.exit("the tokenizer did not take the vocabulary")
    torch.manual_seed(20261203)
    config = BertConfig(vocab_size=len(vocabulary()), hidden_size=32, num_hidden_layers=2,
                        num_attention_heads=4, intermediate_size=64,
                        max_position_embeddings=MAX_POSITIONS, type_vocab_size=2,
                        num_labels=1, initializer_range=0.2,
                        architectures=["BertForSequenceClassification"])
    model = BertForSequenceClassification(config).eval()
    model.save_pretrained(out_dir, safe_serialization=True)
    tokenizer.save_pretrained(out_dir)

    rows = []
    with torch.no_grad():
        for query, passage in pairs():
            enc = tokenize(tokenizer, query, passage)
            logit = model(**enc).logits[0, 0].item()
            rows.append({"query": query, "passage": passage, "logit": logit,
                         "tokens": int(enc["input_ids"].shape[1]),
                         "query_tokens": int((enc["token_type_ids"][0] == 0).sum()) - 2})
    golden.write_text(json.dumps({"max_positions": MAX_POSITIONS, "pairs": rows}, indent=1) + "\n",
                      encoding="utf-8")
    spread = max(r["logit"] for r in rows) - min(r["logit"] for r in rows)
    print(f"{len(rows)} pairs, logit spread {spread:.4f}")


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]))
