#!/usr/bin/env python3
"""An OpenAI-compatible embeddings server for groundkit's integration tests.

It runs a real sentence-transformers model of the BERT family (all-MiniLM-L6-v2 in the tests)
on the CPU, with the forward pass written in numpy: no torch. Everything the pipeline needs is
read from the model directory:

- config.json: layer count, heads, hidden size, LayerNorm epsilon, activation;
- model.safetensors: the weights (loaded as numpy arrays);
- tokenizer.json: the tokenizer, used through the `tokenizers` library. Its own truncation
  and padding settings are replaced: texts are truncated at max_seq_length from
  sentence_bert_config.json (as sentence-transformers does) and padded only to the longest
  text of a batch;
- modules.json and 1_Pooling/config.json: the pooling mode, and whether a Normalize module
  follows it.

    python embed_server.py --model-dir DIR --host 127.0.0.1 --port 0 [--model-name NAME]

Once the model is loaded it prints one line, `listening on http://HOST:PORT`, to stdout.

HTTP surface (standard library only):

- POST /v1/embeddings  {"model": str, "input": str | [str], "encoding_format"?: "float" |
  "base64"} answers {"object": "list", "data": [{"object": "embedding", "index": i,
  "embedding": [...]}], "model": NAME, "usage": {"prompt_tokens": n, "total_tokens": n}}.
  Bad input is a 400 with an OpenAI-style {"error": {"message", "type", ...}} body.
- GET /stats  {"requests": n, "inputs": m}: n counts every POST to /v1/embeddings that
  arrived (injected failures, redirects and refusals included), m counts the texts embedded.
- Anything else: 404.

Test hooks, all set on the command line:

- --require-key KEY: a POST without `Authorization: Bearer KEY` gets a 401.
- --fail-first N --fail-status S: the first N POSTs to /v1/embeddings get status S and an
  error body whose message contains `secret-provider-detail` (with `Retry-After: 0` when S is
  429).
- --redirect-to URL: every POST to /v1/embeddings gets a 307 to URL, with an empty body.
- --overflow-after N: after N answered POSTs, the first value of every vector is 1e39 (a
  finite JSON number, infinite as a 32-bit float).

A POST is handled in this order: counted, redirected, failed on purpose, key checked, embedded.
"""
import argparse
import base64
import http.server
import json
import math
import os
import sys
import threading
from pathlib import Path

# One BLAS thread unless the caller says otherwise: attention is hundreds of small matrix
# products, which a multi-threaded OpenBLAS runs many times slower when the cores are busy.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402
from safetensors.numpy import load_file  # noqa: E402
from tokenizers import Tokenizer  # noqa: E402

BATCH_SIZE = 32
SECRET_MARKER = "secret-provider-detail"


# --------------------------------------------------------------------------------------------
# Model


class ModelError(Exception):
    pass


def _read_json(path: Path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


# erf for GELU: piecewise cubic Hermite interpolation of math.erf on [0, 6] with step 1/256,
# using the exact derivative 2/sqrt(pi) * exp(-z^2) at the knots. The interpolation error is
# below 3e-12 everywhere (erf(6) already equals 1 to double precision), far under float32's
# resolution, and it is several times faster than calling math.erf element by element.
_ERF_STEP = 1.0 / 256.0
_ERF_LIMIT = 6.0


def _erf_cubic_coefficients():
    z = np.arange(int(_ERF_LIMIT / _ERF_STEP) + 1) * _ERF_STEP
    f = np.array([math.erf(v) for v in z])
    d = 2.0 / math.sqrt(math.pi) * np.exp(-z * z) * _ERF_STEP  # derivative per unit of t
    f0, f1, d0, d1 = f[:-1], f[1:], d[:-1], d[1:]
    c3 = 2.0 * (f0 - f1) + d0 + d1
    c2 = 3.0 * (f1 - f0) - 2.0 * d0 - d1
    return [np.ascontiguousarray(c) for c in (c3, c2, d0, f0)]


_ERF_COEFFS = _erf_cubic_coefficients()
_ERF_CELLS = len(_ERF_COEFFS[0])


def erf(z: np.ndarray) -> np.ndarray:
    z = np.asarray(z, dtype=np.float64)
    # Position in cells; beyond the table the last cell's end (erf(6) = 1.0) is used.
    a = np.minimum(np.abs(z) * (1.0 / _ERF_STEP), _ERF_CELLS * (1.0 - 1e-12))
    cell = a.astype(np.intp)
    t = a - cell
    r = _ERF_COEFFS[0].take(cell)
    for c in _ERF_COEFFS[1:]:
        r *= t
        r += c.take(cell)
    return np.copysign(r, z)


def gelu_erf(x: np.ndarray) -> np.ndarray:
    """GELU with the error function (BERT's "gelu"), not the tanh approximation."""
    e = erf(x * (1.0 / math.sqrt(2.0)))
    return (0.5 * x * (1.0 + e)).astype(np.float32)


def gelu_tanh(x: np.ndarray) -> np.ndarray:
    c = math.sqrt(2.0 / math.pi)
    return (0.5 * x * (1.0 + np.tanh(c * (x + 0.044715 * x ** 3)))).astype(np.float32)


ACTIVATIONS = {
    "gelu": gelu_erf,
    "gelu_new": gelu_tanh,
    "gelu_pytorch_tanh": gelu_tanh,
    "relu": lambda x: np.maximum(x, 0.0).astype(np.float32),
}


def layer_norm(x: np.ndarray, weight: np.ndarray, bias: np.ndarray, eps: float) -> np.ndarray:
    mean = x.mean(axis=-1, keepdims=True)
    centred = x - mean
    var = (centred * centred).mean(axis=-1, keepdims=True)
    return centred / np.sqrt(var + eps) * weight + bias


class BertEmbedder:
    """A sentence-transformers pipeline: BERT encoder, pooling, optional L2 normalisation."""

    def __init__(self, model_dir: Path):
        self.model_dir = Path(model_dir)
        cfg = _read_json(self.model_dir / "config.json")
        if cfg.get("model_type", "bert") != "bert":
            raise ModelError(f"unsupported model_type {cfg.get('model_type')!r}")
        if cfg.get("position_embedding_type", "absolute") != "absolute":
            raise ModelError("only absolute position embeddings are supported")
        self.hidden = int(cfg["hidden_size"])
        self.heads = int(cfg["num_attention_heads"])
        self.layers = int(cfg["num_hidden_layers"])
        self.eps = float(cfg.get("layer_norm_eps", 1e-12))
        act = cfg.get("hidden_act", "gelu")
        if act not in ACTIVATIONS:
            raise ModelError(f"unsupported hidden_act {act!r}")
        self.act = ACTIVATIONS[act]
        self.head_dim = self.hidden // self.heads

        self._read_modules()

        st_cfg_path = self.model_dir / "sentence_bert_config.json"
        st_cfg = _read_json(st_cfg_path) if st_cfg_path.exists() else {}
        max_pos = int(cfg.get("max_position_embeddings", 512))
        self.max_seq_length = int(st_cfg.get("max_seq_length") or max_pos)
        self.max_seq_length = min(self.max_seq_length, max_pos)

        self.tokenizer = Tokenizer.from_file(str(self.model_dir / "tokenizer.json"))
        self.tokenizer.no_padding()
        self.tokenizer.enable_truncation(max_length=self.max_seq_length)

        self._load_weights(self.model_dir / "model.safetensors")

    def _read_modules(self) -> None:
        modules_path = self.model_dir / "modules.json"
        modules = _read_json(modules_path) if modules_path.exists() else []
        self.normalize = False
        pooling_dir = None
        for module in modules:
            kind = module.get("type", "").rsplit(".", 1)[-1]
            if kind == "Transformer":
                if module.get("path", "") not in ("", "."):
                    raise ModelError("the Transformer module must live at the model root")
            elif kind == "Pooling":
                pooling_dir = self.model_dir / module.get("path", "1_Pooling")
            elif kind == "Normalize":
                self.normalize = True
            else:
                raise ModelError(f"unsupported sentence-transformers module {module.get('type')}")
        if pooling_dir is None:
            pooling_dir = self.model_dir / "1_Pooling"
        pool_cfg = _read_json(pooling_dir / "config.json") if pooling_dir.exists() else {}
        modes = []
        if "pooling_mode" in pool_cfg and isinstance(pool_cfg["pooling_mode"], str):
            modes = [pool_cfg["pooling_mode"]]
        else:
            for name, flag in (("cls", "pooling_mode_cls_token"),
                               ("max", "pooling_mode_max_tokens"),
                               ("mean", "pooling_mode_mean_tokens"),
                               ("mean_sqrt_len_tokens", "pooling_mode_mean_sqrt_len_tokens")):
                if pool_cfg.get(flag):
                    modes.append(name)
            for flag in ("pooling_mode_weightedmean_tokens", "pooling_mode_lasttoken"):
                if pool_cfg.get(flag):
                    raise ModelError(f"unsupported pooling flag {flag}")
        if not modes:
            modes = ["mean"]
        for mode in modes:
            if mode not in ("cls", "max", "mean", "mean_sqrt_len_tokens"):
                raise ModelError(f"unsupported pooling mode {mode!r}")
        self.pooling = modes

    def _load_weights(self, path: Path) -> None:
        raw = load_file(str(path))
        prefix = ""
        if "embeddings.word_embeddings.weight" not in raw:
            for candidate in ("bert.", "model."):
                if candidate + "embeddings.word_embeddings.weight" in raw:
                    prefix = candidate
                    break
            else:
                raise ModelError("no embeddings.word_embeddings.weight in the weights file")

        def w(name: str) -> np.ndarray:
            return np.ascontiguousarray(raw[prefix + name], dtype=np.float32)

        def linear(name: str):
            # torch's Linear stores [out, in]; keep [in, out] so x @ W needs no transpose.
            return np.ascontiguousarray(w(name + ".weight").T), w(name + ".bias")

        self.word = w("embeddings.word_embeddings.weight")
        self.position = w("embeddings.position_embeddings.weight")
        self.token_type = w("embeddings.token_type_embeddings.weight")
        self.emb_ln = (w("embeddings.LayerNorm.weight"), w("embeddings.LayerNorm.bias"))
        self.blocks = []
        for i in range(self.layers):
            p = f"encoder.layer.{i}."
            wq, bq = linear(p + "attention.self.query")
            wk, bk = linear(p + "attention.self.key")
            wv, bv = linear(p + "attention.self.value")
            self.blocks.append({
                "qkv_w": np.ascontiguousarray(np.concatenate([wq, wk, wv], axis=1)),
                "qkv_b": np.concatenate([bq, bk, bv]),
                "out": linear(p + "attention.output.dense"),
                "ln1": (w(p + "attention.output.LayerNorm.weight"),
                        w(p + "attention.output.LayerNorm.bias")),
                "inter": linear(p + "intermediate.dense"),
                "down": linear(p + "output.dense"),
                "ln2": (w(p + "output.LayerNorm.weight"), w(p + "output.LayerNorm.bias")),
            })
        self.dimensions = self.hidden * len(self.pooling)

    # ----------------------------------------------------------------------------------------

    def tokenize(self, texts):
        return self.tokenizer.encode_batch(list(texts), add_special_tokens=True)

    def _encode_batch(self, encodings) -> np.ndarray:
        """Last hidden states of a batch, packed: [total tokens, hidden], text after text.

        Everything but attention works token by token, so it runs on the real tokens only;
        attention runs on the batch padded to its longest text, with padded keys masked out.
        """
        lengths = np.array([len(e.ids) for e in encodings])
        batch, seq = len(encodings), int(lengths.max())
        ids = np.concatenate([np.asarray(e.ids, dtype=np.int64) for e in encodings])
        types = np.concatenate([np.asarray(e.type_ids, dtype=np.int64) for e in encodings])
        rows = np.repeat(np.arange(batch), lengths)
        cols = np.concatenate([np.arange(n) for n in lengths])
        mask = np.zeros((batch, seq), dtype=bool)
        mask[rows, cols] = True

        x = self.word[ids] + self.position[cols] + self.token_type[types]
        x = layer_norm(x, *self.emb_ln, self.eps)
        # Padded keys get the most negative float32 before the softmax, as transformers does.
        bias = np.where(mask, np.float32(0.0), np.finfo(np.float32).min).astype(np.float32)
        bias = bias[:, None, None, :]
        scale = np.float32(1.0 / math.sqrt(self.head_dim))
        h, d = self.heads, self.head_dim
        padded = np.zeros((batch, seq, 3 * self.hidden), dtype=np.float32)
        for block in self.blocks:
            padded[rows, cols] = x @ block["qkv_w"] + block["qkv_b"]
            qkv = padded.reshape(batch, seq, 3, h, d).transpose(2, 0, 3, 1, 4)  # [3,B,h,S,d]
            # Contiguous copies: numpy's matmul only calls BLAS on contiguous stacks.
            q = np.ascontiguousarray(qkv[0])
            kt = np.ascontiguousarray(qkv[1].transpose(0, 1, 3, 2))
            v = np.ascontiguousarray(qkv[2])
            scores = (q @ kt) * scale + bias                                   # [B,h,S,S]
            scores -= scores.max(axis=-1, keepdims=True)
            probs = np.exp(scores)
            probs /= probs.sum(axis=-1, keepdims=True)
            ctx = (probs @ v).transpose(0, 2, 1, 3)[rows, cols].reshape(-1, self.hidden)
            attn = ctx @ block["out"][0] + block["out"][1]
            x = layer_norm(attn + x, *block["ln1"], self.eps)
            inter = self.act(x @ block["inter"][0] + block["inter"][1])
            down = inter @ block["down"][0] + block["down"][1]
            x = layer_norm(down + x, *block["ln2"], self.eps)
        return x

    def _pool(self, hidden: np.ndarray, lengths: np.ndarray) -> np.ndarray:
        starts = np.concatenate([[0], np.cumsum(lengths)[:-1]])
        counts = lengths[:, None].astype(np.float32)
        parts = []
        for mode in self.pooling:
            if mode == "cls":
                parts.append(hidden[starts])
            elif mode == "max":
                parts.append(np.maximum.reduceat(hidden, starts, axis=0))
            elif mode == "mean":
                parts.append(np.add.reduceat(hidden, starts, axis=0) / counts)
            elif mode == "mean_sqrt_len_tokens":
                parts.append(np.add.reduceat(hidden, starts, axis=0) / np.sqrt(counts))
        return np.concatenate(parts, axis=1)

    def embed(self, texts):
        """Returns (vectors [n, dim] float32, token counts per text)."""
        encodings = self.tokenize(texts)
        lengths = [len(e.ids) for e in encodings]
        out = np.zeros((len(texts), self.dimensions), dtype=np.float32)
        # Longest first, as sentence-transformers does, so each batch pads little.
        order = sorted(range(len(texts)), key=lambda i: -lengths[i])
        for start in range(0, len(order), BATCH_SIZE):
            chunk = order[start:start + BATCH_SIZE]
            batch = [encodings[i] for i in chunk]
            hidden = self._encode_batch(batch)
            pooled = self._pool(hidden, np.array([lengths[i] for i in chunk]))
            if self.normalize:
                norms = np.linalg.norm(pooled, axis=1, keepdims=True)
                pooled = pooled / np.maximum(norms, 1e-12)
            out[chunk] = pooled
        return out, lengths


# --------------------------------------------------------------------------------------------
# HTTP


class BadRequest(Exception):
    pass


def parse_request(body: bytes, dimensions: int):
    try:
        req = json.loads(body.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise BadRequest(f"the request body is not valid JSON: {e}")
    if not isinstance(req, dict):
        raise BadRequest("the request body must be a JSON object")
    if not isinstance(req.get("model"), str) or not req["model"]:
        raise BadRequest("'model' is required and must be a non-empty string")
    inputs = req.get("input")
    if isinstance(inputs, str):
        texts = [inputs]
    elif isinstance(inputs, list) and inputs and all(isinstance(t, str) for t in inputs):
        texts = inputs
    elif isinstance(inputs, list) and not inputs:
        raise BadRequest("'input' must not be an empty array")
    else:
        raise BadRequest("'input' must be a string or an array of strings")
    encoding = req.get("encoding_format", "float")
    if encoding is None:
        encoding = "float"
    if encoding not in ("float", "base64"):
        raise BadRequest(f"unsupported encoding_format {encoding!r}: use 'float' or 'base64'")
    dims = req.get("dimensions")
    if dims is not None and dims != dimensions:
        raise BadRequest(f"this model only produces {dimensions} dimensions")
    return texts, encoding


class State:
    def __init__(self, args, embedder: BertEmbedder):
        self.args = args
        self.embedder = embedder
        self.lock = threading.Lock()
        self.requests = 0
        self.inputs = 0
        self.failures_left = args.fail_first
        self.answered = 0


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "groundkit-embed-test/1"
    state: State = None  # set on the subclass made in main()

    def log_message(self, fmt, *args):
        if self.state.args.verbose:
            sys.stderr.write("embed_server: " + (fmt % args) + "\n")

    def _send_json(self, status: int, payload, headers=None):
        data = json.dumps(payload).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def _error(self, status: int, message: str, kind: str, code=None, headers=None):
        err = {"message": message, "type": kind, "param": None, "code": code}
        self._send_json(status, {"error": err}, headers)

    def _read_body(self) -> bytes:
        length = self.headers.get("Content-Length")
        if length is None:
            if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
                return self._read_chunked()
            return b""
        return self.rfile.read(int(length))

    def _read_chunked(self) -> bytes:
        parts = []
        while True:
            size = int(self.rfile.readline().split(b";")[0].strip(), 16)
            if size == 0:
                while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                    pass
                return b"".join(parts)
            parts.append(self.rfile.read(size))
            self.rfile.readline()

    def do_GET(self):
        path = self.path.split("?", 1)[0]
        if path == "/stats":
            with self.state.lock:
                stats = {"requests": self.state.requests, "inputs": self.state.inputs}
            self._send_json(200, stats)
        else:
            self._error(404, f"no route for GET {path}", "invalid_request_error", "not_found")

    def do_POST(self):
        state, args = self.state, self.state.args
        try:
            body = self._read_body()
        except (ValueError, OSError):
            self.close_connection = True
            self._error(400, "could not read the request body", "invalid_request_error")
            return
        path = self.path.split("?", 1)[0]
        if path != "/v1/embeddings":
            self._error(404, f"no route for POST {path}", "invalid_request_error", "not_found")
            return

        with state.lock:
            state.requests += 1
            inject = state.failures_left > 0
            if inject:
                state.failures_left -= 1

        if args.redirect_to:
            self.send_response(307)
            self.send_header("Location", args.redirect_to)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return

        if inject:
            status = args.fail_status
            headers = {"Retry-After": "0"} if status == 429 else None
            kind = "rate_limit_error" if status == 429 else (
                "server_error" if status >= 500 else "invalid_request_error")
            self._error(status, f"injected failure ({SECRET_MARKER}: upstream shard 7 "
                        f"rejected the call)", kind, "injected", headers)
            return

        if args.require_key is not None:
            auth = self.headers.get("Authorization", "")
            if auth != f"Bearer {args.require_key}":
                self._error(401, "Incorrect API key provided.", "invalid_request_error",
                            "invalid_api_key")
                return

        try:
            texts, encoding = parse_request(body, state.embedder.dimensions)
        except BadRequest as e:
            self._error(400, str(e), "invalid_request_error")
            return

        vectors, lengths = state.embedder.embed(texts)
        with state.lock:
            state.inputs += len(texts)
            overflow = args.overflow_after is not None and state.answered >= args.overflow_after
            state.answered += 1
        if overflow:
            vectors = vectors.astype(np.float64)
            vectors[:, 0] = 1e39
        data = []
        for i, vec in enumerate(vectors):
            if encoding == "base64":
                emb = base64.b64encode(vec.astype("<f4").tobytes()).decode("ascii")
            else:
                emb = [float(x) for x in vec]
            data.append({"object": "embedding", "index": i, "embedding": emb})
        tokens = int(sum(lengths))
        self._send_json(200, {
            "object": "list",
            "data": data,
            "model": args.model_name,
            "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
        })


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description="OpenAI-compatible embeddings server (numpy BERT).")
    ap.add_argument("--model-dir", required=True, type=Path)
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=0, help="0 picks a free port")
    ap.add_argument("--model-name", default="all-MiniLM-L6-v2",
                    help="the name reported in answers")
    ap.add_argument("--require-key", default=None, metavar="KEY")
    ap.add_argument("--fail-first", type=int, default=0, metavar="N")
    ap.add_argument("--fail-status", type=int, default=500, metavar="S")
    ap.add_argument("--redirect-to", default=None, metavar="URL")
    ap.add_argument("--overflow-after", type=int, default=None, metavar="N")
    ap.add_argument("--verbose", action="store_true", help="log requests to stderr")
    args = ap.parse_args(argv)
    if args.fail_first < 0:
        ap.error("--fail-first must be >= 0")
    if not 100 <= args.fail_status <= 599:
        ap.error("--fail-status must be an HTTP status code")

    embedder = BertEmbedder(args.model_dir)
    embedder.embed(["warm up"])

    return serve(Handler, State(args, embedder), args.host, args.port)


def serve(handler_class, state, host: str, port: int) -> int:
    """Serves `handler_class` bound to `state` until interrupted, after printing the
    `listening on http://HOST:PORT` line the tests wait for."""
    handler = type("BoundHandler", (handler_class,), {"state": state})
    server = http.server.ThreadingHTTPServer((host, port), handler)
    server.daemon_threads = True
    host, port = server.server_address[:2]
    shown = f"[{host}]" if ":" in host else host
    print(f"listening on http://{shown}:{port}", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
