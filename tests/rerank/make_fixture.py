#!/usr/bin/env python3
"""Make a tiny cross-encoder fixture and its golden logits (run once; the output is committed).

    python tests/rerank/make_fixture.py bert OUT_DIR GOLDEN_JSON
    python tests/rerank/make_fixture.py xlm-roberta OUT_DIR GOLDEN_JSON

Needs torch and transformers (bench/.venv-st has both). Writes, into OUT_DIR, a randomly
initialised model with one label (2 layers, hidden size 32, 4 heads, 64 tokens) and its
tokenizer, in the standard layout `save_pretrained` produces (config.json, model.safetensors,
tokenizer.json, ...):

- `bert`: BertForSequenceClassification (the family of ms-marco-MiniLM-L-6-v2) with a WordPiece
  tokenizer. The vocabulary is every lowercase letter and digit, alone and as a `##`
  continuation, plus common English words, so any ASCII text tokenizes without [UNK].
- `xlm-roberta`: XLMRobertaForSequenceClassification (the family of bge-reranker-base and
  bge-reranker-v2-m3) with a Unigram tokenizer over the same words and characters, pairs as
  `<s> A </s></s> B </s>`, positions counted from the padding id + 1 as RoBERTa does.

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
from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors
from transformers import (BertConfig, BertForSequenceClassification, BertTokenizerFast,
                          PreTrainedTokenizerFast, XLMRobertaConfig,
                          XLMRobertaForSequenceClassification)

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


def bert(out_dir: Path):
    vocab = {token: i for i, token in enumerate(vocabulary())}
    tokenizer = BertTokenizerFast(vocab=vocab, do_lower_case=True, model_max_length=MAX_POSITIONS)
    if tokenizer.backend_tokenizer.get_vocab_size() != len(vocab):
        sys.exit("the tokenizer did not take the vocabulary")
    (out_dir / "vocab.txt").write_text("\n".join(vocabulary()) + "\n", encoding="utf-8")
    config = BertConfig(vocab_size=len(vocab), hidden_size=32, num_hidden_layers=2,
                        num_attention_heads=4, intermediate_size=64,
                        max_position_embeddings=MAX_POSITIONS, type_vocab_size=2,
                        num_labels=1, initializer_range=0.2,
                        architectures=["BertForSequenceClassification"])
    return tokenizer, BertForSequenceClassification(config)


def xlm_roberta(out_dir: Path):
    special = ["<s>", "<pad>", "</s>", "<unk>"]
    chars = list(string.ascii_lowercase + string.digits) + list(".,;:!?'\"()-/%")
    words = sorted(set(WORDS) - set(chars))
    pieces = ([(t, 0.0) for t in special] + [("\u2581" + w, -2.0) for w in words]
              + [("\u2581", -3.0)] + [(c, -5.0) for c in chars])
    backend = Tokenizer(models.Unigram(pieces, unk_id=3))
    backend.normalizer = normalizers.Sequence([normalizers.NFKC(), normalizers.Lowercase()])
    backend.pre_tokenizer = pre_tokenizers.Metaspace()
    backend.decoder = decoders.Metaspace()
    backend.post_processor = processors.TemplateProcessing(
        single="<s> $A </s>", pair="<s> $A </s> </s> $B </s>",
        special_tokens=[("<s>", 0), ("</s>", 2)])
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=backend, bos_token="<s>", eos_token="</s>", sep_token="</s>",
        cls_token="<s>", unk_token="<unk>", pad_token="<pad>", model_max_length=MAX_POSITIONS)
    config = XLMRobertaConfig(vocab_size=len(pieces), hidden_size=32, num_hidden_layers=2,
                              num_attention_heads=4, intermediate_size=64,
                              max_position_embeddings=MAX_POSITIONS + 2, type_vocab_size=1,
                              pad_token_id=1, bos_token_id=0, eos_token_id=2,
                              layer_norm_eps=1e-5, num_labels=1, initializer_range=0.2,
                              architectures=["XLMRobertaForSequenceClassification"])
    return tokenizer, XLMRobertaForSequenceClassification(config)


def main(kind: str, out_dir: Path, golden: Path):
    out_dir.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(20261203)
    tokenizer, model = {"bert": bert, "xlm-roberta": xlm_roberta}[kind](out_dir)
    model = model.eval()
    model.save_pretrained(out_dir, safe_serialization=True)
    tokenizer.save_pretrained(out_dir)

    rows = []
    with torch.no_grad():
        for query, passage in pairs():
            enc = tokenize(tokenizer, query, passage)
            logit = model(**enc).logits[0, 0].item()
            ids = enc["input_ids"][0].tolist()
            # The query's tokens: between the first token and the first separator.
            query_tokens = ids.index(tokenizer.sep_token_id) - 1
            rows.append({"query": query, "passage": passage, "logit": logit,
                         "tokens": len(ids), "query_tokens": query_tokens})
    golden.write_text(json.dumps({"max_positions": MAX_POSITIONS, "pairs": rows}, indent=1) + "\n",
                      encoding="utf-8")
    spread = max(r["logit"] for r in rows) - min(r["logit"] for r in rows)
    print(f"{len(rows)} pairs, logit spread {spread:.4f}")


if __name__ == "__main__":
    main(sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3]))
