"""Fixtures: the real `hello` binary, over stdio (spawned by the client) and over HTTP (spawned here).

`HELLO_BIN` names the binary; `tests/clients/run.sh` builds it and sets it.
"""

from __future__ import annotations

import os
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from mcp import StdioServerParameters

REPO = Path(__file__).resolve().parents[2]


def hello_bin() -> str:
    path = os.environ.get("HELLO_BIN", str(REPO / "target" / "debug" / "hello"))
    if not Path(path).is_file():
        pytest.fail(f"the hello binary is missing at {path}; build it with `cargo build -p groundkit-examples --bins`")
    return path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def serve_http(command: list[str], port: int) -> Iterator[str]:
    """Run `command` (a server binding 127.0.0.1:`port`) until the caller is done with its MCP URL."""
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
    yield f"http://127.0.0.1:{port}/mcp"
    proc.terminate()
    proc.wait(timeout=10)


@pytest.fixture(scope="session")
def http_url() -> Iterator[str]:
    port = free_port()
    yield from serve_http([hello_bin(), "--host", "127.0.0.1", "--port", str(port)], port)


@pytest.fixture(params=["stdio", "http"])
def target(request: pytest.FixtureRequest) -> object:
    if request.param == "stdio":
        return StdioServerParameters(command=hello_bin(), args=["--stdio"])
    return request.getfixturevalue("http_url")
