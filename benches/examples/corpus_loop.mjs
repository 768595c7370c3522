// validateTransaction over the shared corpus's transaction cases, in WebAssembly
// (wasm/pkg-node, after wasm-opt) and natively (benches/examples/corpus_loop.rs),
// round for round in the same run: the WebAssembly section of BENCHMARKS.md.
//
//   cargo build --release -p ach-benches --example corpus_loop
//   node benches/examples/corpus_loop.mjs [ITERATIONS] [ROUNDS]
//
// ACH_WASM_PKGS=dir1,dir2 measures several nodejs packages (e.g. builds at two
// opt-levels) in the same rounds; the default is wasm/pkg-node.
//
// Each round validates the 56 cases ITERATIONS times: natively (a child process
// that times itself), then in the module with the request as JSON text (what the
// native loop gets), then as a JS object (what a page passes; the module calls
// JSON.stringify on it). Prints the medians and the ratios, and the best round's.
import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const iterations = Number(process.argv[2] ?? 200);
const rounds = Number(process.argv[3] ?? 15);
const packages = (process.env.ACH_WASM_PKGS ?? 'wasm/pkg-node').split(',').map((dir) => ({
  dir,
  ach: createRequire(import.meta.url)(join(resolve(root, dir), 'ach_wasm.js')),
  text: ownLoop(),
  object: ownLoop(),
}));
const native = join(process.env.CARGO_TARGET_DIR ?? join(root, 'target'), 'release/examples/corpus_loop');

const cases = JSON.parse(readFileSync(join(root, 'tests/corpus/transaction.json'), 'utf8'));
// The same bodies as the native loop: raw text, or the request as JSON text.
const texts = cases.map((c) => c.raw ?? JSON.stringify(c.request));
const objects = cases.map((c) => c.raw ?? (typeof c.request === 'object' && c.request !== null ? c.request : JSON.stringify(c.request)));

function wasmRound(ach, inputs, iterations) {
  const started = process.hrtime.bigint();
  let errors = 0;
  for (let i = 0; i < iterations; i += 1) {
    for (const input of inputs) errors += ach.validateTransaction(input).errors.length;
  }
  const ns = Number(process.hrtime.bigint() - started) / (iterations * inputs.length);
  if (errors === 0) throw new Error('no verdict had errors: the corpus did not load');
  return ns;
}
// Each package and way gets its own compiled copy of the loop: one shared loop
// would see every package's function and verdict shapes at the same call site
// and property access (polymorphic inline caches), slowing all of them.
function ownLoop() {
  return new Function('process', `return ${wasmRound.toString()}`)(process);
}

function nativeRound() {
  const out = execFileSync(native, [String(iterations), '1'], { encoding: 'utf8' });
  return Number(/ns_per_validation ([0-9.]+)/.exec(out)[1]);
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

for (const { ach, text, object } of packages) { // warm up (compile tiers, caches)
  text(ach, texts, iterations);
  object(ach, objects, iterations);
}
nativeRound();
const results = { native: [] };
for (const { dir } of packages) Object.assign(results, { [`${dir} text`]: [], [`${dir} object`]: [] });
for (let r = 0; r < rounds; r += 1) {
  results.native.push(nativeRound());
  for (const { dir, ach, text, object } of packages) {
    results[`${dir} text`].push(text(ach, texts, iterations));
    results[`${dir} object`].push(object(ach, objects, iterations));
  }
}
// Medians, and the best round of each (the least disturbed by other processes
// on a shared machine; its ratios move less from run to run).
const m = Object.fromEntries(Object.entries(results).map(([k, v]) => [k, median(v)]));
const best = Object.fromEntries(Object.entries(results).map(([k, v]) => [k, Math.min(...v)]));
const us = (ns) => (ns / 1000).toFixed(2);
console.log(`transaction cases: ${cases.length}, ${iterations} iterations a round, ${rounds} rounds (median; best round)`);
console.log(`native (check_bytes + verdict JSON): ${us(m.native)} µs per validation; best ${us(best.native)}`);
for (const { dir } of packages) {
  for (const [way, label] of [['text', 'JSON text in'], ['object', 'JS object in']]) {
    const k = `${dir} ${way}`;
    console.log(`wasm ${dir}, ${label}: ${us(m[k])} µs per validation  ratio ${(m[k] / m.native).toFixed(2)}; `
      + `best ${us(best[k])} µs  ratio ${(best[k] / best.native).toFixed(2)}`);
  }
}
