"""The Python MCP SDK 2.x client against the `hello` example, over stdio and Streamable HTTP, in both
protocol eras: `mode="auto"` probes `server/discover` (2026-07-28), `mode="legacy"` runs the
`initialize` handshake."""

from __future__ import annotations

import hashlib
import json
import time

import pytest
from mcp import Client, MCPError
from mcp.types import PromptReference, ResourceTemplateReference

pytestmark = pytest.mark.anyio

MODES = ["auto", "legacy"]
EXPECTED_VERSION = {"auto": "2026-07-28", "legacy": "2025-11-25"}


@pytest.mark.parametrize("mode", MODES)
async def test_connects_promptly_in_both_eras(target: object, mode: str) -> None:
    started = time.monotonic()
    async with Client(target, mode=mode) as client:
        assert client.protocol_version == EXPECTED_VERSION[mode]
        assert client.server_info is not None
        assert client.server_info.name == "groundkit hello"
        assert client.server_capabilities.tools is not None
        assert client.server_capabilities.logging is None
    # A discover probe the server did not answer would cost the client a 10 s timeout.
    assert time.monotonic() - started < 5


@pytest.mark.parametrize("mode", MODES)
async def test_lists_exactly_the_registry_tools_as_read_only(target: object, mode: str) -> None:
    async with Client(target, mode=mode) as client:
        result = await client.list_tools()
    names = [tool.name for tool in result.tools]
    assert names == ["greet", "list_languages", "text_stats"]
    for tool in result.tools:
        assert tool.description
        assert tool.input_schema["type"] == "object"
        assert "$schema" not in tool.input_schema
        assert tool.output_schema is not None and tool.output_schema["type"] == "object"
        assert tool.annotations is not None and tool.annotations.read_only_hint is True
    greet = next(tool for tool in result.tools if tool.name == "greet")
    assert greet.title == "Greet someone"


@pytest.mark.parametrize("mode", MODES)
async def test_calls_each_tool_and_gets_structured_content_and_the_same_json_as_text(
    target: object, mode: str
) -> None:
    async with Client(target, mode=mode) as client:
        greet = await client.call_tool("greet", {"language": "sw", "name": "Amani"})
        languages = await client.call_tool("list_languages", {})
        stats = await client.call_tool("text_stats", {"text": "the cat and the hat", "top": 1})
    for result in (greet, languages, stats):
        assert result.is_error is False
        assert json.loads(result.content[0].text) == result.structured_content
    assert greet.structured_content["message"] == "Habari, Amani!"
    assert [lang["code"] for lang in languages.structured_content["languages"]] == ["de", "en", "es", "fr", "sw"]
    assert stats.structured_content["words"] == 5
    assert stats.structured_content["top_words"] == [{"word": "the", "count": 2}]


@pytest.mark.parametrize("mode", MODES)
async def test_validation_error_comes_back_as_is_error_with_kind_and_request_id(target: object, mode: str) -> None:
    async with Client(target, mode=mode) as client:
        bad_bound = await client.call_tool("greet", {"language": "EN", "name": "Ann"})
        bad_type = await client.call_tool("text_stats", {"text": 42})
        not_found = await client.call_tool("greet", {"language": "xx", "name": "Ann"})
    for result, kind in ((bad_bound, "validation_error"), (bad_type, "invalid_request"), (not_found, "not_found")):
        assert result.is_error is True
        body = json.loads(result.content[0].text)
        assert body["kind"] == kind
        assert len(body["request_id"]) == 32


@pytest.mark.parametrize("mode", MODES)
async def test_unknown_tool_raises_invalid_params(target: object, mode: str) -> None:
    async with Client(target, mode=mode) as client:
        with pytest.raises(MCPError) as raised:
            await client.call_tool("no_such_tool", {})
        assert raised.value.code == -32602
        # The connection survives the error.
        assert (await client.list_tools()).tools


@pytest.mark.parametrize("mode", MODES)
async def test_lists_and_reads_a_resource_and_a_template(target: object, mode: str) -> None:
    async with Client(target, mode=mode) as client:
        assert client.server_capabilities.resources is not None
        resources = await client.list_resources()
        templates = await client.list_resource_templates()
        languages = await client.read_resource("hello://languages")
        greeting = await client.read_resource("hello://greetings/fr/Ada%20L.")
    assert [(r.uri, r.name, r.mime_type) for r in resources.resources] == [
        ("hello://languages", "languages", "text/plain")
    ]
    assert [(t.uri_template, t.name, t.mime_type) for t in templates.resource_templates] == [
        ("hello://greetings/{language}/{name}", "greeting", "text/plain")
    ]
    assert "fr\tFrench\tBonjour\n" in languages.contents[0].text
    assert languages.contents[0].mime_type == "text/plain"
    assert greeting.contents[0].text == "Bonjour, Ada L.!"
    assert str(greeting.contents[0].uri) == "hello://greetings/fr/Ada%20L."


@pytest.mark.parametrize("mode", MODES)
async def test_an_unknown_resource_and_a_traversal_raise_with_their_codes(target: object, mode: str) -> None:
    async with Client(target, mode=mode) as client:
        with pytest.raises(MCPError) as unknown:
            await client.read_resource("hello://nothing")
        with pytest.raises(MCPError) as traversal:
            await client.read_resource("hello://greetings/..%2F..%2Fetc/Ada")
    # Resource not found is -32002 in the handshake era and invalid params in the stateless one.
    assert unknown.value.code == (-32602 if mode == "auto" else -32002)
    assert traversal.value.code == -32602


@pytest.mark.parametrize("mode", MODES)
async def test_lists_and_gets_a_prompt_and_completes_its_arguments(target: object, mode: str) -> None:
    async with Client(target, mode=mode) as client:
        assert client.server_capabilities.prompts is not None
        assert client.server_capabilities.completions is not None
        prompts = await client.list_prompts()
        card = await client.get_prompt("greeting_card", {"language": "sw", "name": "Amani"})
        codes = await client.complete(
            PromptReference(type="ref/prompt", name="greeting_card"), {"name": "language", "value": "e"}
        )
        template = await client.complete(
            ResourceTemplateReference(type="ref/resource", uri="hello://greetings/{language}/{name}"),
            {"name": "language", "value": "f"},
        )
        with pytest.raises(MCPError) as missing:
            await client.get_prompt("greeting_card", {"language": "sw"})
    [listed] = prompts.prompts
    assert (listed.name, listed.title) == ("greeting_card", "Write a greeting card")
    assert [(a.name, a.required) for a in listed.arguments] == [
        ("language", True),
        ("name", True),
        ("occasion", False),
    ]
    [message] = card.messages
    assert message.role == "user"
    assert message.content.text == 'Write a two-line greeting card in Swahili. Open it with "Habari, Amani!".'
    assert codes.completion.values == ["en", "es"]
    assert template.completion.values == ["fr"]
    assert missing.value.code == -32602


@pytest.mark.parametrize("mode", MODES)
async def test_a_client_recomputes_the_registry_digest_from_what_the_server_lists(
    target: object, mode: str
) -> None:
    """The digest in `_meta` is SHA-256 over the canonical JSON of every operation as listed
    (groundkit_core::digest documents the form): recomputed here from the lists alone."""
    async with Client(target, mode=mode) as client:
        tools = await client.list_tools()
        resources = await client.list_resources()
        templates = await client.list_resource_templates()
        prompts = await client.list_prompts()
    operations = [
        {
            "kind": "tool",
            "name": tool.name,
            "effect": tool.meta["groundkit/effect"],
            "inputSchema": tool.input_schema,
            "outputSchema": tool.output_schema,
        }
        for tool in tools.tools
    ]
    operations += [
        {
            "kind": "resource",
            "name": item.name,
            "effect": item.meta["groundkit/effect"],
            "uri": uri,
            "mimeType": item.mime_type,
        }
        for item, uri in [(r, str(r.uri)) for r in resources.resources]
        + [(t, t.uri_template) for t in templates.resource_templates]
    ]
    operations += [
        {
            "kind": "prompt",
            "name": prompt.name,
            "effect": prompt.meta["groundkit/effect"],
            "arguments": [{"name": a.name, "required": a.required} for a in prompt.arguments],
        }
        for prompt in prompts.prompts
    ]
    assert {op["effect"] for op in operations} == {"read_only"}
    operations.sort(key=lambda op: (op["kind"], op["name"]))
    canonical = json.dumps(operations, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    digest = "sha256:" + hashlib.sha256(canonical.encode("utf-8")).hexdigest()
    for listed in (tools, resources, templates, prompts):
        assert listed.meta["groundkit/registry-digest"] == digest
