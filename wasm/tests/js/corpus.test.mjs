// The shared JSON case corpus (tests/corpus/*.json) through the WebAssembly
// module: exactly the verdicts, messages and field lists the Rust test
// (tests/tests/corpus.rs) checks natively, so the hosts cannot drift.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ach, repoRoot } from './module.mjs';

const validators = {
  transaction: ach.validateTransaction,
  customer: ach.validateCustomer,
  merchant: ach.validateMerchant,
};

const dir = join(repoRoot, 'tests/corpus');
const files = readdirSync(dir).filter((f) => f.endsWith('.json')).sort();

/** What a page would pass: the object itself; `raw` text (malformed JSON, exact
 * number literals) and non-object requests as JSON text, which the module reads
 * as the request body's text. */
function argument(c) {
  if (c.raw !== undefined) return c.raw;
  return typeof c.request === 'object' && c.request !== null ? c.request : JSON.stringify(c.request);
}

let count = 0;
for (const file of files) {
  const cases = JSON.parse(readFileSync(join(dir, file), 'utf8'));
  for (const c of cases) {
    count += 1;
    test(`${c.kind} / ${c.name}`, () => {
      const verdict = validators[c.kind](argument(c));
      assert.deepEqual(Object.keys(verdict).sort(), ['errors', 'message', 'valid']);
      assert.equal(verdict.valid, c.valid);
      assert.equal(verdict.message, c.message);
      assert.deepEqual(verdict.errors.map((e) => [e.field, e.code]), c.fields);
      for (const e of verdict.errors) {
        assert.equal(typeof e.message, 'string');
        assert.ok(e.message.length > 0, `${e.field} has a message`);
      }
    });
  }
}

test('the corpus has every kind and both verdicts', () => {
  assert.ok(count >= 60, `only ${count} cases`);
  const all = files.flatMap((f) => JSON.parse(readFileSync(join(dir, f), 'utf8')));
  for (const kind of Object.keys(validators)) {
    assert.ok(all.some((c) => c.kind === kind && c.valid), `no valid ${kind} case`);
    assert.ok(all.some((c) => c.kind === kind && !c.valid), `no invalid ${kind} case`);
  }
});
