#!/usr/bin/env python3
"""A model hub on loopback for groundkit's integration tests, answering as the Hugging Face Hub
does for the files of one sentence-transformers model, served from a local model directory.

    python hub_server.py --model-dir DIR --repo OWNER/NAME --commit HEX40 [--corrupt-weights]

It prints one line, `listening on http://127.0.0.1:PORT`, to stdout once it is ready.

HTTP surface (standard library only):

- GET /OWNER/NAME/resolve/REV/PATH, REV being `main` or the commit: a file of the model
  directory. Small files are answered directly (200) with `X-Repo-Commit` and an `ETag`. The
  weights (`model.safetensors`) are answered as the Hub answers files it stores by hash: a 302
  to /cdn/SHA256 carrying `X-Repo-Commit` and `X-Linked-Etag: "SHA256"`.
- GET /cdn/SHA256: the weights. With --corrupt-weights one byte of them differs.
- A file the model does not have: 404 with `X-Error-Code: EntryNotFound`. Another repository
  or revision: 401 (the Hub does not tell a missing repository from a private one).
- GET /stats: {"requests": n}, n counting every other request that arrived.
"""

import argparse
import hashlib
import json
import os
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model-dir", required=True)
    parser.add_argument("--repo", required=True)
    parser.add_argument("--commit", required=True)
    parser.add_argument("--corrupt-weights", action="store_true")
    args = parser.parse_args()

    weights = open(os.path.join(args.model_dir, "model.safetensors"), "rb").read()
    digest = hashlib.sha256(weights).hexdigest()
    if args.corrupt_weights:
        weights = weights[:-1] + bytes([weights[-1] ^ 0xFF])
    lock = threading.Lock()
    counts = {"requests": 0}

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *_):
            pass

        def answer(self, status, body=b"", headers=()):
            self.send_response(status)
            for name, value in headers:
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self):
            if self.path == "/stats":
                self.answer(200, json.dumps(counts).encode(), [("Content-Type", "application/json")])
                return
            with lock:
                counts["requests"] += 1
            if self.path == "/cdn/" + digest:
                self.answer(200, weights, [("Content-Type", "application/octet-stream")])
                return
            prefix = "/" + args.repo + "/resolve/"
            if not self.path.startswith(prefix):
                self.answer(401, b'{"error":"Repository not found"}')
                return
            revision, _, name = self.path[len(prefix):].partition("/")
            if revision not in ("main", args.commit):
                self.answer(401, b'{"error":"Revision not found"}')
                return
            commit = [("X-Repo-Commit", args.commit)]
            if name == "model.safetensors":
                self.answer(302, b"", commit + [
                    ("Location", "/cdn/" + digest),
                    ("X-Linked-Etag", '"%s"' % digest),
                    ("X-Linked-Size", str(len(weights))),
                ])
                return
            path = os.path.realpath(os.path.join(args.model_dir, name))
            inside = path.startswith(os.path.realpath(args.model_dir) + os.sep)
            if not inside or not os.path.isfile(path):
                self.answer(404, b'{"error":"Entry not found"}', commit + [("X-Error-Code", "EntryNotFound")])
                return
            body = open(path, "rb").read()
            etag = hashlib.sha1(body).hexdigest()
            self.answer(200, body, commit + [("ETag", '"%s"' % etag)])

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    print("listening on http://127.0.0.1:%d" % server.server_address[1], flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
