#!/usr/bin/env python3
"""A cross-encoder the size of ms-marco-MiniLM-L-6-v2, for timing reranking only.

    python bench/make_rerank_model.py MINILM_DIR OUT_DIR

No cross-encoder weights install from the package registries this benchmark may use, so this
builds one with the same architecture and cost: the encoder of all-MiniLM-L6-v2 (MINILM_DIR,
6 layers, hidden size 384, 12 heads, 512 positions; ms-marco-MiniLM-L-6-v2 is the same shape)
under a randomly initialised pooler and one-label classifier, saved in the layout `transformers`
uses for BertForSequenceClassification. Its scores rank nothing meaningfully: it is for latency,
never for quality. Needs numpy and safetensors (.venv-embed has both).
"""
import json
import shutil
import sys
from pathlib import Path

import numpy as np
from safetensors.numpy import load_file, save_file


def main(src: Path, out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    config = json.loads((src / "config.json").read_text(encoding="utf-8"))
    config["architectures"] = ["BertForSequenceClassification"]
    config["id2label"] = {"0": "LABEL_0"}
    config["label2id"] = {"LABEL_0": 0}
    (out / "config.json").write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")
    for name in ("tokenizer.json", "vocab.txt"):
        if (src / name).exists():
            shutil.copyfile(src / name, out / name)
    (out / "tokenizer_config.json").write_text(
        json.dumps({"model_max_length": config["max_position_embeddings"]}) + "\n",
        encoding="utf-8")
    weights = load_file(str(src / "model.safetensors"))
    tensors = {("bert." + k if not k.startswith("bert.") else k): v for k, v in weights.items()}
    hidden = config["hidden_size"]
    rng = np.random.default_rng(20261203)
    tensors["bert.pooler.dense.weight"] = rng.normal(0, 0.02, (hidden, hidden)).astype(np.float32)
    tensors["bert.pooler.dense.bias"] = np.zeros(hidden, dtype=np.float32)
    tensors["classifier.weight"] = rng.normal(0, 0.02, (1, hidden)).astype(np.float32)
    tensors["classifier.bias"] = np.zeros(1, dtype=np.float32)
    save_file(tensors, str(out / "model.safetensors"))
    print(out)


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]))
