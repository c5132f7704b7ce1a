"""Real groundkit binaries for the Python client tests (the MCP SDK tests here and the REST
client tests in tests/rest): where they are, a free loopback port, and a server run until the
test is done with it. Needs nothing beyond the standard library and pytest.

`tests/clients/run.sh` builds the binaries and names them in `HELLO_BIN` and `GRK_BIN`.
"""

from __future__ import annotations

import os
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def binary(env: str, name: str, build: str) -> str:
    path = os.environ.get(env, str(REPO / "target" / "debug" / name))
    if not Path(path).is_file():
        pytest.fail(f"the {name} binary is missing at {path}; build it with `{build}`")
    return path


def hello_bin() -> str:
    return binary("HELLO_BIN", "hello", "cargo build -p groundkit-examples --bins")


def grk_bin() -> str:
    return binary("GRK_BIN", "grk", "cargo build -p grk")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def serve(command: list[str], port: int) -> Iterator[str]:
    """Run `command` (a server binding 127.0.0.1:`port`) until the caller is done with its base URL."""
    proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 20
    while True:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                break
        except OSError:
            if proc.poll() is not None or time.monotonic() > deadline:
                proc.kill()
                pytest.fail(f"{command[0]} did not start listening")
            time.sleep(0.05)
    yield f"http://127.0.0.1:{port}"
    proc.terminate()
    proc.wait(timeout=10)


def ingest(base: Path, index: Path, collection: str) -> list[str]:
    """Ingest `base` as `collection` with the real `grk ingest`; the path flags for later calls."""
    paths = ["--index-dir", str(index), "--base-dir", str(base)]
    subprocess.run([grk_bin(), *paths, "ingest", "--collection", collection, str(base)], check=True, capture_output=True)
    return paths
