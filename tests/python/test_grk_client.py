"""The Python MCP SDK 2.x client against `grk serve` on a collection ingested here, over stdio
(`grk serve --stdio`) and Streamable HTTP (`grk serve`), in both protocol eras."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.subscriptions import ResourceUpdated
from mcp.shared.exceptions import MCPDeprecationWarning
from mcp.types import PromptReference, ResourceTemplateReference, ResourceUpdatedNotification

from conftest import free_port, serve_http
from servers import grk_bin, ingest

pytestmark = pytest.mark.anyio

MODES = ["auto", "legacy"]
TOOLS = ["fetch_chunk", "index_status", "list_collections", "search"]


@pytest.fixture(scope="module")
def collection(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A corpus and an index holding it as collection `papers`: (base dir, index dir)."""
    root = tmp_path_factory.mktemp("grk")
    base, index = root / "corpus", root / "index"
    base.mkdir()
    (base / "tea.md").write_text("# Tea\n\nGreen tea is steeped at 80 degrees for two minutes.\n")
    (base / "chain.txt").write_text("Clean the bicycle chain, then oil each link sparingly.\n")
    ingest(base, index, "papers")
    return base, index


@pytest.fixture(scope="module")
def grk_http(collection: tuple[Path, Path]) -> Iterator[str]:
    base, index = collection
    port = free_port()
    command = [grk_bin(), "--index-dir", str(index), "--base-dir", str(base), "serve", "--host", "127.0.0.1", "--port", str(port)]
    yield from serve_http(command, port)


@pytest.fixture(params=["stdio", "http"])
def grk_target(request: pytest.FixtureRequest, collection: tuple[Path, Path]) -> object:
    base, index = collection
    if request.param == "stdio":
        return StdioServerParameters(
            command=grk_bin(), args=["--index-dir", str(index), "--base-dir", str(base), "serve", "--stdio"]
        )
    return request.getfixturevalue("grk_http")


@pytest.mark.parametrize("mode", MODES)
async def test_lists_exactly_the_four_read_only_tools(grk_target: object, mode: str) -> None:
    async with Client(grk_target, mode=mode) as client:
        result = await client.list_tools()
    assert sorted(tool.name for tool in result.tools) == TOOLS
    for tool in result.tools:
        assert tool.description
        assert tool.annotations is not None and tool.annotations.read_only_hint is True
        assert tool.input_schema["type"] == "object"
        assert tool.output_schema is not None and tool.output_schema["type"] == "object"


@pytest.mark.parametrize("mode", MODES)
async def test_calls_each_tool(grk_target: object, mode: str) -> None:
    async with Client(grk_target, mode=mode) as client:
        listed = await client.call_tool("list_collections", {})
        found = await client.call_tool("search", {"collection": "papers", "query": "green tea temperature", "top_k": 1})
        chunk_id = found.structured_content["results"][0]["chunk_id"]
        fetched = await client.call_tool("fetch_chunk", {"collection": "papers", "chunk_id": chunk_id})
        status = await client.call_tool("index_status", {"collection": "papers"})
    for result in (listed, found, fetched, status):
        assert result.is_error is False
        assert json.loads(result.content[0].text) == result.structured_content
    assert listed.structured_content == {"collections": ["papers"]}
    assert found.structured_content["results"][0]["citation"]["source"] == "tea.md"
    assert fetched.structured_content["verification"] == "verified"
    assert fetched.structured_content["content"] == found.structured_content["results"][0]["content"]
    assert status.structured_content["document_count"] == 2


@pytest.mark.parametrize("mode", MODES)
async def test_bad_requests_are_is_error_results_with_their_kind(grk_target: object, mode: str) -> None:
    async with Client(grk_target, mode=mode) as client:
        missing = await client.call_tool("index_status", {"collection": "nope"})
        traversal = await client.call_tool("search", {"collection": "../etc", "query": "tea"})
        rerank = await client.call_tool("search", {"collection": "papers", "query": "tea", "rerank": True})
    for result, kind in ((missing, "collection_not_found"), (traversal, "validation_error"), (rerank, "reranker_not_configured")):
        assert result.is_error is True
        assert json.loads(result.content[0].text)["kind"] == kind


@pytest.mark.parametrize("mode", MODES)
async def test_reads_a_chunk_and_a_collection_status_as_resources(grk_target: object, mode: str) -> None:
    async with Client(grk_target, mode=mode) as client:
        templates = await client.list_resource_templates()
        found = await client.call_tool("search", {"collection": "papers", "query": "green tea temperature", "top_k": 1})
        chunk_id = found.structured_content["results"][0]["chunk_id"]
        fetched = await client.call_tool("fetch_chunk", {"collection": "papers", "chunk_id": chunk_id})
        chunk = await client.read_resource(f"grk://papers/chunks/{chunk_id}")
        status = await client.read_resource("grk://papers/status")
    assert sorted(t.uri_template for t in templates.resource_templates) == [
        "grk://{collection}/chunks/{chunk_id}",
        "grk://{collection}/status",
    ]
    assert chunk.contents[0].mime_type == "application/json"
    assert json.loads(chunk.contents[0].text) == fetched.structured_content
    assert json.loads(status.contents[0].text)["document_count"] == 2


@pytest.mark.parametrize("mode", MODES)
async def test_a_grounded_answer_prompt_embeds_verified_chunks_and_collections_complete(
    grk_target: object, mode: str
) -> None:
    async with Client(grk_target, mode=mode) as client:
        prompt = await client.get_prompt("grounded_answer", {"collection": "papers", "question": "green tea temperature"})
        names = await client.complete(
            PromptReference(type="ref/prompt", name="grounded_answer"), {"name": "collection", "value": "pa"}
        )
        none = await client.complete(
            ResourceTemplateReference(type="ref/resource", uri="grk://{collection}/status"),
            {"name": "collection", "value": "x"},
        )
    *embedded, instruction = prompt.messages
    assert len(embedded) == 1, "one chunk of the two documents mentions tea"
    resource = embedded[0].content.resource
    chunk = json.loads(resource.text)
    assert str(resource.uri) == f"grk://papers/chunks/{chunk['chunk_id']}"
    assert chunk["verification"] == "verified"
    assert "80 degrees" in chunk["content"]
    assert instruction.content.text.endswith("Question: green tea temperature")
    assert names.completion.values == ["papers"]
    assert none.completion.values == []


def live_collection(tmp_path: Path) -> tuple[Path, Path]:
    """A corpus of one note ingested as collection `live`: (base dir, index dir)."""
    base, index = tmp_path / "corpus", tmp_path / "index"
    base.mkdir()
    (base / "tea.md").write_text("Green tea is steeped at 80 degrees.\n")
    ingest(base, index, "live")
    return base, index


@contextlib.contextmanager
def live_target(base: Path, index: Path, transport: str) -> Iterator[object]:
    """`grk serve` on `index`: stdio parameters, or the URL of a server started here."""
    command = [grk_bin(), "--index-dir", str(index), "--base-dir", str(base), "serve"]
    if transport == "stdio":
        yield StdioServerParameters(command=command[0], args=[*command[1:], "--stdio"])
        return
    port = free_port()
    yield from serve_http([*command, "--host", "127.0.0.1", "--port", str(port)], port)


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_a_followed_collection_status_is_announced_when_a_new_generation_is_published(
    tmp_path: Path, transport: str
) -> None:
    base, index = live_collection(tmp_path)
    uri = "grk://live/status"
    updated = anyio.Event()

    async def on_message(message: object) -> None:
        if isinstance(message, ResourceUpdatedNotification) and str(message.params.uri) == uri:
            updated.set()

    with live_target(base, index, transport) as target:
        async with Client(target, mode="legacy", message_handler=on_message) as client:
            with pytest.warns(MCPDeprecationWarning):
                await client.subscribe_resource(uri)
            (base / "kelp.md").write_text("Kelp forests grow in cold water.\n")
            ingest(base, index, "live")
            with anyio.fail_after(20):
                await updated.wait()
            status = await client.read_resource(uri)
    assert json.loads(status.contents[0].text)["document_count"] == 2


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_a_stateless_client_listens_for_each_new_generation(tmp_path: Path, transport: str) -> None:
    base, index = live_collection(tmp_path)
    uri = "grk://live/status"
    with live_target(base, index, transport) as target:
        async with Client(target, mode="auto") as client:
            async with client.listen(resource_subscriptions=[uri, "file:///etc/passwd"]) as subscription:
                assert subscription.honored.resource_subscriptions == [uri]
                (base / "kelp.md").write_text("Kelp forests grow in cold water.\n")
                ingest(base, index, "live")
                with anyio.fail_after(20):
                    event = await subscription.__anext__()
            assert event == ResourceUpdated(uri=uri)
            status = await client.read_resource(uri)
    assert json.loads(status.contents[0].text)["document_count"] == 2
