// Shared by the Node client tests: the binaries under test, a corpus ingested with the real
// `grk ingest`, and servers spawned on a free loopback port.
import { spawn, execFileSync } from "node:child_process";
import { mkdtempSync, mkdirSync, writeFileSync } from "node:fs";
import { createServer, connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

export const GRK = process.env.GRK_BIN;
export const HELLO = process.env.HELLO_BIN;
if (!GRK || !HELLO) {
  throw new Error("set GRK_BIN and HELLO_BIN (tests/clients/run.sh does)");
}

/**
 * `files` (name to text) written into a fresh corpus directory and ingested with the real
 * `grk ingest` as `collection`.
 */
function ingested(prefix, collection, files) {
  const root = mkdtempSync(join(tmpdir(), prefix));
  const base = join(root, "corpus");
  const index = join(root, "index");
  mkdirSync(base);
  for (const [name, text] of Object.entries(files)) {
    writeFileSync(join(base, name), text);
  }
  const grkArgs = ["--index-dir", index, "--base-dir", base];
  execFileSync(GRK, [...grkArgs, "ingest", "--collection", collection, base], {
    stdio: ["ignore", "ignore", "pipe"],
  });
  return { base, index, grkArgs };
}

/** A corpus of three sources (Markdown, HTML, plain text) ingested as collection `papers`. */
export function corpus() {
  const papers = ingested("grk-node-", "papers", {
    "tea.md": "# Tea\n\nGreen tea is steeped at 80 degrees for two minutes.\n",
    "page.html":
      "<html><head><title>Bikes</title></head><body><p>Clean the bicycle chain, then oil each link sparingly.</p></body></html>\n",
    "drift.txt": "The lighthouse keeper logs every passing freighter.\n",
  });
  return { ...papers, drift: join(papers.base, "drift.txt") };
}

/** A free TCP port on 127.0.0.1. */
export function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

function accepts(port) {
  return new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1");
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}

/** Spawn `bin args... --host 127.0.0.1 --port P` and wait until it accepts connections. */
export async function serve(bin, args) {
  const port = await freePort();
  const child = spawn(bin, [...args, "--host", "127.0.0.1", "--port", String(port)], {
    stdio: "ignore",
  });
  for (let i = 0; i < 400; i++) {
    if (await accepts(port)) {
      return { base: `http://127.0.0.1:${port}`, stop: () => child.kill() };
    }
    if (child.exitCode !== null) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  child.kill();
  throw new Error(`${bin} did not start listening on ${port}`);
}
