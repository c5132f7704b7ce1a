"""The fastmcp 4.x client against the `hello` example, over stdio and Streamable HTTP: the tools,
the resource and template, the prompt and the completions, read through fastmcp's own methods."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fastmcp import Client
from fastmcp.client.transports import StdioTransport, StreamableHttpTransport
from mcp_types import PromptReference, ResourceTemplateReference

from conftest import free_port, hello_bin, serve_http

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def hello_url() -> Iterator[str]:
    port = free_port()
    yield from serve_http([hello_bin(), "--host", "127.0.0.1", "--port", str(port)], port)


@pytest.fixture(params=["stdio", "http"])
def transport(request: pytest.FixtureRequest) -> object:
    if request.param == "stdio":
        return StdioTransport(command=hello_bin(), args=["--stdio"])
    return StreamableHttpTransport(request.getfixturevalue("hello_url"))


async def test_reads_tools_resources_prompts_and_completions(transport: object) -> None:
    async with Client(transport) as client:
        tools = await client.list_tools()
        greeting = await client.call_tool("greet", {"language": "es", "name": "Lola"})
        resources = await client.list_resources()
        templates = await client.list_resource_templates()
        read = await client.read_resource("hello://greetings/fr/Ada")
        prompts = await client.list_prompts()
        card = await client.get_prompt("greeting_card", {"language": "en", "name": "Sam", "occasion": "a move"})
        completion = await client.complete(
            ResourceTemplateReference(type="ref/resource", uri="hello://greetings/{language}/{name}"),
            {"name": "language", "value": "d"},
        )
        codes = await client.complete(
            PromptReference(type="ref/prompt", name="greeting_card"), {"name": "language", "value": ""}
        )
    assert sorted(tool.name for tool in tools) == ["greet", "list_languages", "text_stats"]
    assert greeting.structured_content["message"] == "Hola, Lola!"
    assert [str(resource.uri) for resource in resources] == ["hello://languages"]
    assert [template.uri_template for template in templates] == ["hello://greetings/{language}/{name}"]
    assert read[0].text == "Bonjour, Ada!"
    assert [(p.name, [a.name for a in p.arguments]) for p in prompts] == [
        ("greeting_card", ["language", "name", "occasion"])
    ]
    assert card.messages[0].content.text == 'Write a two-line greeting card for a move in English. Open it with "Hello, Sam!".'
    assert completion.values == ["de"]
    assert codes.values == ["de", "en", "es", "fr", "sw"]
