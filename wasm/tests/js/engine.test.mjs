// `class Engine` in node: the whole service in memory, answering exactly as the
// HTTPS API does. A sandbox engine on its own clock: partner (operator key),
// merchant submitted and approved, two debits, one voided, the clock past the
// 6 PM ET cut-off, then both feeds.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ach, repoRoot } from './module.mjs';

const OPERATOR = 'ok_node_test_operator_key_0123456789';
const id = (prefix) => new RegExp(`^${prefix}_[0-9A-Za-z]{22}$`);
const key = (prefix) => new RegExp(`^${prefix}_[0-9A-Za-z]{32}$`);

/** A status change as the feeds show it. */
function change(transactionId, status, at, extra = {}) {
  return {
    change_timestamp: at, effective_date: null, origination_date: null, reason: null,
    return_code: null, return_date: null, settlement_date: null, status,
    transaction_id: transactionId, ...extra,
  };
}

test('a sandbox lifecycle with exact envelopes', () => {
  const engine = new ach.Engine({ operatorKey: OPERATOR, sandbox: true, start: '2026-11-23T10:00:00-05:00' });
  const call = (request) => {
    const answer = engine.request(request);
    assert.deepEqual(Object.keys(answer).sort(), ['body', 'status']);
    return answer;
  };

  const partner = call({ method: 'POST', path: '/admin/partners', apiKey: OPERATOR, body: { name: 'Node Partner' } });
  assert.equal(partner.status, 201);
  const { partner_id: pid, api_key: partnerKey } = partner.body.payload;
  assert.match(pid, id('par'));
  assert.match(partnerKey, key('pk'));
  assert.deepEqual(partner.body, { success: true, payload: { partner_id: pid, api_key: partnerKey } });

  const application = JSON.parse(readFileSync(join(repoRoot, 'examples/requests/merchant.json'), 'utf8'));
  application.partner_id = pid;
  const submitted = call({ method: 'POST', path: '/merchants', apiKey: partnerKey, body: application });
  assert.equal(submitted.status, 201);
  const mid = submitted.body.id;
  assert.match(mid, id('mer'));
  assert.deepEqual(submitted.body, { success: true, id: mid });

  const approved = call({
    method: 'POST', path: `/admin/merchants/${mid}/approve`, apiKey: OPERATOR,
    body: { limits: { max_transaction_amount: '10000.00' } },
  });
  assert.equal(approved.status, 200);
  const merchantKey = approved.body.payload.api_key;
  assert.match(merchantKey, key('mk'));
  assert.deepEqual(Object.keys(approved.body.payload).sort(), ['api_key', 'limits', 'merchant_id']);
  assert.equal(approved.body.payload.merchant_id, mid);
  assert.equal(approved.body.payload.limits.max_transaction_amount, 10000);

  const debit = (amount) => ({
    partner_id: pid, merchant_id: mid, amount, description: 'node', type: 'debit', standard_entry_class: 'PPD',
    customer: { name: 'Ada Lovelace', routing_number: '021000021', account_number: '987654321', account_type: 'checking' },
  });
  const created = [];
  for (const amount of ['10.00', '20.00']) {
    const answer = call({ method: 'POST', path: '/transactions', apiKey: partnerKey, body: debit(amount) });
    assert.equal(answer.status, 201);
    assert.match(answer.body.payload.id, id('txn'));
    assert.deepEqual(answer.body, { success: true, payload: { id: answer.body.payload.id } });
    created.push(answer.body.payload.id);
  }
  const [voided, kept] = created;

  const voidAnswer = call({ method: 'PUT', path: `/transactions/${voided}/void`, query: { partner_id: pid }, apiKey: partnerKey });
  assert.deepEqual(voidAnswer, { status: 200, body: { success: true, payload: { id: voided, status: 'voided' } } });

  const clock = call({ method: 'POST', path: '/admin/clock', apiKey: OPERATOR, body: { now: '2026-11-23T18:30:00-05:00' } });
  assert.deepEqual(clock, {
    status: 200,
    body: { success: true, payload: { now: '2026-11-23T23:30:00+00:00', originated: 1, settled: 0 } },
  });

  const originated = { origination_date: '2026-11-23', effective_date: '2026-11-24', settlement_date: '2026-11-27' };
  const expected = [
    change(voided, 'A', '2026-11-23 10:00:00'),
    change(kept, 'A', '2026-11-23 10:00:00'),
    change(voided, 'R', '2026-11-23 10:00:00', { reason: 'Voided' }),
    change(kept, 'B', '2026-11-23 18:00:00', originated),
  ];
  const feed = call({ method: 'GET', path: '/status-changes/0', query: { partner_id: pid }, apiKey: partnerKey });
  assert.equal(feed.status, 200);
  assert.equal(feed.body.success, 'true');
  assert.deepEqual(feed.body.payload.changes, expected);
  assert.deepEqual(feed.body.payload.changes.filter((c) => c.transaction_id === kept).map((c) => c.status), ['A', 'B']);
  const next = call({
    method: 'GET', path: `/status-changes/${feed.body.payload.new_pointer}`, query: { partner_id: pid }, apiKey: partnerKey,
  });
  assert.deepEqual(next.body.payload.changes, []);

  const events = call({ method: 'GET', path: '/events', apiKey: merchantKey });
  assert.equal(events.status, 200);
  assert.deepEqual(Object.keys(events.body).sort(), ['events', 'exists_more_events', 'new_pointer']);
  assert.equal(events.body.exists_more_events, false);
  assert.deepEqual(
    events.body.events,
    expected.map((c, i) => ({ id: `evt_${i + 1}`, type: 'transaction.status_changed', occurred_at: c.change_timestamp, ...c })),
  );

  // Read one back: its history is the feed's, its account cut to four digits.
  const read = call({ method: 'GET', path: `/transactions/${kept}`, query: { partner_id: pid }, apiKey: partnerKey });
  assert.equal(read.status, 200);
  assert.deepEqual(read.body.payload.history, expected.filter((c) => c.transaction_id === kept));
  assert.deepEqual(read.body.payload.customer, {
    name: 'Ada Lovelace', routing_number: '021000021', account_number_last4: '4321', account_type: 'checking',
  });
  assert.equal(JSON.stringify(read.body).includes('987654321'), false);
  assert.deepEqual([read.body.payload.amount, read.body.payload.status, read.body.payload.return], [20, 'B', null]);
  // A page of one by the merchant's key, then the next by its cursor, then the end.
  const first = call({ method: 'GET', path: '/transactions', query: { limit: '1' }, apiKey: merchantKey });
  assert.deepEqual(first.body.payload.transactions.map((t) => t.id), [kept]);
  const second = call({
    method: 'GET', path: '/transactions', query: { limit: '1', after: first.body.payload.next_cursor }, apiKey: merchantKey,
  });
  assert.deepEqual(second.body.payload.transactions.map((t) => t.id), [voided]);
  assert.equal(second.body.payload.next_cursor, null);
  const forged = call({ method: 'GET', path: '/transactions', query: { after: 'AAAA' }, apiKey: merchantKey });
  assert.deepEqual([forged.status, forged.body.errors[0].field], [422, 'after']);
});

test('failures are data with the API envelope', () => {
  const engine = new ach.Engine({ operatorKey: OPERATOR, sandbox: true, start: '2026-11-23T10:00:00-05:00' });
  assert.deepEqual(engine.request({ method: 'GET', path: '/categories' }), {
    status: 401, body: { success: false, message: 'Authentication failed.' },
  });
  const wrongPath = engine.request({ method: 'GET', path: '/nope', apiKey: OPERATOR });
  assert.equal(wrongPath.status, 404);
  assert.equal(wrongPath.body.message, 'Failed to accept this transaction');
  const backwards = engine.request({ method: 'POST', path: '/admin/clock', apiKey: OPERATOR, body: { now: '2026-11-01T00:00:00Z' } });
  assert.equal(backwards.status, 422, 'the clock never moves backwards');
});

test('misuse of Engine throws Error', () => {
  const isError = (pattern) => (e) => e instanceof Error && pattern.test(e.message);
  assert.throws(() => new ach.Engine({ bogus: 1 }), isError(/^unknown option 'bogus'/));
  assert.throws(() => new ach.Engine({ sandbox: 'yes' }), isError(/^sandbox must be true or false$/));
  assert.throws(() => new ach.Engine(7), isError(/^new Engine expects an object or a JSON string$/));
  const engine = new ach.Engine({ sandbox: true });
  assert.throws(() => engine.request(42), isError(/^Engine.request expects an object or a JSON string$/));
  assert.throws(() => engine.request({ method: 'GET', path: '/', apikey: 'x' }), isError(/^unknown request member 'apikey'/));
  engine.free();
  assert.throws(() => engine.request({ method: 'GET', path: '/categories' }), Error, 'a freed engine');
});

/**
 * A sandbox engine whose clock starts at `start`, with a partner named `name`
 * and its approved merchant for `classes` (the example application's when not
 * given).
 */
function tenant({ classes, start = '2026-11-23T10:00:00-05:00', name = 'Node Partner' } = {}) {
  const engine = new ach.Engine({ operatorKey: OPERATOR, sandbox: true, start });
  const call = (request) => engine.request(request);
  const partner = call({ method: 'POST', path: '/admin/partners', apiKey: OPERATOR, body: { name } });
  const { partner_id: pid, api_key: partnerKey } = partner.body.payload;
  const application = JSON.parse(readFileSync(join(repoRoot, 'examples/requests/merchant.json'), 'utf8'));
  application.partner_id = pid;
  if (classes) application.standard_entry_classes = classes;
  const mid = call({ method: 'POST', path: '/merchants', apiKey: partnerKey, body: application }).body.id;
  assert.equal(call({ method: 'POST', path: `/admin/merchants/${mid}/approve`, apiKey: OPERATOR, body: {} }).status, 200);
  return { call, pid, partnerKey, mid };
}

test('a WEB debit needs an account validated for its partner', () => {
  const { call, pid, partnerKey, mid } = tenant({ classes: ['WEB'] });
  const customer = call({
    method: 'POST', path: '/customers', apiKey: partnerKey,
    body: { partner_id: pid, merchant_id: mid, name: 'Ada', routing_number: '021000021', account_number: '24682468', account_type: 'checking' },
  });
  assert.equal(customer.status, 201);
  const token = customer.body.payload.id;
  const debit = {
    partner_id: pid, merchant_id: mid, amount: '19.00', description: 'node', type: 'debit',
    standard_entry_class: 'WEB', customer: { id: token },
  };
  const refused = call({ method: 'POST', path: '/transactions', apiKey: partnerKey, body: debit });
  assert.equal(refused.status, 422);
  assert.deepEqual([refused.body.errors[0].field, refused.body.errors[0].code], ['customer', 'account_not_validated']);

  const started = call({
    method: 'POST', path: `/customers/${token}/validations`, apiKey: partnerKey,
    body: { partner_id: pid, merchant_id: mid, method: 'prenote' },
  });
  assert.equal(started.status, 201);
  assert.match(started.body.payload.id, id('val'));
  assert.equal(started.body.payload.status, 'pending');
  const read = call({
    method: 'GET', path: `/customers/${token}/validations/${started.body.payload.id}`, apiKey: partnerKey,
    query: { partner_id: pid },
  });
  assert.deepEqual(read.body.payload, started.body.payload);
  assert.equal(call({ method: 'POST', path: '/transactions', apiKey: partnerKey, body: debit }).status, 422);
  // The prenote settles 11-27 (a debit, Thanksgiving week); from 12-02 the account takes WEB debits.
  assert.equal(call({ method: 'POST', path: '/admin/clock', apiKey: OPERATOR, body: { now: '2026-12-02T09:00:00-05:00' } }).status, 200);
  const validated = call({
    method: 'GET', path: `/customers/${token}/validations/${started.body.payload.id}`, apiKey: partnerKey,
    query: { partner_id: pid },
  });
  assert.deepEqual([validated.body.payload.status, validated.body.payload.usable_from], ['validated', '2026-12-02']);
  assert.equal(call({ method: 'POST', path: '/transactions', apiKey: partnerKey, body: debit }).status, 201);
});

test('an entry held by a risk rule waits for review, and a rejection ends it', () => {
  const { call, pid, partnerKey, mid } = tenant();
  // A first credit of 1,000.00 or more to an account is held.
  const credit = (amount, account) => ({
    partner_id: pid, merchant_id: mid, amount, description: 'node', type: 'credit', standard_entry_class: 'PPD',
    customer: { name: `Payee ${account}`, routing_number: '021000021', account_number: account, account_type: 'checking' },
  });
  assert.equal(call({ method: 'POST', path: '/transactions', apiKey: partnerKey, body: credit('999.99', '5550001') }).status, 201);
  const held = call({ method: 'POST', path: '/transactions', apiKey: partnerKey, body: credit('2500.00', '5550002') });
  assert.equal(held.status, 201);
  const heldId = held.body.payload.id;
  const reviews = call({ method: 'GET', path: '/admin/reviews', apiKey: OPERATOR });
  assert.equal(reviews.status, 200);
  assert.deepEqual(reviews.body.payload.reviews.map((r) => [r.transaction_id, r.rules, r.status]),
    [[heldId, ['new_account_credit'], 'held']]);
  const rejected = call({ method: 'POST', path: `/admin/reviews/${heldId}/reject`, apiKey: OPERATOR, body: { note: 'payee unknown' } });
  assert.equal(rejected.status, 200);
  assert.deepEqual([rejected.body.payload.status, rejected.body.payload.note], ['rejected', 'payee unknown']);
  const feed = call({ method: 'GET', path: '/status-changes/0', apiKey: partnerKey, query: { partner_id: pid } });
  const last = feed.body.payload.changes.filter((c) => c.transaction_id === heldId).at(-1);
  assert.deepEqual([last.status, last.return_code, last.reason], ['R', null, 'Rejected in review']);
  assert.equal(call({ method: 'POST', path: `/admin/reviews/${heldId}/release`, apiKey: OPERATOR }).status, 409);
});

test('a Same Day ACH debit leaves at the next window and settles that day', () => {
  const { call, pid, partnerKey, mid } = tenant({ start: '2026-11-23T09:00:00-05:00', name: 'Same Day' });
  const debit = (amount) => ({
    method: 'POST', path: '/transactions', apiKey: partnerKey, body: {
      partner_id: pid, merchant_id: mid, amount, description: 'node same day', type: 'debit',
      standard_entry_class: 'PPD', same_day: true,
      customer: { name: 'Ada Lovelace', routing_number: '021000021', account_number: '987654321', account_type: 'checking' },
    },
  });
  const over = call(debit('1000000.01'));
  assert.deepEqual([over.status, over.body.error_code, over.body.errors[0].code], [422, 14, 'same_day_limit']);
  const created = call(debit('12.34'));
  assert.equal(created.status, 201);
  const txn = created.body.payload.id;
  const clock = (now) => call({ method: 'POST', path: '/admin/clock', apiKey: OPERATOR, body: { now } }).body.payload;
  assert.equal(clock('2026-11-23T10:00:00-05:00').originated, 1);
  assert.equal(clock('2026-11-23T13:00:00-05:00').settled, 1);
  const read = call({ method: 'GET', path: `/transactions/${txn}`, query: { partner_id: pid }, apiKey: partnerKey });
  const t = read.body.payload;
  assert.deepEqual(
    [t.same_day, t.status, t.origination_date, t.effective_date, t.settlement_date],
    [true, 'S', '2026-11-23', '2026-11-23', '2026-11-23'],
  );
  assert.deepEqual(t.history.map((c) => [c.status, c.change_timestamp]), [
    ['A', '2026-11-23 09:00:00'], ['B', '2026-11-23 10:00:00'], ['S', '2026-11-23 13:00:00'],
  ]);
});

test('ICL items leave in an image cash letter at the cut-off', () => {
  const { call, pid, partnerKey, mid } = tenant({ start: '2026-11-23T09:00:00-05:00', name: 'Checks', classes: ['PPD', 'ICL'] });
  // A 96 x 40 grey PNG with a bar of ink: a readable check picture.
  const png = 'iVBORw0KGgoAAAANSUhEUgAAAGAAAAAoCAAAAAAk+KDlAAAAMklEQVR42u3TMQ0AAAgEMUTg3yAmMPEMJD0Dna7muAIAAABAFuhgAMAR4GQAAAAAPAYWaIAG6YYmWG0AAAAASUVORK5CYII=';
  const created = call({
    method: 'POST', path: '/transactions', apiKey: partnerKey, body: {
      partner_id: pid, merchant_id: mid, amount: '88.20', description: 'node check', type: 'debit',
      standard_entry_class: 'ICL', check_number: '7001', check_image_front: png, check_image_back: png,
      customer: { name: 'Ada Lovelace', routing_number: '021000021', account_number: '987654321', account_type: 'checking' },
    },
  });
  assert.equal(created.status, 201);
  call({ method: 'POST', path: '/admin/clock', apiKey: OPERATOR, body: { now: '2026-11-23T18:00:00-05:00' } });
  const list = call({ method: 'GET', path: '/admin/image-cash-letters', apiKey: OPERATOR });
  assert.deepEqual(list.body.payload.map((l) => [l.id, l.items, l.total]), [['icl_20261123A', 1, 88.2]]);
  const letter = call({ method: 'GET', path: '/admin/image-cash-letters/icl_20261123A', apiKey: OPERATOR });
  const bytes = Buffer.from(letter.body.payload.content_base64, 'base64');
  // The first record: its 4-byte length, then "01" in EBCDIC (0xF0 0xF1).
  assert.deepEqual([...bytes.subarray(4, 6)], [0xf0, 0xf1]);
  const digest = createHash('sha256').update(bytes).digest('hex');
  assert.equal(digest, list.body.payload[0].sha256);
});
