// The official TypeScript MCP SDK (@modelcontextprotocol/sdk, the client inside Claude Desktop,
// Claude Code, Cursor and VS Code) against `grk serve` and `hello`, over stdio and Streamable
// HTTP. The SDK validates every `structuredContent` against the tool's `outputSchema`, so a
// result that does not match its schema fails the call here as it would in those clients.
// Resources and templates are listed and read through the SDK's own resource methods.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ResourceUpdatedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";

import { GRK, HELLO, corpus, serve } from "./support.mjs";

const fx = corpus();
const servers = [];

async function connect(transport) {
  const client = new Client({ name: "groundkit-sdk-test", version: "1.0.0" });
  await client.connect(transport);
  return client;
}

const targets = {
  "grk stdio": () =>
    new StdioClientTransport({ command: GRK, args: [...fx.grkArgs, "serve", "--stdio"], stderr: "ignore" }),
  "grk http": async () => {
    const server = await serve(GRK, [...fx.grkArgs, "serve"]);
    servers.push(server);
    return new StreamableHTTPClientTransport(new URL(`${server.base}/mcp`));
  },
  "hello stdio": () => new StdioClientTransport({ command: HELLO, args: ["--stdio"], stderr: "ignore" }),
  "hello http": async () => {
    const server = await serve(HELLO, []);
    servers.push(server);
    return new StreamableHTTPClientTransport(new URL(`${server.base}/mcp`));
  },
};

after(() => servers.forEach((server) => server.stop()));

/** Call a tool and check the shape every success has: structured content equal to the text. */
async function ok(client, name, args) {
  const result = await client.callTool({ name, arguments: args });
  assert.notEqual(result.isError, true, `${name} ${JSON.stringify(args)}: ${JSON.stringify(result)}`);
  assert.deepEqual(JSON.parse(result.content[0].text), result.structuredContent);
  return result.structuredContent;
}

/** Call a tool that must fail: an `isError` result (not a thrown error) whose text is the problem. */
async function fails(client, name, args, kind, field) {
  const result = await client.callTool({ name, arguments: args });
  const what = `${name} ${JSON.stringify(args)}: ${JSON.stringify(result)}`;
  assert.equal(result.isError, true, what);
  assert.equal(result.structuredContent, undefined, what);
  const problem = JSON.parse(result.content[0].text);
  assert.equal(problem.kind, kind, what);
  assert.match(problem.request_id, /^[0-9a-f]{32}$/, what);
  if (field !== undefined) assert.equal(problem.field, field, what);
  return problem;
}

for (const mode of ["grk stdio", "grk http"]) {
  describe(`TypeScript SDK against ${mode}`, () => {
    let client;
    before(async () => {
      client = await connect(await targets[mode]());
    });
    after(() => client.close());

    test("lists exactly the four read-only tools, each with both schemas", async () => {
      const { tools } = await client.listTools();
      assert.deepEqual(tools.map((t) => t.name).sort(), ["fetch_chunk", "index_status", "list_collections", "search"]);
      for (const tool of tools) {
        assert.ok(tool.description.length > 20, tool.name);
        assert.equal(tool.annotations.readOnlyHint, true, tool.name);
        assert.equal(tool.inputSchema.type, "object", tool.name);
        assert.equal(tool.outputSchema.type, "object", tool.name);
      }
    });

    test("calls every tool: text, extracted and drifted answers validate against the output schemas", async () => {
      assert.deepEqual(await ok(client, "list_collections", {}), { collections: ["papers"] });
      const tea = await ok(client, "search", { collection: "papers", query: "green tea temperature", top_k: 1 });
      assert.equal(tea.results[0].rank, 1);
      assert.equal(tea.results[0].citation.source, "tea.md");
      assert.equal(tea.results[0].citation.source_class, "text");
      const verified = await ok(client, "fetch_chunk", { collection: "papers", chunk_id: tea.results[0].chunk_id });
      assert.equal(verified.verification, "verified");
      assert.equal(verified.content, tea.results[0].content);

      const bike = await ok(client, "search", { collection: "papers", query: "bicycle chain", mode: "lexical" });
      assert.equal(bike.results[0].citation.source, "page.html");
      assert.equal(bike.results[0].citation.source_class, "extracted");
      assert.ok(bike.results[0].citation.extractor, "an extracted hit names its extractor");

      const keeper = await ok(client, "search", { collection: "papers", query: "lighthouse keeper" });
      writeFileSync(fx.drift, "The lighthouse was automated and nobody logs freighters any more.\n");
      const drifted = await ok(client, "fetch_chunk", { collection: "papers", chunk_id: keeper.results[0].chunk_id });
      writeFileSync(fx.drift, "The lighthouse keeper logs every passing freighter.\n");
      assert.equal(drifted.verification, "drifted");
      assert.equal(drifted.content, undefined, "a drifted chunk carries no content");

      const status = await ok(client, "index_status", { collection: "papers" });
      assert.equal(status.collection, "papers");
      assert.equal(status.document_count, 3);
    });

    test("snippet and paged answers validate, and the pages are one ranking cut up", async () => {
      const query = "green tea bicycle chain lighthouse keeper";
      const whole = await ok(client, "search", { collection: "papers", query, detail: "ids" });
      assert.equal(whole.results.length, 3);
      assert.equal(whole.results[0].content, undefined, "ids carry no text");
      assert.equal(whole.next_cursor, undefined, "one page holds every hit");
      let cursor;
      for (const [i, expected] of whole.results.entries()) {
        const page = await ok(client, "search", {
          collection: "papers", query, top_k: 1, detail: "snippets", max_chars: 2000,
          ...(cursor ? { cursor } : {}),
        });
        const [hit] = page.results;
        assert.equal(hit.rank, i + 1);
        assert.equal(hit.chunk_id, expected.chunk_id);
        assert.equal(page.metadata.detail, "snippets");
        if (hit.citation.source_class === "text") {
          const source = readFileSync(join(fx.base, hit.citation.source));
          const { start_offset, end_offset, text, matches } = hit.snippet;
          assert.equal(source.subarray(start_offset, end_offset).toString(), text);
          assert.ok(matches.length > 0, JSON.stringify(hit.snippet));
        }
        cursor = page.next_cursor;
        assert.equal(cursor === undefined, i === 2, `page ${i + 1}: ${cursor}`);
      }
      // Each hit is linked to its chunk resource, which reads as fetch_chunk's verified answer.
      const linked = await client.callTool({ name: "search", arguments: { collection: "papers", query, detail: "ids" } });
      const links = linked.content.filter((block) => block.type === "resource_link");
      assert.deepEqual(links.map((l) => l.uri), whole.results.map((r) => `grk://papers/chunks/${r.chunk_id}`));
      const read = await client.readResource({ uri: links[0].uri });
      const chunk = JSON.parse(read.contents[0].text);
      assert.equal(chunk.chunk_id, whole.results[0].chunk_id);
      assert.equal(chunk.verification, "verified");
      // A filter leaves out exactly the chunks it names, and keeps the others' ranks in order;
      // several collections ("*": every one) answer with each hit's collection.
      const first = whole.results[0].citation.source;
      const filtered = await ok(client, "search", { collection: "papers", query, detail: "ids", filter: { exclude_paths: [first] } });
      assert.deepEqual(filtered.results.map((r) => r.chunk_id), whole.results.slice(1).map((r) => r.chunk_id));
      const every = await ok(client, "search", { collection: "*", query, detail: "ids" });
      assert.deepEqual(every.results.map((r) => [r.collection, r.chunk_id]), whole.results.map((r) => ["papers", r.chunk_id]));
      const stale = await ok(client, "search", { collection: "papers", query, top_k: 1 });
      await fails(client, "search", { collection: "papers", query: "tea", top_k: 1, cursor: stale.next_cursor },
        "validation_error", "cursor");
    });

    test("invalid calls come back as isError results with their kind, never as thrown errors", async () => {
      const cases = [
        ["search", { collection: "nope", query: "tea" }, "collection_not_found"],
        ["index_status", { collection: "nope" }, "collection_not_found"],
        ["search", { collection: "../etc", query: "tea" }, "validation_error", "collection"],
        ["search", { collection: "papers", query: "tea", rerank: true }, "reranker_not_configured"],
        ["search", { collection: "papers", query: "tea", mode: "dense" }, "dense_unavailable"],
        ["search", { collection: "papers", query: "tea", mode: "hybrid" }, "dense_unavailable"],
        ["search", { collection: "papers" }, "invalid_request", "query"],
        ["search", { collection: "papers", query: "" }, "validation_error", "query"],
        ["search", { collection: "papers", query: "tea", top_k: 0 }, "validation_error", "top_k"],
        ["search", { collection: "papers", query: "tea", top_k: 101 }, "validation_error", "top_k"],
        ["search", { collection: "papers", query: "tea", top_k: "5" }, "invalid_request", "top_k"],
        ["search", { collection: "papers", query: "tea", top_k: null }, "invalid_request", "top_k"],
        ["search", { collection: "papers", query: "tea", mode: "fuzzy" }, "invalid_request", "mode"],
        ["search", { collection: "papers", query: "tea", limit: 3 }, "invalid_request"],
        ["fetch_chunk", { collection: "papers", chunk_id: "0".repeat(32) }, "chunk_not_found"],
        ["fetch_chunk", { collection: "papers", chunk_id: "x".repeat(129) }, "validation_error", "chunk_id"],
      ];
      for (const [name, args, kind, field] of cases) {
        await fails(client, name, args, kind, field);
      }
    });

    test("reads a chunk as fetch_chunk's verified answer, a drifted one as its verdict, and a status", async () => {
      const { resourceTemplates } = await client.listResourceTemplates();
      assert.deepEqual(resourceTemplates.map((t) => t.uriTemplate).sort(), [
        "grk://{collection}/chunks/{chunk_id}",
        "grk://{collection}/status",
      ]);
      const { resources } = await client.listResources();
      assert.deepEqual(resources.map((r) => r.uri), ["grk://collections"]);
      const read = async (uri) => {
        const { contents } = await client.readResource({ uri });
        assert.equal(contents.length, 1);
        assert.equal(contents[0].uri, uri);
        assert.equal(contents[0].mimeType, "application/json");
        return JSON.parse(contents[0].text);
      };
      const keeper = await ok(client, "search", { collection: "papers", query: "lighthouse keeper" });
      const uri = `grk://papers/chunks/${keeper.results[0].chunk_id}`;
      const verified = await read(uri);
      assert.equal(verified.verification, "verified");
      assert.equal(verified.content, keeper.results[0].content);
      writeFileSync(fx.drift, "The lighthouse was automated and nobody logs freighters any more.\n");
      const drifted = await read(uri);
      writeFileSync(fx.drift, "The lighthouse keeper logs every passing freighter.\n");
      assert.equal(drifted.verification, "drifted");
      assert.equal(drifted.content, undefined, "a drifted chunk reads without its stored text");
      assert.equal((await read("grk://papers/status")).document_count, 3);
      await assert.rejects(client.readResource({ uri: "grk://..%2Fetc/status" }), (err) => err.code === -32602);
      await assert.rejects(client.readResource({ uri: "grk://nope/status" }), (err) => err.code === -32002);
    });

    test("an unknown collection tells the caller to list the collections", async () => {
      const problem = await fails(client, "search", { collection: "nope", query: "tea" }, "collection_not_found");
      assert.match(problem.detail, /list_collections/);
    });
  });
}

for (const mode of ["hello stdio", "hello http"]) {
  describe(`TypeScript SDK against ${mode}`, () => {
    let client;
    before(async () => {
      client = await connect(await targets[mode]());
    });
    after(() => client.close());

    test("lists and calls every tool", async () => {
      const { tools } = await client.listTools();
      assert.deepEqual(tools.map((t) => t.name).sort(), ["greet", "list_languages", "text_stats"]);
      const greeting = await ok(client, "greet", { language: "sw", name: "Amani" });
      assert.equal(greeting.message, "Habari, Amani!");
      const languages = await ok(client, "list_languages", {});
      assert.deepEqual(languages.languages.map((l) => l.code), ["de", "en", "es", "fr", "sw"]);
      const stats = await ok(client, "text_stats", { text: "the cat and the hat", top: 1 });
      assert.deepEqual(stats.top_words, [{ word: "the", count: 2 }]);
      const empty = await ok(client, "text_stats", { text: "..." });
      assert.equal(empty.longest_word, undefined, "an absent word is omitted, not null");
    });

    test("lists and reads a resource and a template", async () => {
      const { resources } = await client.listResources();
      assert.deepEqual(resources.map((r) => [r.uri, r.name, r.mimeType]), [["hello://languages", "languages", "text/plain"]]);
      const { resourceTemplates } = await client.listResourceTemplates();
      assert.deepEqual(resourceTemplates.map((t) => [t.uriTemplate, t.name, t.title]), [
        ["hello://greetings/{language}/{name}", "greeting", "A greeting"],
      ]);
      const languages = await client.readResource({ uri: "hello://languages" });
      assert.match(languages.contents[0].text, /^fr\tFrench\tBonjour$/m);
      const greeting = await client.readResource({ uri: "hello://greetings/sw/Amani" });
      assert.deepEqual(greeting.contents, [{ uri: "hello://greetings/sw/Amani", mimeType: "text/plain", text: "Habari, Amani!" }]);
      await assert.rejects(client.readResource({ uri: "hello://nothing" }), (err) => err.code === -32002);
    });

    test("lists and gets a prompt and completes its arguments", async () => {
      const { prompts } = await client.listPrompts();
      assert.deepEqual(prompts.map((p) => [p.name, p.title, p.arguments.map((a) => [a.name, a.required])]), [
        ["greeting_card", "Write a greeting card", [["language", true], ["name", true], ["occasion", false]]],
      ]);
      const card = await client.getPrompt({ name: "greeting_card", arguments: { language: "de", name: "Jo", occasion: "a wedding" } });
      assert.deepEqual(card.messages, [
        { role: "user", content: { type: "text", text: 'Write a two-line greeting card for a wedding in German. Open it with "Hallo, Jo!".' } },
      ]);
      const codes = await client.complete({ ref: { type: "ref/prompt", name: "greeting_card" }, argument: { name: "language", value: "s" } });
      assert.deepEqual(codes.completion.values, ["sw"]);
      await assert.rejects(client.getPrompt({ name: "greeting_card", arguments: { name: "Jo" } }), (err) => err.code === -32602);
    });

    test("invalid calls come back as isError results with their kind", async () => {
      await fails(client, "greet", { language: "FR", name: "x" }, "validation_error", "language");
      await fails(client, "greet", { language: "zz", name: "x" }, "not_found");
      await fails(client, "greet", { language: "fr" }, "invalid_request", "name");
      await fails(client, "text_stats", { text: "a b", top: 0 }, "validation_error", "top");
      await fails(client, "text_stats", { text: 3 }, "invalid_request", "text");
    });
  });
}

for (const mode of ["stdio", "http"]) {
  test(`TypeScript SDK hears of each new generation of a collection it follows, over ${mode}`, async () => {
    const root = mkdtempSync(join(tmpdir(), "grk-node-live-"));
    const base = join(root, "corpus");
    mkdirSync(base);
    const grkArgs = ["--index-dir", join(root, "index"), "--base-dir", base];
    const ingest = () =>
      execFileSync(GRK, [...grkArgs, "ingest", "--collection", "live", base], { stdio: ["ignore", "ignore", "pipe"] });
    writeFileSync(join(base, "tea.md"), "Green tea is steeped at 80 degrees.\n");
    ingest();
    let transport;
    if (mode === "stdio") {
      transport = new StdioClientTransport({ command: GRK, args: [...grkArgs, "serve", "--stdio"], stderr: "ignore" });
    } else {
      const server = await serve(GRK, [...grkArgs, "serve"]);
      servers.push(server);
      transport = new StreamableHTTPClientTransport(new URL(`${server.base}/mcp`));
    }
    const uri = "grk://live/status";
    const client = new Client({ name: "groundkit-sdk-test", version: "1.0.0" });
    const updated = new Promise((resolve) =>
      client.setNotificationHandler(ResourceUpdatedNotificationSchema, (note) => {
        if (note.params.uri === uri) resolve();
      }),
    );
    await client.connect(transport);
    assert.equal(client.getServerCapabilities().resources.subscribe, true);
    await client.subscribeResource({ uri });
    writeFileSync(join(base, "kelp.md"), "Kelp forests grow in cold water.\n");
    ingest();
    let timer;
    const late = new Promise((_, reject) => {
      timer = setTimeout(() => reject(new Error("no notifications/resources/updated within 20 s")), 20000);
    });
    await Promise.race([updated, late]);
    clearTimeout(timer);
    const status = await client.readResource({ uri });
    assert.equal(JSON.parse(status.contents[0].text).document_count, 2);
    await client.close();
  });
}
