// MCP Inspector (2.x) in CLI mode against `grk serve`, over stdio and Streamable HTTP: its
// strict tools/list reports no schema portability warning, every tool answers a valid call,
// invalid calls come back as isError results (Inspector exit code 5) with the right kind, and
// it lists and reads the resources and lists and gets the prompt.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";

import { GRK, corpus, serve } from "./support.mjs";

const require = createRequire(import.meta.url);
const launcher = join(
  dirname(require.resolve("@modelcontextprotocol/inspector/package.json")),
  "clients/launcher/build/index.js",
);
// The Inspector keeps a catalog and secrets under HOME; give it one of its own.
const home = mkdtempSync(join(tmpdir(), "inspector-home-"));
const fx = corpus();

/** Run the Inspector CLI against `target` (a command line or a URL): exit code and JSON output. */
function inspect(target, args) {
  // `--format` comes after `args` so that it ends a variadic option (`--prompt-args a=1 b=2`)
  // before the target.
  const run = spawnSync(process.execPath, [launcher, "--cli", ...args, "--format", "json", ...target], {
    env: { ...process.env, HOME: home },
    encoding: "utf8",
    timeout: 60_000,
  });
  const out = run.stdout.trim();
  return { status: run.status, json: out ? JSON.parse(out) : undefined, stderr: run.stderr };
}

function call(target, name, args) {
  return inspect(target, ["--method", "tools/call", "--tool-name", name, "--tool-args-json", JSON.stringify(args)]);
}

for (const transport of ["stdio", "http"]) {
  describe(`MCP Inspector CLI against grk serve over ${transport}`, () => {
    let target;
    let server;
    before(async () => {
      if (transport === "stdio") {
        target = [GRK, ...fx.grkArgs, "serve", "--stdio"];
      } else {
        server = await serve(GRK, [...fx.grkArgs, "serve"]);
        target = [`${server.base}/mcp`];
      }
    });
    after(() => server?.stop());

    test("a strict tools/list finds no schema portability warning", () => {
      const listed = inspect(target, ["--method", "tools/list", "--strict"]);
      assert.equal(listed.status, 0, listed.stderr);
      const names = listed.json.result.tools.map((t) => t.name).sort();
      assert.deepEqual(names, ["fetch_chunk", "index_status", "list_collections", "search"]);
      // Inspector warns per schema construct it finds unportable (a `type` array, ...), and
      // its Ajv warns per non-standard `format`: neither may appear.
      assert.doesNotMatch(listed.stderr, /Warning: tool|Issue:/);
      assert.doesNotMatch(listed.stderr, /unknown format/);
    });

    test("every tool answers a valid call with structured content", () => {
      const found = call(target, "search", { collection: "papers", query: "bicycle chain", top_k: 1 });
      assert.equal(found.status, 0, found.stderr);
      const hit = found.json.result.structuredContent.results[0];
      assert.equal(hit.citation.source_class, "extracted");
      const fetched = call(target, "fetch_chunk", { collection: "papers", chunk_id: hit.chunk_id });
      assert.equal(fetched.status, 0, fetched.stderr);
      assert.equal(fetched.json.result.structuredContent.verification, "verified");
      const listed = call(target, "list_collections", {});
      assert.deepEqual(listed.json.result.structuredContent, { collections: ["papers"] });
      const status = call(target, "index_status", { collection: "papers" });
      assert.equal(status.json.result.structuredContent.document_count, 3);
    });

    test("a filtered snippet answer pages on with its cursor", () => {
      const filter = { exclude_paths: ["**/drift.txt"] };
      const query = "green tea bicycle chain lighthouse keeper";
      const args = { collection: "papers", query, top_k: 1, detail: "snippets", filter };
      const first = call(target, "search", args);
      assert.equal(first.status, 0, first.stderr);
      const page = first.json.result.structuredContent;
      assert.equal(page.results[0].rank, 1);
      assert.ok(page.results[0].snippet.text.length > 0, JSON.stringify(page));
      assert.equal(page.results[0].content, undefined);
      assert.match(page.next_cursor, /^[0-9a-f]{50}$/);
      const second = call(target, "search", { ...args, cursor: page.next_cursor });
      assert.equal(second.status, 0, second.stderr);
      const next = second.json.result.structuredContent;
      assert.equal(next.results[0].rank, 2);
      assert.notEqual(next.results[0].chunk_id, page.results[0].chunk_id);
      // Three sources match; the filter leaves out one, so the second page is the last.
      assert.equal(next.next_cursor, undefined, JSON.stringify(next));
      for (const hit of [...page.results, ...next.results]) {
        assert.doesNotMatch(hit.citation.source, /drift/);
      }
      const bad = call(target, "search", { ...args, filter: { paths: ["[x"] } });
      assert.equal(bad.json.result.isError, true, JSON.stringify(bad.json));
      const problem = JSON.parse(bad.json.result.content[0].text);
      assert.equal(problem.kind, "validation_error");
      assert.equal(problem.field, "filter.paths[0]");
    });

    test("resources are listed and read, and the prompt is listed and got", () => {
      const templates = inspect(target, ["--method", "resources/templates/list"]);
      assert.equal(templates.status, 0, templates.stderr);
      assert.deepEqual(templates.json.result.resourceTemplates.map((t) => t.uriTemplate).sort(), [
        "grk://{collection}/chunks/{chunk_id}",
        "grk://{collection}/status",
      ]);
      const status = inspect(target, ["--method", "resources/read", "--uri", "grk://papers/status"]);
      assert.equal(status.status, 0, status.stderr);
      assert.equal(JSON.parse(status.json.result.contents[0].text).document_count, 3);
      const prompts = inspect(target, ["--method", "prompts/list"]);
      assert.equal(prompts.status, 0, prompts.stderr);
      assert.deepEqual(prompts.json.result.prompts.map((p) => [p.name, p.arguments.map((a) => a.name)]), [
        ["grounded_answer", ["collection", "question"]],
      ]);
      const got = inspect(target, [
        "--method", "prompts/get", "--prompt-name", "grounded_answer",
        "--prompt-args", "collection=papers", "question=bicycle chain",
      ]);
      assert.equal(got.status, 0, got.stderr);
      const [embedded, instruction] = got.json.result.messages;
      assert.match(JSON.parse(embedded.content.resource.text).content, /bicycle chain/);
      assert.match(instruction.content.text, /Question: bicycle chain$/);
    });

    test("invalid calls are isError results with their kind", () => {
      const cases = [
        ["index_status", { collection: "nope" }, "collection_not_found"],
        ["search", { collection: "papers", query: "tea", top_k: 0 }, "validation_error"],
        ["search", { collection: "papers", query: "tea", mode: null }, "invalid_request"],
      ];
      for (const [name, args, kind] of cases) {
        const failed = call(target, name, args);
        assert.equal(failed.status, 5, `${name} ${JSON.stringify(args)}: ${failed.stderr}`);
        assert.equal(failed.json.result.isError, true);
        assert.equal(failed.json.result.structuredContent, undefined);
        assert.equal(JSON.parse(failed.json.result.content[0].text).kind, kind);
      }
    });
  });
}
