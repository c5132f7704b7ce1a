// The size of search answers in tokens: each query of a BEIR queries file is searched over REST
// with the given arguments, and each answer's JSON, as the server sent it, is counted in
// characters and in cl100k_base tokens (gpt-tokenizer, the encoding of GPT-4 and of many
// agents' token budgets). Prints the median, the 99th percentile and the largest of each.
//
//   node bench/answer_tokens.mjs URL COLLECTION QUERIES.jsonl '{"top_k": 10}'
import { readFileSync } from "node:fs";
import { encode } from "gpt-tokenizer/encoding/cl100k_base";

const [url, collection, queriesFile, extra = "{}"] = process.argv.slice(2);
const queries = readFileSync(queriesFile, "utf8")
  .split("\n")
  .filter((line) => line.trim())
  .map((line) => JSON.parse(line).text);
const chars = [];
const tokens = [];
let truncated = 0;
for (const query of queries) {
  const body = JSON.stringify({ collection, query, ...JSON.parse(extra) });
  const response = await fetch(`${url}/search`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body,
  });
  const text = await response.text();
  if (response.status !== 200) throw new Error(`${response.status}: ${text}`);
  chars.push([...text].length);
  tokens.push(encode(text).length);
  if (JSON.parse(text).metadata.truncated) truncated += 1;
}
const at = (values, q) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
};
const show = (values) => `p50 ${at(values, 0.5)}, p99 ${at(values, 0.99)}, max ${Math.max(...values)}`;
console.log(`${extra}: ${queries.length} queries, ${truncated} answers cut`);
console.log(`  characters ${show(chars)}`);
console.log(`  tokens     ${show(tokens)}`);
