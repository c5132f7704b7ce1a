#!/usr/bin/env python3
"""A rerank server for groundkit's integration tests: the API shape Text Embeddings Inference,
Infinity, Jina and Cohere share, over a real cross-encoder run in numpy (no torch).

The model is a `BertForSequenceClassification` with one label in the layout `transformers`
saves (config.json, tokenizer.json, model.safetensors): the encoder of
tests/embed/embed_server.py, then the pooler (dense + tanh on the first token) and the
classifier. A (query, passage) pair is truncated at the model's length by cutting the passage
(`only_second`), or, for a query that leaves the passage no room, the longer of the two
(`longest_first`), as groundkit does.

    python rerank_server.py --model-dir DIR --host 127.0.0.1 --port 0 [--model-name NAME]

Once the model is loaded it prints one line, `listening on http://HOST:PORT`, to stdout.

- POST /rerank (Text Embeddings Inference): {"query": str, "texts": [str]} answers
  [{"index": i, "score": s}, ...], best first.
- POST /v1/rerank (Cohere, Jina, Infinity): {"model": str, "query": str, "documents": [str],
  "top_n"?: int} answers {"model": NAME, "results": [{"index": i, "relevance_score": s}, ...]},
  best first.
- GET /stats {"requests": n, "inputs": m}: n counts every POST to either route that arrived
  (injected failures included), m counts the passages scored.

Test hooks, on the command line: --require-key KEY (401 without `Authorization: Bearer KEY`),
--fail-first N --fail-status S (the first N POSTs fail with S and an error body carrying
`secret-provider-detail`), --delay-ms MS (every POST waits that long before answering).
"""
import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "embed"))

import numpy as np  # noqa: E402
from safetensors.numpy import load_file  # noqa: E402

import embed_server  # noqa: E402
from embed_server import SECRET_MARKER, BertEmbedder  # noqa: E402


class CrossEncoder(BertEmbedder):
    """BertForSequenceClassification with one label: the encoder, the pooler, the classifier."""

    def __init__(self, model_dir: Path):
        super().__init__(model_dir)
        raw = load_file(str(Path(model_dir) / "model.safetensors"))
        prefix = "bert." if "bert.pooler.dense.weight" in raw else ""
        self.pooler_w = raw[prefix + "pooler.dense.weight"].astype(np.float32).T
        self.pooler_b = raw[prefix + "pooler.dense.bias"].astype(np.float32)
        self.classifier_w = raw["classifier.weight"].astype(np.float32).T
        self.classifier_b = raw["classifier.bias"].astype(np.float32)
        if self.classifier_w.shape[1] != 1:
            raise embed_server.ModelError("a reranker's classifier has one label")

    def _pair(self, query: str, passage: str):
        for strategy in ("only_second", "longest_first"):
            self.tokenizer.enable_truncation(max_length=self.max_seq_length, strategy=strategy)
            try:
                return self.tokenizer.encode(query, passage, add_special_tokens=True)
            except Exception:
                continue
        raise ValueError("the pair cannot be truncated to the model's length")

    def score(self, query: str, passages):
        encodings = [self._pair(query, p) for p in passages]
        hidden = self._encode_batch(encodings)
        lengths = np.array([len(e.ids) for e in encodings])
        starts = np.concatenate([[0], np.cumsum(lengths)[:-1]])
        pooled = np.tanh(hidden[starts] @ self.pooler_w + self.pooler_b)
        return (pooled @ self.classifier_w + self.classifier_b)[:, 0]


class Handler(embed_server.Handler):
    server_version = "groundkit-rerank-test/1"

    def do_POST(self):
        state, args = self.state, self.state.args
        try:
            body = self._read_body()
        except (ValueError, OSError):
            self.close_connection = True
            self._error(400, "could not read the request body", "invalid_request_error")
            return
        path = self.path.split("?", 1)[0]
        if path not in ("/rerank", "/v1/rerank"):
            self._error(404, f"no route for POST {path}", "invalid_request_error", "not_found")
            return
        with state.lock:
            state.requests += 1
            inject = state.failures_left > 0
            if inject:
                state.failures_left -= 1
        if args.delay_ms:
            time.sleep(args.delay_ms / 1000.0)
        if inject:
            status = args.fail_status
            headers = {"Retry-After": "0"} if status == 429 else None
            self._error(status, f"injected failure ({SECRET_MARKER}: reranker pod 3 is down)",
                        "server_error", "injected", headers)
            return
        if args.require_key is not None:
            if self.headers.get("Authorization", "") != f"Bearer {args.require_key}":
                self._error(401, "invalid API key", "invalid_request_error", "invalid_api_key")
                return
        try:
            req = json.loads(body.decode("utf-8"))
            query = req["query"]
            texts = req["texts"] if path == "/rerank" else req["documents"]
            if not isinstance(query, str) or not isinstance(texts, list) or not texts \
                    or not all(isinstance(t, str) for t in texts):
                raise ValueError("query must be a string and the passages a non-empty list")
        except (UnicodeDecodeError, ValueError, KeyError, TypeError) as e:
            self._error(400, f"bad request: {e}", "invalid_request_error")
            return
        scores = state.embedder.score(query, texts)
        with state.lock:
            state.inputs += len(texts)
        order = sorted(range(len(texts)), key=lambda i: -float(scores[i]))
        if path == "/rerank":
            self._send_json(200, [{"index": i, "score": float(scores[i])} for i in order])
        else:
            top_n = req.get("top_n") or len(order)
            results = [{"index": i, "relevance_score": float(scores[i])} for i in order[:top_n]]
            self._send_json(200, {"model": args.model_name, "results": results})


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description="Rerank server (numpy cross-encoder).")
    ap.add_argument("--model-dir", required=True, type=Path)
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=0, help="0 picks a free port")
    ap.add_argument("--model-name", default="tiny-cross-encoder")
    ap.add_argument("--require-key", default=None, metavar="KEY")
    ap.add_argument("--fail-first", type=int, default=0, metavar="N")
    ap.add_argument("--fail-status", type=int, default=500, metavar="S")
    ap.add_argument("--delay-ms", type=int, default=0, metavar="MS")
    ap.add_argument("--verbose", action="store_true", help="log requests to stderr")
    args = ap.parse_args(argv)
    model = CrossEncoder(args.model_dir)
    model.score("warm up", ["warm up"])
    return embed_server.serve(Handler, embed_server.State(args, model), args.host, args.port)


if __name__ == "__main__":
    sys.exit(main())
