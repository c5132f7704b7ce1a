"""Fixtures for the REST client tests: a collection ingested with the real `grk ingest` (a
Markdown, an HTML and a plain-text source) and `grk serve` on a free loopback port. The binaries
are found and served by `tests/python/servers.py`, shared with the MCP client tests.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))

from servers import free_port, grk_bin, ingest, serve  # noqa: E402


@dataclass
class Served:
    base_url: str
    corpus: Path


@pytest.fixture(scope="session")
def grk(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    root = tmp_path_factory.mktemp("grk-rest")
    base, index = root / "corpus", root / "index"
    base.mkdir()
    (base / "tea.md").write_text("# Tea\n\nGreen tea is steeped at 80 degrees for two minutes.\n")
    (base / "page.html").write_text(
        "<html><head><title>Bikes</title></head><body><p>Clean the bicycle chain, then oil each link sparingly.</p></body></html>\n"
    )
    (base / "drift.txt").write_text("The lighthouse keeper logs every passing freighter.\n")
    paths = ingest(base, index, "papers")
    port = free_port()
    for url in serve([grk_bin(), *paths, "serve", "--host", "127.0.0.1", "--port", str(port)], port):
        yield Served(url, base)
