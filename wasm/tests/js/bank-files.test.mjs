// Bank files through `class Engine` in node, the scenario of tests/c/test_bank_files.c:
// a sandbox cut-off writes one origination file, the operator lists and fetches
// it, the bank's return file (composed here from the fixed NACHA layout) is
// posted back: applied once, counted as already applied the second time, seen in
// the partner's feed as status R with its return code. A malformed file is
// refused with 422 and changes nothing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ach, repoRoot } from './module.mjs';

const OPERATOR = 'ok_node_files_operator_key_0123456789';
const RECORD_LEN = 94;
const BLOCKING_FACTOR = 10;
/** The receiving bank answering the file: its routing number and identification. */
const RDFI_ROUTING = '021000021';
const RDFI_ID = '02100002';

/** Characters `from`..`from + len` of a record, 1-based as Nacha numbers positions. */
const field = (record, from, len) => record.slice(from - 1, from - 1 + len);
const alpha = (value, width) => String(value).padEnd(width, ' ').slice(0, width);
const num = (value, width) => {
  const text = String(value).padStart(width, '0');
  assert.equal(text.length, width, `${value} fits ${width} digits`);
  return text;
};

/** The ABA check digit of an 8-digit routing prefix (weights 3, 7, 1). */
function checkDigit(prefix) {
  const weights = [3, 7, 1, 3, 7, 1, 3, 7];
  const sum = [...prefix].reduce((s, d, i) => s + weights[i] * Number(d), 0);
  return String((10 - (sum % 10)) % 10);
}

/** A NACHA text as records, checking its shape: every line 94 characters followed
 * by "\n", a multiple of ten lines. */
function records(text) {
  assert.ok(text.endsWith('\n'), 'the last record ends with a line feed');
  const lines = text.slice(0, -1).split('\n');
  for (const line of lines) assert.equal(line.length, RECORD_LEN, JSON.stringify(line));
  assert.equal(lines.length % BLOCKING_FACTOR, 0, `${lines.length} records`);
  return lines;
}

/**
 * The bank's return file for `returns` (each `{entry, batch}`: an entry record
 * of an origination file and its batch header) returned with `code`, dated
 * `effective` (YYMMDD). One PPD batch of debit returns (transaction code 26:
 * the original's 27 less one) with addenda 99; controls computed here: counts,
 * entry hash (the 8-digit receiving DFI identifications summed, last 10 digits)
 * and totals.
 */
function returnFile(returns, code, effective) {
  const header = returns[0].batch;
  // A return goes back to the originator's bank.
  const odfi = field(header, 80, 8);
  const out = [
    '101' + ` ${odfi}${checkDigit(odfi)}` + ` ${RDFI_ROUTING}` + effective + '0900' + 'A' + '094101'
      + alpha('ACH SANDBOX', 23) + alpha('RDFI', 23) + alpha('', 8),
    // The original's company name, discretionary data, identification, class and
    // description (positions 5 to 63); the RDFI as the batch's ODFI.
    '5225' + field(header, 5, 59) + alpha('', 6) + effective + alpha('', 3) + '1' + RDFI_ID + num(1, 7),
  ];
  let hash = 0n;
  let debits = 0n;
  returns.forEach(({ entry }, i) => {
    const trace = RDFI_ID + num(i + 1, 7);
    out.push(
      '626' + odfi + checkDigit(odfi) + field(entry, 13, 17) + field(entry, 30, 10) + field(entry, 40, 15)
        + field(entry, 55, 22) + alpha('', 2) + '1' + trace,
      '799' + alpha(code, 3) + field(entry, 80, 15) + alpha('', 6) + field(entry, 4, 8) + alpha('', 44) + trace,
    );
    hash = (hash + BigInt(odfi)) % 10_000_000_000n;
    debits += BigInt(field(entry, 30, 10));
  });
  const count = 2 * returns.length;
  out.push(
    '8225' + num(count, 6) + num(hash, 10) + num(debits, 12) + num(0, 12) + field(header, 41, 10) + alpha('', 25)
      + RDFI_ID + num(1, 7),
  );
  const blocks = Math.ceil((out.length + 1) / BLOCKING_FACTOR);
  out.push('9' + num(1, 6) + num(blocks, 6) + num(count, 8) + num(hash, 10) + num(debits, 12) + num(0, 12) + alpha('', 39));
  while (out.length % BLOCKING_FACTOR !== 0) out.push('9'.repeat(RECORD_LEN));
  for (const record of out) assert.equal(record.length, RECORD_LEN, record);
  return out.map((r) => `${r}\n`).join('');
}

test('a cut-off file fetched and a return file ingested once', () => {
  const engine = new ach.Engine({ operatorKey: OPERATOR, sandbox: true, start: '2026-11-23T10:00:00-05:00' });
  const call = (request, status) => {
    const answer = engine.request(request);
    assert.equal(answer.status, status, JSON.stringify(answer.body));
    return answer.body;
  };
  const operator = (method, path, body) => ({ method, path, apiKey: OPERATOR, ...(body === undefined ? {} : { body }) });

  const { partner_id: pid, api_key: partnerKey } = call(operator('POST', '/admin/partners', { name: 'Node Files' }), 201).payload;
  const application = JSON.parse(readFileSync(join(repoRoot, 'examples/requests/merchant.json'), 'utf8'));
  application.partner_id = pid;
  application.standard_entry_classes = ['PPD'];
  const mid = call({ method: 'POST', path: '/merchants', apiKey: partnerKey, body: application }, 201).id;
  call(operator('POST', `/admin/merchants/${mid}/approve`, { limits: { max_transaction_amount: '10000.00' } }), 200);

  const amounts = ['10.00', '20.00', '30.00'];
  const ids = amounts.map((amount) => call({
    method: 'POST', path: '/transactions', apiKey: partnerKey,
    body: {
      partner_id: pid, merchant_id: mid, amount, description: 'node files', type: 'debit', standard_entry_class: 'PPD',
      customer: { name: 'Ada Lovelace', routing_number: '021000021', account_number: '987654321', account_type: 'checking' },
    },
  }, 201).payload.id);

  assert.deepEqual(call(operator('GET', '/admin/origination-files'), 200), { success: true, payload: [] });
  const clock = call(operator('POST', '/admin/clock', { now: '2026-11-23T18:00:00-05:00' }), 200);
  assert.equal(clock.payload.originated, amounts.length);

  const list = call(operator('GET', '/admin/origination-files'), 200);
  assert.equal(list.success, true);
  assert.equal(list.payload.length, 1, 'one file for the cut-off');
  const [summary] = list.payload;
  assert.deepEqual(Object.keys(summary).sort(), [
    'batches', 'cutoff', 'effective_date', 'entries', 'first_trace', 'id', 'last_trace', 'sha256',
    'total_credit', 'total_debit',
  ]);
  assert.equal(summary.entries, amounts.length);
  assert.equal(summary.effective_date, '2026-11-24');

  const fetched = call(operator('GET', `/admin/origination-files/${summary.id}`), 200);
  const { text, ...rest } = fetched.payload;
  assert.deepEqual(rest, summary, 'the same summary, plus the text');
  const lines = records(text);
  assert.ok(lines[0].startsWith('101'));
  const entries = [];
  let batch;
  for (const line of lines) {
    if (line[0] === '5') batch = line;
    if (line[0] === '6') entries.push({ entry: line, batch });
  }
  assert.equal(entries.length, amounts.length);
  for (const { entry, batch: header } of entries) {
    assert.equal(field(entry, 2, 2), '27', 'a debit to checking');
    assert.equal(field(header, 51, 3), 'PPD');
  }
  assert.equal(field(entries[0].entry, 80, 15), summary.first_trace);
  assert.equal(field(entries.at(-1).entry, 80, 15), summary.last_trace);
  const returned = entries.find(({ entry }) => field(entry, 30, 10) === '0000002000');
  assert.ok(returned, 'the 20.00 debit is in the file');

  // Two days on, the bank returns the 20.00 debit (R01).
  call(operator('POST', '/admin/clock', { now: '2026-11-25T09:00:00-05:00' }), 200);
  const bank = returnFile([returned], 'R01', '261125');
  assert.equal(records(bank).length, BLOCKING_FACTOR);
  const counts = (returns, already) => ({
    success: true, payload: { returns, notices_of_change: 0, unmatched: 0, already_applied: already },
  });
  assert.deepEqual(call(operator('POST', '/admin/return-files', bank), 200), counts(1, 0));
  assert.deepEqual(call(operator('POST', '/admin/return-files', bank), 200), counts(0, 1), 'applied once');

  const feed = call({ method: 'GET', path: '/status-changes/0', query: { partner_id: pid }, apiKey: partnerKey }, 200);
  const returns = feed.payload.changes.filter((c) => c.status === 'R');
  assert.equal(returns.length, 1);
  assert.equal(returns[0].transaction_id, ids[1]);
  assert.equal(returns[0].return_code, 'R01');
  assert.equal(returns[0].return_date, '2026-11-25', 'dated by the return batch');
  assert.deepEqual(feed.payload.changes.filter((c) => c.status === 'B').map((c) => c.transaction_id).sort(), [...ids].sort());

  // Malformed files are refused whole and change nothing: not NACHA at all, and
  // the return file with its batch's entry hash off by one.
  const hello = call(operator('POST', '/admin/return-files', 'hello'), 422);
  assert.equal(hello.success, false);
  const tampered = bank.replace(/^8(.{18})(\d)/m, (_, before, last) => `8${before}${(Number(last) + 1) % 10}`);
  assert.notEqual(tampered, bank);
  const refused = call(operator('POST', '/admin/return-files', tampered), 422);
  assert.ok(refused.errors.some((e) => e.field.endsWith('.entry_hash')), JSON.stringify(refused));
  const after = call({
    method: 'GET', path: `/status-changes/${feed.payload.new_pointer}`, query: { partner_id: pid }, apiKey: partnerKey,
  }, 200);
  assert.deepEqual(after.payload.changes, []);
  assert.equal(call(operator('GET', '/admin/origination-files'), 200).payload.length, 1);
  engine.free();
});
