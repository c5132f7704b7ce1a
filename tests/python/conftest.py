"""Fixtures: the real `hello` binary, over stdio (spawned by the client) and over HTTP (spawned here).

`HELLO_BIN` names the binary; `tests/clients/run.sh` builds it and sets it.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from mcp import StdioServerParameters

from servers import REPO, free_port, hello_bin, serve

__all__ = ["REPO", "free_port", "hello_bin", "serve_http"]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def serve_http(command: list[str], port: int) -> Iterator[str]:
    """Run `command` (a server binding 127.0.0.1:`port`) until the caller is done with its MCP URL."""
    for base in serve(command, port):
        yield f"{base}/mcp"


@pytest.fixture(scope="session")
def http_url() -> Iterator[str]:
    port = free_port()
    yield from serve_http([hello_bin(), "--host", "127.0.0.1", "--port", str(port)], port)


@pytest.fixture(params=["stdio", "http"])
def target(request: pytest.FixtureRequest) -> object:
    if request.param == "stdio":
        return StdioServerParameters(command=hello_bin(), args=["--stdio"])
    return request.getfixturevalue("http_url")
