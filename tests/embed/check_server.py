#!/usr/bin/env python3
"""Check embed_server.py against the golden sentence-transformers vectors.

    python tests/embed/check_server.py --model-dir DIR \\
        --golden tests/fixtures/embed/all-minilm-l6-v2.golden.json

Starts the server on a free loopback port, then:

1. embeds every golden text in one request and requires cosine >= 0.9999 with each golden
   vector, and the reported token usage to equal the golden token counts;
2. embeds the texts one request at a time and requires the same vectors as the batch
   (per-text token usage must match too);
3. checks /stats, a 400 for bad input and a 404 for an unknown path;
4. starts a second server with the test hooks (--require-key, --fail-first/--fail-status,
   --redirect-to) and checks each one answers as documented.

Prints the minimum cosine and exits non-zero on any mismatch.
"""
import argparse
import hashlib
import http.client
import json
import math
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import urlsplit

SERVER = Path(__file__).resolve().parent / "embed_server.py"
MIN_COSINE = 0.9999
# Batch and single requests differ only by float32 summation order.
MAX_BATCH_DRIFT = 1e-5


class Server:
    def __init__(self, model_dir: Path, *extra: str):
        self.proc = subprocess.Popen(
            [sys.executable, str(SERVER), "--model-dir", str(model_dir),
             "--host", "127.0.0.1", "--port", "0", *extra],
            stdout=subprocess.PIPE, text=True)
        line = self.proc.stdout.readline().strip()
        if not line.startswith("listening on http://"):
            self.stop()
            raise SystemExit(f"server did not start (first line: {line!r})")
        url = urlsplit(line.split(" ", 2)[2])
        self.host, self.port = url.hostname, url.port

    def request(self, method: str, path: str, body=None, headers=None):
        conn = http.client.HTTPConnection(self.host, self.port, timeout=600)
        try:
            data = None if body is None else (
                body if isinstance(body, bytes) else json.dumps(body).encode())
            hdrs = {"Content-Type": "application/json", **(headers or {})}
            conn.request(method, path, body=data, headers=hdrs)
            resp = conn.getresponse()
            raw = resp.read()
            payload = json.loads(raw) if raw else None
            return resp.status, dict(resp.getheaders()), payload
        finally:
            conn.close()

    def embed(self, texts, **headers):
        status, _, payload = self.request(
            "POST", "/v1/embeddings", {"model": "all-MiniLM-L6-v2", "input": texts}, headers)
        if status != 200:
            raise SystemExit(f"embedding request failed: {status} {payload}")
        return payload

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def cosine(a, b) -> float:
    dot = sum(x * y for x, y in zip(a, b))
    return dot / (math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b)))


def main() -> int:
    ap = argparse.ArgumentParser(description="Compare embed_server.py with golden vectors.")
    ap.add_argument("--model-dir", required=True, type=Path)
    ap.add_argument("--golden", required=True, type=Path)
    args = ap.parse_args()
    golden = json.loads(args.golden.read_text(encoding="utf-8"))
    texts, expected, counts = golden["texts"], golden["vectors"], golden["token_counts"]
    failures = []

    digest = hashlib.sha256((args.model_dir / "model.safetensors").read_bytes()).hexdigest()
    if digest != golden["weights_sha256"]:
        failures.append(f"model.safetensors sha256 {digest} differs from the golden file's")

    server = Server(args.model_dir, "--model-name", "golden-check")
    try:
        started = time.perf_counter()
        batch = server.embed(texts)
        batch_secs = time.perf_counter() - started
        if batch["object"] != "list" or batch["model"] != "golden-check":
            failures.append(f"unexpected envelope: object={batch['object']} model={batch['model']}")
        data = sorted(batch["data"], key=lambda d: d["index"])
        if [d["index"] for d in data] != list(range(len(texts))):
            failures.append("batch answer indices are not 0..n-1")
        vectors = [d["embedding"] for d in data]
        if batch["usage"]["prompt_tokens"] != sum(counts):
            failures.append(f"batch usage {batch['usage']} != {sum(counts)} golden tokens")

        cosines = []
        worst_abs = 0.0
        for i, (got, want) in enumerate(zip(vectors, expected)):
            if len(got) != len(want):
                failures.append(f"text {i}: {len(got)} dimensions, golden has {len(want)}")
                continue
            c = cosine(got, want)
            cosines.append(c)
            worst_abs = max(worst_abs, max(abs(a - b) for a, b in zip(got, want)))
            if c < MIN_COSINE:
                failures.append(f"text {i} {texts[i][:40]!r}: cosine {c:.7f} < {MIN_COSINE}")

        drift = 0.0
        started = time.perf_counter()
        for i, text in enumerate(texts):
            single = server.embed(text)
            vec = single["data"][0]["embedding"]
            drift = max(drift, max(abs(a - b) for a, b in zip(vec, vectors[i])))
            if single["usage"]["prompt_tokens"] != counts[i]:
                failures.append(f"text {i}: {single['usage']['prompt_tokens']} tokens, "
                                f"golden {counts[i]}")
        single_secs = time.perf_counter() - started
        if drift > MAX_BATCH_DRIFT:
            failures.append(f"single vs batch vectors differ by up to {drift:.2e}")

        status, _, stats = server.request("GET", "/stats")
        want_stats = {"requests": 1 + len(texts), "inputs": 2 * len(texts)}
        if status != 200 or stats != want_stats:
            failures.append(f"/stats answered {status} {stats}, expected {want_stats}")
        for body, what in ((b"{not json", "invalid JSON"),
                           ({"model": "m", "input": []}, "empty input"),
                           ({"model": "m", "input": [1, 2]}, "token arrays"),
                           ({"model": "m", "input": "x", "encoding_format": "int8"},
                            "bad encoding_format")):
            status, _, payload = server.request("POST", "/v1/embeddings", body)
            if status != 400 or "error" not in (payload or {}):
                failures.append(f"{what}: expected a 400 error body, got {status} {payload}")
        status, _, payload = server.request("POST", "/v1/other", {"model": "m", "input": "x"})
        if status != 404 or "error" not in (payload or {}):
            failures.append(f"unknown path: expected 404, got {status}")
    finally:
        server.stop()

    failures += check_hooks(args.model_dir)

    worst = min(cosines) if cosines else float("nan")
    print(f"min cosine {worst:.10f} (1 - cos = {1 - worst:.1e}) over {len(cosines)} texts; "
          f"max |component - golden| {worst_abs:.2e}; "
          f"max single-vs-batch difference {drift:.2e}; "
          f"batch {batch_secs:.2f}s, one at a time {single_secs:.2f}s")
    for failure in failures:
        print("FAIL:", failure, file=sys.stderr)
    return 1 if failures else 0


def check_hooks(model_dir: Path):
    failures = []
    hooked = Server(model_dir, "--require-key", "k-123", "--fail-first", "2",
                    "--fail-status", "429")
    try:
        body = {"model": "m", "input": ["hooks"]}
        auth = {"Authorization": "Bearer k-123"}
        for attempt in (1, 2):
            status, headers, payload = hooked.request("POST", "/v1/embeddings", body, auth)
            message = ((payload or {}).get("error") or {}).get("message", "")
            if status != 429 or headers.get("Retry-After") != "0" \
                    or "secret-provider-detail" not in message:
                failures.append(f"injected failure {attempt}: {status} {headers} {payload}")
        status, _, _ = hooked.request("POST", "/v1/embeddings", body)
        if status != 401:
            failures.append(f"missing key: expected 401, got {status}")
        status, _, _ = hooked.request("POST", "/v1/embeddings", body,
                                      {"Authorization": "Bearer wrong"})
        if status != 401:
            failures.append(f"wrong key: expected 401, got {status}")
        status, _, payload = hooked.request("POST", "/v1/embeddings", body, auth)
        if status != 200 or len(payload["data"]) != 1:
            failures.append(f"right key after the failures: expected 200, got {status}")
        _, _, stats = hooked.request("GET", "/stats")
        if stats != {"requests": 5, "inputs": 1}:
            failures.append(f"hooked /stats: {stats}")
    finally:
        hooked.stop()

    target = "http://127.0.0.1:9/v1/embeddings"
    redirecting = Server(model_dir, "--redirect-to", target)
    try:
        status, headers, _ = redirecting.request(
            "POST", "/v1/embeddings", {"model": "m", "input": "x"})
        if status != 307 or headers.get("Location") != target:
            failures.append(f"redirect: expected 307 to {target}, got {status} {headers}")
    finally:
        redirecting.stop()
    return failures


if __name__ == "__main__":
    sys.exit(main())
