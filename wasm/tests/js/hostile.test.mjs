// Hostile input through the WebAssembly module itself: the
// router's table (tests/tests/hostile.rs) through `new Engine(...).request(...)`
// and the validators, plus what only JS can pass: wrong argument types (symbols,
// BigInt, getters and toJSON that throw, cyclic objects, proxies, typed arrays of
// invalid UTF-8), strings of many megabytes, calls after `free()`, calls made
// from inside another call.
//
// Every row is answered with a clear refusal: an invalid request or form is
// data (the API's status and envelope with a catalogue message, or a verdict);
// misuse throws a JS `Error`, never a trap (`WebAssembly.RuntimeError`,
// "unreachable"). After every row the module still answers normal requests and
// nothing was stored: neither partner's status-changes feed nor any merchant's
// events feed moved; at the end each merchant's and partner's daily limits,
// set up to leave room for exactly one more debit, still do.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { ach, repoRoot, sharedData } from './module.mjs';

const OPERATOR = 'ok_hostile_operator_key_0123456789abcdef';
const START = '2026-11-23T10:00:00-05:00';
const MB = 1 << 20;
const MERCHANT_APPLICATION = JSON.parse(readFileSync(join(repoRoot, 'examples/requests/merchant.json'), 'utf8'));

// The catalogue, as the corpus has it (tests/hostile/support/catalogue.json; the
// router's test checks it against the engine's): `{}` is a filled placeholder.
const HOSTILE = join(repoRoot, 'tests/hostile');
const CATALOGUE = JSON.parse(readFileSync(join(HOSTILE, 'support/catalogue.json'), 'utf8'));
const AUTHENTICATION_FAILED = 'Authentication failed.';
const escape = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const CATALOGUE_RE = Object.fromEntries(
  Object.entries(CATALOGUE).map(([code, text]) => [code, new RegExp(`^${text.split('{}').map(escape).join('.*')}$`, 's')]),
);
/** Any catalogue message (a verdict carries no code). */
const isCatalogued = (message) => Object.values(CATALOGUE_RE).some((re) => re.test(message));

// ---------------------------------------------------------------- helpers

/** A thrown value is a real `Error`, not a trap, and says something short. */
function assertMisuse(name, fn, pattern) {
  let thrown;
  try {
    fn();
  } catch (e) {
    thrown = e;
  }
  assert.ok(thrown !== undefined, `${name}: did not throw`);
  assert.ok(!(thrown instanceof WebAssembly.RuntimeError), `${name}: a trap: ${thrown}`);
  assert.ok(thrown instanceof Error, `${name}: threw a non-Error ${String(thrown)}`);
  assert.ok(thrown.message.length > 0 && thrown.message.length <= 300, `${name}: a ${thrown.message.length}-character message`);
  if (pattern) assert.match(thrown.message, pattern, name);
  return thrown;
}

/** Call without throwing; a trap or exception fails the row with its name. */
function noThrow(name, fn) {
  try {
    return fn();
  } catch (e) {
    assert.fail(`${name}: threw ${e instanceof WebAssembly.RuntimeError ? 'a trap ' : ''}${e?.constructor?.name}: ${e?.message}`);
  }
}

/** A verdict for an invalid form: data with a catalogue message and every
 * problem's field, code and message; never the large input reflected. */
function assertInvalidVerdict(name, verdict) {
  assert.deepEqual(Object.keys(verdict).sort(), ['errors', 'message', 'valid'], name);
  assert.equal(verdict.valid, false, `${name}: accepted`);
  assert.ok(isCatalogued(verdict.message), `${name}: ${verdict.message} is not a catalogue message`);
  assert.ok(verdict.errors.length > 0, name);
  for (const e of verdict.errors) {
    assert.deepEqual(Object.keys(e).sort(), ['code', 'field', 'message'], name);
    assert.match(e.code, /^[a-z_]+$/, name);
    assert.ok(typeof e.message === 'string' && e.message.length > 0, name);
  }
  assert.ok(JSON.stringify(verdict).length <= 16 * 1024, `${name}: a ${JSON.stringify(verdict).length}-byte verdict`);
}

/** The one problem of the 401 a partner's right key gets without partner_id. */
const PARTNER_ID_REQUIRED = {
  field: 'partner_id', code: 'required',
  message: 'partner_id is required with this key: send it in the body or in the query string',
};

/** The refusal's `[status, code, first field, first problem code]` after
 * checking its envelope (exactly `Authentication failed.` for a 401, with the
 * one problem naming partner_id when a right key came without it). */
function refusal(name, answer) {
  assert.deepEqual(Object.keys(answer).sort(), ['body', 'status'], name);
  const { status, body } = answer;
  const size = JSON.stringify(body).length;
  assert.ok(size <= 16 * 1024, `${name}: a ${size}-byte refusal`);
  assert.equal(body.success, false, `${name}: ${status} ${JSON.stringify(body).slice(0, 300)}`);
  if (status === 401 && body.errors !== undefined) {
    // A partner's right key without partner_id: the 401 names it, nothing more.
    assert.deepEqual(body, { success: false, message: AUTHENTICATION_FAILED, errors: [PARTNER_ID_REQUIRED] }, name);
    return [401, 0, 'partner_id', 'required'];
  }
  if (status === 401) {
    assert.deepEqual(body, { success: false, message: AUTHENTICATION_FAILED }, name);
    return [401, 0, '', ''];
  }
  assert.equal(typeof body.error_code, 'number', `${name}: no error_code: ${JSON.stringify(body).slice(0, 300)}`);
  assert.match(body.message, CATALOGUE_RE[body.error_code], `${name}: not catalogue message ${body.error_code}`);
  assert.equal(body.error_type, 'E', name);
  const first = body.errors?.[0] ?? {};
  return [status, body.error_code, first.field ?? '', first.code ?? ''];
}

/** Judge an answer against a corpus `expect` (tests/hostile/README.md), as
 * ach_tests::hostile::check does. */
function checkAnswer(name, answer, expect, values) {
  const text = JSON.stringify(answer.body);
  const context = `${name}: ${answer.status} ${text.slice(0, 300)}`;
  assert.deepEqual(Object.keys(answer).sort(), ['body', 'status'], name);
  assert.equal(answer.status, expect.status, context);
  if (expect.json) {
    const at = (v, pointer) => pointer.split('/').slice(1).reduce((x, k) => (x === undefined || x === null ? undefined : x[k]), v);
    for (const [pointer, want] of Object.entries(expect.json)) {
      assert.deepEqual(at(answer.body, pointer), want === null ? undefined : expandText(want, values), `${context}: ${pointer}`);
    }
    return;
  }
  assert.ok(text.length <= 16 * 1024, `${name}: a ${text.length}-byte refusal`);
  const first = answer.body.errors?.[0];
  if (expect.status === 401) {
    const exact = { success: false, message: AUTHENTICATION_FAILED };
    if (expect.field) exact.errors = [{ field: expect.field, code: expect.code, message: first?.message }];
    assert.deepEqual(answer.body, exact, context);
    return;
  }
  const body = answer.body;
  assert.equal(body.success, false, context);
  assert.equal(body.error_type, 'E', context);
  if (typeof expect.message === 'number') {
    assert.equal(body.error_code, expect.message, context);
    assert.match(body.message, CATALOGUE_RE[expect.message], context);
  } else {
    assert.equal(body.message, expect.message, context);
  }
  assert.deepEqual([first?.field ?? '', first?.code ?? ''], [expect.field, expect.code], context);
}

/** Every case of the corpus for the host `js` (tests/hostile/*.json): its
 * `hosts.js` override applied, left out when that says `skip`. */
function corpus() {
  const read = (f) => JSON.parse(readFileSync(join(HOSTILE, f), 'utf8'));
  const bases = read('support/bases.json');
  const cases = [];
  let skipped = 0;
  for (const file of readdirSync(HOSTILE).filter((f) => f.endsWith('.json')).sort()) {
    for (const raw of read(file).cases) {
      const over = raw.hosts?.js;
      if (over?.skip) {
        skipped += 1;
        continue;
      }
      cases.push({ ...raw, ...over, file, body: bodyText({ ...raw, ...over }, bases) });
    }
  }
  return { cases, skipped };
}

/** The body's text: `body`; else `body_json` or the `base`, with `set` and `set_raw`. */
function bodyText(c, bases) {
  if (c.body !== undefined) return c.body;
  const base = c.body_json ?? (c.base === undefined ? undefined : bases[c.base]);
  if (base === undefined) return undefined;
  const v = structuredClone(base);
  for (const [path, value] of Object.entries(c.set ?? {})) set(v, path, value);
  const raw = Object.entries(c.set_raw ?? {});
  raw.forEach(([path], i) => set(v, path, `@@raw${i}@@`));
  let text = JSON.stringify(v);
  raw.forEach(([, literal], i) => { text = text.replace(`"@@raw${i}@@"`, literal); });
  return text;
}

/** Expand a template's `{{tokens}}` verbatim: a string, or a Uint8Array when a
 * `{{hex …}}` token puts bytes in it. */
function expand(template, values) {
  const parts = [];
  let rest = template;
  for (let at = rest.indexOf('{{'); at >= 0; at = rest.indexOf('{{')) {
    const end = rest.indexOf('}}', at);
    parts.push(rest.slice(0, at), token(rest.slice(at + 2, end), values));
    rest = rest.slice(end + 2);
  }
  parts.push(rest);
  if (parts.every((p) => typeof p === 'string')) return parts.join('');
  const chunks = parts.map((p) => (typeof p === 'string' ? new TextEncoder().encode(p) : p));
  const out = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
  chunks.reduce((at, c) => { out.set(c, at); return at + c.length; }, 0);
  return out;
}

const expandText = (template, values) => {
  const out = expand(template, values);
  assert.equal(typeof out, 'string', template.slice(0, 80));
  return out;
};

function token(t, values) {
  const [word, ...args] = t.split(' ');
  const arg = args.join(' ');
  const get = (name) => {
    assert.ok(name in values, `no fixture value ${name}`);
    return values[name];
  };
  switch (word) {
    case 'repeat': return args.slice(1).join(' ').repeat(Number(args[0]));
    case 'nested_arrays': return nestedArrays(Number(arg));
    case 'nested_objects': return nestedObjects(Number(arg));
    case 'hex': return Uint8Array.from(arg.match(/../g), (h) => parseInt(h, 16));
    case 'cyrillic': return lookalikeCyrillic(get(arg));
    case 'fullwidth': return lookalikeFullwidth(get(arg));
    case 'upper': return get(arg).toUpperCase();
    case 'forge': { const p = get(arg); return p.slice(0, 3) + (p[3] === 'A' ? 'B' : 'A') + p.slice(4); }
    default: {
      const slice = /^(.*)\[(\d+):\]$/.exec(t);
      return slice ? get(slice[1]).slice(Number(slice[2])) : get(t);
    }
  }
}

const ALPHANUMERIC = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const randomAlphanumeric = (n) => Array.from({ length: n }, () => ALPHANUMERIC[Math.floor(Math.random() * 62)]).join('');

/** Set the member at a `/`-separated path. */
function set(v, path, value) {
  const parts = path.split('/');
  let at = v;
  for (const p of parts.slice(0, -1)) at = at[Array.isArray(at) ? Number(p) : p];
  const last = parts[parts.length - 1];
  at[Array.isArray(at) ? Number(last) : last] = value;
}

/** Every leaf's `/`-separated path (scalars, and empty or null containers). */
function leaves(v, prefix = '', out = []) {
  const join = (k) => (prefix === '' ? String(k) : `${prefix}/${k}`);
  if (v !== null && typeof v === 'object' && Object.keys(v).length > 0) {
    for (const [k, x] of Object.entries(v)) leaves(x, join(k), out);
  } else {
    out.push(prefix);
  }
  return out;
}

const nestedArrays = (depth) => '['.repeat(depth) + ']'.repeat(depth);
const nestedObjects = (depth) => '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);

function lookalikeCyrillic(id) {
  const twins = { a: 'а', c: 'с', e: 'е', o: 'о', p: 'р', x: 'х', y: 'у', A: 'А', B: 'В', E: 'Е', K: 'К', M: 'М', O: 'О', T: 'Т' };
  const out = [...id].map((c) => twins[c] ?? c).join('');
  assert.notEqual(out, id);
  return out;
}

/** Digits and the last character in fullwidth forms. */
function lookalikeFullwidth(id) {
  const wide = (c) => String.fromCodePoint(c.codePointAt(0) + 0xfee0);
  return [...id].map((c, i) => (/[0-9]/.test(c) || i === id.length - 1 ? wide(c) : c)).join('');
}

function transaction(merchantId, type, amount) {
  return {
    merchant_id: merchantId, amount, description: 'test', type, standard_entry_class: 'PPD',
    customer: { name: 'Ada Lovelace', routing_number: '021000021', account_number: '987654321', account_type: 'checking' },
  };
}

/** A BOC debit of 1.00 with its check number and both images: every member a
 * check class reads (a PPD ignores them). */
function check(merchantId) {
  const png = 'iVBORw0KGgoAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=';
  return {
    ...transaction(merchantId, 'debit', '1.00'), standard_entry_class: 'BOC', check_number: '1001',
    check_image_front: png, check_image_back: png,
  };
}

function customerBody(scope, accountNumber) {
  return { merchant_id: scope, name: 'Grace Hopper', routing_number: '026009593', account_number: accountNumber, account_type: 'savings' };
}

function application(classes, partnerId) {
  const v = structuredClone(MERCHANT_APPLICATION);
  v.standard_entry_classes = classes;
  if (partnerId !== undefined) v.partner_id = partnerId;
  return v;
}

const BIG = '99999999.99';
const ROOMY = {
  max_transaction_amount: BIG, min_transaction_amount: '0.01', daily_count: 1e9, daily_amount: BIG,
  period_count: 1e9, period_amount: BIG, monthly_count: 1e9, monthly_amount: BIG, monthly_average_amount: BIG,
};

/** A request as `engine.request` takes it; `body` is the body's text (passed
 * through byte for byte, as HTTPS does) unless it is an object. */
function request(method, path, apiKey, body) {
  const r = { method, path };
  if (apiKey !== undefined && apiKey !== null) r.apiKey = apiKey;
  if (body !== undefined) r.body = body;
  return r;
}

// ---------------------------------------------------------------- fixture

class Fixture {
  constructor() {
    this.engine = new ach.Engine({ operatorKey: OPERATOR, sandbox: true, start: START });
    this.a = this.tenant();
    this.b = this.tenant();
  }

  call(r, status) {
    const answer = this.engine.request(r);
    if (status !== undefined) assert.equal(answer.status, status, `${r.method} ${r.path}: ${JSON.stringify(answer.body)}`);
    return answer;
  }

  roomyMerchant(pid, key, classes) {
    const app = application(classes, pid);
    app.velocities.decline_duplicates = false;
    const merchant = this.call(request('POST', '/merchants', key, app), 201).body.id;
    const approve = request('POST', `/admin/merchants/${merchant}/approve`, OPERATOR, { limits: ROOMY });
    return { merchant, merchantKey: this.call(approve, 200).body.payload.api_key };
  }

  debit(pid, key, merchant, amount) {
    const body = { ...transaction(merchant, 'debit', amount), partner_id: pid };
    return this.call(request('POST', '/transactions', key, body), 201).body.payload.id;
  }

  feedPointer(t) {
    return this.call(request('GET', `/status-changes/0?partner_id=${t.id}`, t.key), 200).body.payload.new_pointer;
  }

  tenant() {
    const created = this.call(request('POST', '/admin/partners', OPERATOR, { name: 'Test Partner' }), 201).body.payload;
    const t = { id: created.partner_id, key: created.api_key };
    Object.assign(t, this.roomyMerchant(t.id, t.key, ['PPD', 'WEB']));
    t.second = this.roomyMerchant(t.id, t.key, ['PPD']).merchant;
    const customer = { ...customerBody('global', '918273645500'), partner_id: t.id };
    const stored = this.call(request('POST', '/customers', t.key, customer), 201).body;
    t.customer = stored.payload?.id ?? stored.id;
    assert.match(t.customer, /^cus_/);
    t.pending = this.debit(t.id, t.key, t.merchant, '10.00');
    t.earlyPointer = this.feedPointer(t);
    t.last = this.debit(t.id, t.key, t.merchant, '20.00');
    t.pointer = this.feedPointer(t);
    t.events = this.call(request('GET', '/events', t.merchantKey), 200).body.new_pointer;
    // Room for exactly one more debit of 1.00 today: for the merchant (2 debits,
    // 30.00 so far) and for the partner overall (2 debits).
    this.call(request('POST', `/admin/merchants/${t.merchant}/limits`, OPERATOR, { daily_count: 3, daily_amount: '31.00' }), 200);
    this.call(request('POST', `/admin/partners/${t.id}/limits`, OPERATOR, { daily_count: 3 }), 200);
    return t;
  }

  /** A's transaction body text (partner id included) with `field` set. */
  transactionWith(field, value) {
    const v = { ...transaction(this.a.merchant, 'debit', '1.00'), partner_id: this.a.id };
    set(v, field, value);
    return JSON.stringify(v);
  }

  /** `transactionWith` for a BOC check, whose check number and images are read. */
  checkWith(field, value) {
    const v = { ...check(this.a.merchant), partner_id: this.a.id };
    set(v, field, value);
    return JSON.stringify(v);
  }

  post(path, body) {
    return request('POST', path, this.a.key, body);
  }

  /** Neither partner's feeds moved, a normal request and a validation are still
   * answered. */
  assertNothingStored(name) {
    for (const t of [this.a, this.b]) {
      const page = noThrow(name, () => this.engine.request(request('GET', `/status-changes/${t.pointer}?partner_id=${t.id}`, t.key)));
      assert.equal(page.status, 200, `${name}: the feed is not answered`);
      assert.deepEqual(page.body.payload.changes, [], `${name}: the status-changes feed moved`);
      const events = noThrow(name, () => this.engine.request(request('GET', `/events/${t.events}`, t.merchantKey)));
      assert.equal(events.status, 200, name);
      assert.deepEqual(events.body.events, [], `${name}: the events feed moved`);
    }
    const valid = noThrow(name, () => ach.validateTransaction(this.transactionWith('amount', '1.00')));
    assert.deepEqual(valid, { valid: true, message: null, errors: [] }, `${name}: the validator no longer answers`);
  }

  /** Each partner still has room for exactly one more 1.00 debit on its first
   * merchant; then the merchant's daily count (22) and the partner's overall
   * daily count (24) refuse. */
  assertCountersUnchanged() {
    for (const t of [this.a, this.b]) {
      this.debit(t.id, t.key, t.merchant, '1.00');
      const again = this.call(request('POST', '/transactions', t.key, { ...transaction(t.merchant, 'debit', '1.00'), partner_id: t.id }));
      assert.deepEqual([again.status, again.body.error_code], [403, 22], JSON.stringify(again.body));
      const other = this.call(request('POST', '/transactions', t.key, { ...transaction(t.second, 'debit', '1.00'), partner_id: t.id }));
      assert.deepEqual([other.status, other.body.error_code], [403, 24], JSON.stringify(other.body));
    }
  }

  /** The fixture's values for the corpus' templates. */
  values() {
    const v = { operator: OPERATOR };
    for (const [side, t] of [['a', this.a], ['b', this.b]]) {
      for (const [name, value] of Object.entries({
        id: t.id, key: t.key, merchant: t.merchant, merchant_key: t.merchantKey, second: t.second, customer: t.customer,
        pending: t.pending, last: t.last, early_pointer: t.earlyPointer, pointer: t.pointer, events: t.events,
      })) v[`${side}.${name}`] = value;
    }
    return v;
  }

  /** A corpus case as a page passes it to `engine.request`. */
  request(c, values) {
    const r = { method: expandText(c.method ?? 'GET', values), path: expandText(c.path, values) };
    if (c.key !== undefined) r.apiKey = expandText(c.key, values);
    if (c.idempotency_key !== undefined) r.idempotencyKey = expandText(c.idempotency_key, values);
    if (c.body !== undefined) r.body = expand(c.body, values);
    return r;
  }

  run(c, values, prebuilt) {
    const request = prebuilt ?? this.request(c, values);
    if (c.expect.throws) {
      // Misuse of the module (tests/hostile/README.md): an Error, never a trap.
      assert.throws(() => this.engine.request(request), (e) => e instanceof Error && e.message.includes(c.expect.throws), c.name);
      this.assertNothingStored(c.name);
      return;
    }
    const answer = noThrow(c.name, () => this.engine.request(request));
    if (c.expect.any) {
      assert.ok(answer.status >= 400 && answer.status <= 422, `${c.name}: ${answer.status}`);
      assert.match(answer.body.message, CATALOGUE_RE[answer.body.error_code], c.name);
    } else {
      checkAnswer(c.name, answer, c.expect, values);
    }
    if (c.like_unknown) {
      // Another partner's id is answered exactly as a never-issued one.
      const real = values[c.like_unknown];
      const never = real.slice(0, 4) + randomAlphanumeric(real.length - 4);
      const twin = Object.fromEntries(Object.entries(values).map(([k, x]) => [k, x.replaceAll(real, never)]));
      const unknown = this.engine.request(this.request(c, twin));
      const same = JSON.parse(JSON.stringify(unknown).replaceAll(never, real));
      assert.deepEqual(same, answer, `${c.name}: another partner's id answers unlike an unknown one`);
    }
    this.validatorsAgree(c, request);
    this.assertNothingStored(c.name);
  }

  /** A body the router refuses for what it holds is refused by the form's
   * validator too, with the same message; for a rule (422), with the same first
   * problem. (A malformed body, 400, may be described differently: the
   * validator reports a body that is not an object by its type.) */
  validatorsAgree(c, r) {
    const validator = { '/transactions': ach.validateTransaction, '/customers': ach.validateCustomer, '/merchants': ach.validateMerchant }[r.path];
    if (r.method !== 'POST' || !validator || typeof r.body !== 'string' || r.apiKey !== this.a.key) return;
    const { status, message, field, code } = c.expect;
    if ((status !== 400 && status !== 422) || typeof message !== 'number' || r.idempotencyKey !== undefined) return;
    const verdict = noThrow(c.name, () => validator(r.body));
    assertInvalidVerdict(`${c.name} (validator)`, verdict);
    assert.match(verdict.message, CATALOGUE_RE[message], `${c.name}: the validator's message`);
    if (status === 422) {
      assert.deepEqual([verdict.errors[0].field, verdict.errors[0].code], [field, code], `${c.name}: the validator's first problem`);
    }
  }
}

const Refused = (status, message, field, code) => ({ status, message, field, code });
const Auth = { status: 401 };
const AnyRefusal = { any: true };

/** What only JS can pass (the rest is the corpus): bodies as objects the module
 * stringifies, query objects, lone surrogates, JS numbers. */
function jsRows(f) {
  const { a } = f;
  const rows = [];
  const row = (name, request, expect) => rows.push({ name, request, expect });
  const post = (path, body) => ({ method: 'POST', path, apiKey: a.key, body });
  const tx = (field, value) => {
    const v = { ...transaction(a.merchant, 'debit', '1.00'), partner_id: a.id };
    if (field) set(v, field, value);
    return v;
  };
  let deep = [];
  for (let i = 0; i < 2000; i += 1) deep = [deep];
  for (const path of ['/transactions', '/customers', '/merchants']) {
    row(`2,000 nested arrays as an object: ${path}`, post(path, deep), Refused(400, 10, '', 'invalid_json'));
  }
  row('2,000 nested arrays as a member', post('/transactions', { partner_id: a.id, customer: deep }), Refused(400, 10, '', 'invalid_json'));
  row('query object nested 100,000 levels', { ...post('/transactions'), query: { partner_id: a.id, [`customer${'[a]'.repeat(100_000)}`]: '1' } },
    Refused(400, 10, '', 'invalid_json'));
  row('4 MB body as an object', post('/transactions', tx('description', 'x'.repeat(4 * MB))), Refused(413, 10, '', 'over_limit'));
  for (const [field, value, expect] of [
    ['description', 'Invoice\u000042', Refused(422, 10, 'description', 'invalid_format')],
    ['customer/name', 'Ada\u0000Lovelace', Refused(422, 10, 'customer.name', 'invalid_format')],
    ['customer/account_number', '98765\u00004321', Refused(422, 13, 'customer.account_number', 'invalid_format')],
    ['merchant_id', `${a.merchant}\u0000`, Refused(422, 11, 'merchant_id', 'invalid_format')],
    ['amount', '1.00\u0000', Refused(422, 14, 'amount', 'invalid_amount')],
    ['partner_id', `${a.id}\u0000`, Auth],
  ]) {
    row(`NUL in ${field} (body as an object)`, post('/transactions', tx(field, value)), expect);
  }
  row("NUL in the query object's partner_id", { ...post('/transactions'), query: { partner_id: `${a.id}\u0000` } }, Auth);
  // A lone surrogate: escaped by JSON.stringify, or U+FFFD in a string argument.
  row('a lone surrogate in a body string', post('/transactions', JSON.stringify(tx('description', '\ud800'))), Refused(400, 10, '', 'invalid_json'));
  row('a lone surrogate in a body object', post('/transactions', tx('description', '\udfff')), Refused(400, 10, '', 'invalid_json'));
  row('a lone surrogate in the key', { method: 'GET', path: '/categories', apiKey: 'pk_\ud800\udc00\ud800' }, Refused(400, 10, '', 'invalid_json'));
  // What a JS number can be: -0 and 1e400 (Infinity) stringify to 0 and null.
  row('negative zero (JS number)', post('/transactions', tx('amount', 0)), AnyRefusal);
  row('-0 amount', post('/transactions', tx('amount', -0)), Refused(422, 14, 'amount', 'invalid_amount'));
  row('Infinity amount (JS number)', post('/transactions', tx('amount', Infinity)), AnyRefusal);
  return rows;
}

/** Whole requests as JSON text (`engine.request(text)`) that cannot be read:
 * the router's 400, as over HTTPS and through the C library. */
function envelopeRows(f) {
  const key = f.a.key;
  const big = 'x'.repeat(MB);
  const texts = [
    nestedArrays(100_000),
    nestedObjects(100_000),
    `{"method":"GET","path":"/categories","apiKey":"${key}","body":${nestedArrays(100_000)}}`,
    `{"method":"GET","path":"/categories","apiKey":"${key}","query":${nestedObjects(100_000)}}`,
    `{"method":"${big}","path":"/categories","apiKey":"${key}"}`,
    `{"method":"POST","path":"/admin/partners","apiKey":"${OPERATOR}","body":{"${big}":1}}`,
    `{"method":"GET","path":"/categories","apiKey":"${key}","query":[1]}`,
    '{"method":"GET","path":"/categories","apiKey":"\\ud800"}',
    `{"method":"GET","path":"/categories","apiKey":${'9'.repeat(400)}}`,
    `{"method":"POST","path":"/transactions","apiKey":"${key}","body":{"amount":${'9'.repeat(400)}}}`,
    `{"method":"GET","path":"/categories","apiKey":7}`,
    `{"method":"GET","path":"/categories","apiKey":"${key}"`,
    '\u0000',
    '',
    ' '.repeat(10 * MB),
  ];
  return texts.map((text) => ({ name: `request text ${JSON.stringify(text.slice(0, 50))}`, text }));
}

// ---------------------------------------------------------------- tests

test('the hostile corpus through Engine.request is refused clearly and stores nothing', () => {
  const f = new Fixture();
  f.assertNothingStored('the set-up');
  const values = f.values();
  const { cases, skipped } = corpus();
  assert.ok(cases.length > 350, `${cases.length} cases`);
  const failed = [];
  const attempt = (name, fn) => {
    try {
      fn();
    } catch (e) {
      failed.push(`${name}: ${e.message.slice(0, 400)}`);
    }
  };
  for (const c of cases) attempt(`${c.name} (${c.file})`, () => f.run(c, values));
  const rows = jsRows(f);
  for (const r of rows) {
    attempt(r.name, () => f.run({ name: r.name, method: r.request.method, path: r.request.path, expect: r.expect }, values, r.request));
  }
  for (const r of envelopeRows(f)) {
    attempt(r.name, () => {
      const answer = noThrow(r.name, () => f.engine.request(r.text));
      const [status] = refusal(r.name, answer);
      assert.ok([400, 401, 404, 405, 413, 422].includes(status), `${r.name}: ${status}`);
      f.assertNothingStored(r.name);
    });
  }
  console.log(`${cases.length} corpus cases (${skipped} left to other hosts), ${rows.length} JS rows, ${envelopeRows(f).length} request texts`);
  assert.deepEqual(failed, [], `${failed.length} failed`);
  f.assertCountersUnchanged();
});

test('hostile forms through the validators are data', () => {
  const body = { ...transaction('mer_0123456789abcdefghijKL', 'debit', '1.00'), partner_id: 'par_0123456789abcdefghijKL' };
  // The form, and a text member of it.
  const validators = [
    ['validateTransaction', ach.validateTransaction, body, 'description'],
    ['validateCustomer', ach.validateCustomer, { ...customerBody('global', '918273645599'), partner_id: body.partner_id }, 'name'],
    ['validateMerchant', ach.validateMerchant, application(['PPD', 'WEB'], body.partner_id), 'support_contact'],
  ];
  let deep = [];
  for (let i = 0; i < 2000; i += 1) deep = [deep];
  const big = '9'.repeat(MB);
  for (const [name, validate, valid, text] of validators) {
    assert.deepEqual(validate(valid), { valid: true, message: null, errors: [] }, name);
    const forms = [
      ['100,000 nested arrays', nestedArrays(100_000)],
      ['100,000 nested objects', nestedObjects(100_000)],
      ['2,000 nested arrays (object)', deep],
      ['2,000 nested arrays in a member', { ...valid, [text]: deep }],
      ['10 MB of spaces', ' '.repeat(10 * MB)],
      ['10 MB string member', { ...valid, [text]: 'x'.repeat(10 * MB) }],
      ['NUL bytes', JSON.stringify(valid).replaceAll('"mer_', '"mer_\\u0000').replaceAll('"0', '"\\u00000')],
      ['a raw NUL', `${JSON.stringify(valid)}\u0000`],
      ['an escaped lone surrogate', JSON.stringify({ ...valid, [text]: '\ud800' })],
      ['a raw lone surrogate', `{"partner_id":"\ud800"}`],
      ['400-digit numbers', JSON.stringify({ ...valid, amount: '@', [text]: '@' }).replaceAll('"@"', '9'.repeat(400))],
      ['negative zero', JSON.stringify({ ...valid, amount: '@', [text]: '@' }).replaceAll('"@"', '-0')],
      ['look-alike ids and digits', JSON.stringify(valid).replaceAll('mer_', 'ｍer_').replaceAll('0', '０')],
      ['Uint8Array member', { ...valid, [text]: new Uint8Array([0xff, 0xfe]) }],
    ];
    // partner_id is not the form's: the service authenticates it (401).
    for (const field of leaves(valid).filter((f) => f !== 'partner_id')) {
      const v = structuredClone(valid);
      set(v, field, big);
      forms.push([`1 MB in ${field}`, v]);
    }
    for (const [what, form] of forms) {
      const verdict = noThrow(`${name}: ${what}`, () => validate(form));
      assertInvalidVerdict(`${name}: ${what}`, verdict);
      assert.deepEqual(validate(valid), { valid: true, message: null, errors: [] }, `${name} after ${what}`);
    }
  }
});

// The validators refuse what the router's parser refuses (core/src/validation/json.rs):
// an unknown member nested deeper than serde_json's limit made a form valid here
// and a 400 at the service until that was fixed.
test('a form the service refuses for its nesting is refused by the validator', () => {
  const body = { ...transaction('mer_0123456789abcdefghijKL', 'debit', '1.00'), partner_id: 'par_0123456789abcdefghijKL' };
  assert.equal(ach.validateTransaction(body).valid, true);
  const text = JSON.stringify(body).replace(/}$/, `,"note":${nestedArrays(200)}}`);
  assert.equal(ach.validateTransaction(text).valid, false, 'a 200-deep unknown member is accepted by the validator');
});

test('hostile routing numbers and directories', () => {
  const valid = () => assert.deepEqual(ach.checkRoutingNumber('021000021'), { valid: true, message: null, errors: [] });
  const notFound = () => assert.equal(ach.checkRoutingNumber('231380104').errors[0]?.code, 'not_found', 'the embedded directory is still in use');
  for (const [what, rn] of [
    ['empty', ''], ['NUL', '02100002\u0000'], ['NUL first', '\u0000021000021'], ['1 MB', '9'.repeat(MB)],
    ['16 MB', '9'.repeat(16 * MB)], ['400 digits', '9'.repeat(400)], ['negative zero', '-0'],
    ['fullwidth digits', '０２１００００２１'], ['Arabic-Indic digits', '٠٢١٠٠٠٠٢١'], ['a lone surrogate', '02100002\ud800'],
    ['spaces', ' 021000021 '], ['a sign', '+21000021'],
  ]) {
    const verdict = noThrow(what, () => ach.checkRoutingNumber(rn));
    assertInvalidVerdict(`routing number: ${what}`, verdict);
    assert.equal(verdict.errors[0].field, 'routing_number', what);
    valid();
  }
  const record = readFileSync(join(sharedData, 'fedach/FedACHdir.txt'), 'utf8').split('\n')[0].replace(/\r$/, '');
  assert.equal(record.length, 155);
  for (const [what, text, pattern] of [
    ['empty', '', /^not a FedACH directory: the file has no records$/],
    ['blank lines', ' \n\r\n\n', /^not a FedACH directory: the file has no records$/],
    ['1 MB line', '9'.repeat(MB), /^not a FedACH directory: line 1: /],
    ['16 MB', `${'x'.repeat(155)}\n`.repeat((16 * MB) / 156), /^not a FedACH directory: line 1: /],
    ['NUL bytes', '\u0000'.repeat(155), /^not a FedACH directory: line 1: /],
    ['a record twice', `${record}\n${record}\n`, /^not a FedACH directory: line 2: /],
    ['a record then garbage', `${record}\n\u0000\n`, /^not a FedACH directory: line 2: /],
  ]) {
    assertMisuse(`loadRoutingDirectory: ${what}`, () => ach.loadRoutingDirectory(text), pattern);
    valid();
    notFound();
  }
});

/** Values that are not a request or a form, as a page might pass by mistake. */
function wrongArguments() {
  const cyclic = { name: 'x' };
  cyclic.self = cyclic;
  const revocable = Proxy.revocable({}, {});
  revocable.revoke();
  let tooDeep = [];
  for (let i = 0; i < 200_000; i += 1) tooDeep = [tooDeep];
  return [
    ['a number', 42], ['NaN', NaN], ['negative zero', -0], ['Infinity', Infinity], ['null', null], ['undefined', undefined],
    ['true', true], ['a symbol', Symbol('request')], ['a BigInt', 10n], ['a function', () => ({})], ['a class', class {}],
    ['a cyclic object', cyclic], ['a getter that throws', { get amount() { throw new Error('getter'); } }],
    ['a getter that throws a non-Error', { get amount() { throw Symbol('x'); } }],
    ['a toJSON that throws', { toJSON() { throw new RangeError('toJSON'); } }],
    ['a toJSON giving undefined', { toJSON() { return undefined; } }],
    ['a BigInt member', { amount: 1n }], ['a revoked proxy', revocable.proxy],
    ['a proxy whose traps throw', new Proxy({}, { ownKeys() { throw new Error('trap'); }, get() { throw new Error('trap'); } })],
    ['a throwing error message', { get amount() { const e = new Error(); Object.defineProperty(e, 'message', { get() { throw new Error('again'); } }); throw e; } }],
    ['a Uint8Array of invalid UTF-8', new Uint8Array([0xff, 0xfe, 0xfd, 0x00])],
    ['a Uint8Array of a valid body', new TextEncoder().encode('{}')],
    ['an ArrayBuffer', new ArrayBuffer(8)], ['a DataView', new DataView(new ArrayBuffer(8))],
    ['a SharedArrayBuffer', new SharedArrayBuffer(8)], ['an Int32Array', new Int32Array(4)],
    ['200,000 nested arrays', tooDeep],
  ];
}

test('wrong argument types throw Error, never trap', () => {
  for (const [what, value] of wrongArguments()) {
    for (const name of ['validateTransaction', 'validateCustomer', 'validateMerchant']) {
      assertMisuse(`${name}(${what})`, () => ach[name](value), new RegExp(`^${name}(:| expects)`));
    }
    if (typeof value !== 'string') {
      assertMisuse(`checkRoutingNumber(${what})`, () => ach.checkRoutingNumber(value), /^checkRoutingNumber expects a string$/);
      assertMisuse(`loadRoutingDirectory(${what})`, () => ach.loadRoutingDirectory(value), /^loadRoutingDirectory expects the file's text$/);
    }
    if (value !== undefined) {
      assertMisuse(`new Engine(${what})`, () => new ach.Engine(value), /^new Engine(:| expects)/);
    }
  }
  assertMisuse('a String object', () => ach.checkRoutingNumber(new String('021000021')), /expects a string/);
  assertMisuse('binary data', () => ach.validateTransaction(new Uint8Array([0xff])), /not binary data/);
  assertMisuse('the cause is told', () => ach.validateCustomer({ get x() { throw new Error('from the getter'); } }), /\(from the getter\)$/);
  // The module still answers.
  assert.equal(ach.validateTransaction('{}').valid, false);
  assert.equal(ach.checkRoutingNumber('021000021').valid, true);
});

test('Engine misuse throws Error, never traps; other engines keep working', () => {
  const engine = new ach.Engine({ operatorKey: OPERATOR, sandbox: true, start: START });
  const works = (e, name) => assert.equal(noThrow(name, () => e.request(request('GET', '/categories', OPERATOR))).status, 200, name);
  const big = 'k'.repeat(MB);
  for (const [what, options, pattern] of [
    ['an unknown option', { bogus: 1 }, /^unknown option 'bogus'/],
    ['a 1 MB option name', { [big]: 1 }, /^unknown option 'k{40}\.\.\.' /],
    ['a 1 MB start', { start: '9'.repeat(MB) }, /^start must be an RFC 3339 instant/],
    ['a start with 400 digits', { start: '9'.repeat(400) }, /^start must be an RFC 3339 instant/],
    ['a start past the calendar', { start: 8.2e15 }, /^start: not a time in milliseconds/],
    ['a start past year 9999', { start: 253402300800000 }, /^start: not a time in milliseconds/],
    ['a start before year 0', { start: -8.2e15 }, /^start: not a time in milliseconds/],
    ['a start of 1e300', { start: 1e300 }, /^start: not a time in milliseconds/],
    ['a start in year +262142', { start: '+262142-12-31T23:59:59Z' }, /^start: /],
    ['a start with NUL', { start: '2026-11-23T10:00:00-05:00\u0000' }, /^start: /],
    ['a start in fullwidth digits', { start: '２０２６-11-23T10:00:00-05:00' }, /^start: /],
    ['sandbox as text', { sandbox: 'yes' }, /^sandbox must be true or false$/],
    ['an operator key number', { operatorKey: 7 }, /^operatorKey must be a string$/],
    ['a short encryption key', { encryptionKey: 'ab' }, /^encryptionKey must be 64 hex digits$/],
    ['an encryption key in look-alikes', { encryptionKey: 'а'.repeat(64) }, /^encryptionKey must be 64 hex digits$/],
    ['options text that is not JSON', '{"sandbox": ', /^options are not valid JSON/],
    ['options text nested 100,000 levels', nestedObjects(100_000), /^options are not valid JSON/],
    ['options that are an array', '[1]', /^options must be an object$/],
  ]) {
    assertMisuse(`new Engine(${what})`, () => new ach.Engine(options), pattern);
  }
  for (const [what, r, pattern] of [
    ['an unknown member', { method: 'GET', path: '/categories', apikey: OPERATOR }, /^unknown request member 'apikey'/],
    ['a 1 MB member name', { method: 'GET', path: '/categories', [big]: 1 }, /^unknown request member 'k{40}\.\.\.' /],
    ['snake_case api_key', { method: 'GET', path: '/categories', api_key: OPERATOR }, /^unknown request member 'api_key'/],
    ['request text that is an array', '[1]', /^the request must be an object$/],
    ['request text that is a number', '7', /^the request must be an object$/],
    ['request text that is a string', '"GET /categories"', /^the request must be an object$/],
  ]) {
    assertMisuse(`engine.request(${what})`, () => engine.request(r), pattern);
    works(engine, `after ${what}`);
  }
  for (const [what, value] of wrongArguments()) {
    assertMisuse(`engine.request(${what})`, () => engine.request(value), /^Engine\.request(:| expects)/);
    works(engine, `after ${what}`);
  }
  // A 32 MB request as an object and as text: the router's 413 and 400.
  const huge = 'x'.repeat(32 * MB);
  const answer = noThrow('32 MB body', () => engine.request(request('POST', '/admin/partners', OPERATOR, huge)));
  assert.deepEqual(refusal('32 MB body', answer), [413, 10, '', 'over_limit']);
  const text = noThrow('32 MB text', () => engine.request(huge));
  assert.deepEqual(refusal('32 MB text', text), [400, 10, '', 'invalid_json']);
  works(engine, 'after 32 MB');

  // Calls from inside a call: a getter the module's JSON.stringify runs.
  const inner = [];
  const reentrant = noThrow('re-entrant', () => engine.request({
    method: 'GET', path: '/categories', apiKey: OPERATOR,
    get body() {
      inner.push(engine.request(request('GET', '/categories', OPERATOR)).status);
      inner.push(ach.validateTransaction({}).valid);
      inner.push(ach.checkRoutingNumber('021000021').valid);
      return undefined;
    },
  }));
  assert.equal(reentrant.status, 200);
  assert.deepEqual(inner, [200, false, true]);
  // Freeing the engine from inside its own call is refused by wasm-bindgen
  // (it is borrowed); the engine's JS handle is then spent, the module is not.
  const doomed = new ach.Engine({ operatorKey: OPERATOR, sandbox: true });
  let freeError;
  const during = noThrow('free during a call', () => doomed.request({
    method: 'GET', path: '/categories', apiKey: OPERATOR,
    get body() {
      try { doomed.free(); } catch (e) { freeError = e; }
      return undefined;
    },
  }));
  assert.equal(during.status, 200);
  assert.ok(freeError instanceof Error && !(freeError instanceof WebAssembly.RuntimeError), String(freeError));
  assertMisuse('the spent engine', () => doomed.request(request('GET', '/categories', OPERATOR)), /null pointer passed to rust/);
  works(engine, 'after a free during a call');

  // After free(): every call throws Error.
  const freed = new ach.Engine({ operatorKey: OPERATOR, sandbox: true });
  works(freed, 'before free');
  freed.free();
  assertMisuse('request after free', () => freed.request(request('GET', '/categories', OPERATOR)), /null pointer passed to rust/);
  assertMisuse('free twice', () => freed.free(), /null pointer passed to rust/);
  assertMisuse('request on a plain object', () => ach.Engine.prototype.request.call({}, request('GET', '/categories')), /null pointer passed to rust/);
  assertMisuse('request on the prototype', () => Object.create(ach.Engine.prototype).request(request('GET', '/categories')), /null pointer passed to rust/);
  assertMisuse('Engine without new', () => ach.Engine({}), /cannot be invoked without 'new'/);
  works(engine, 'after the freed engine');
  engine.free();
  // The module itself still answers.
  assert.deepEqual(ach.checkRoutingNumber('021000021'), { valid: true, message: null, errors: [] });
  works(new ach.Engine({ operatorKey: OPERATOR, sandbox: true }), 'a new engine');
});
