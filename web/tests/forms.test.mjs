// The browser page in a real browser (Debian's chromium through playwright-core):
// `achd serve --sandbox --web target/web-site` serves it; each form is filled
// with bad values (each bad field marked with its message, the summary on top)
// then good ones; the sandbox panel runs a transaction past the cut-off. The
// screenshots are test artefacts: target/artifacts/forms.png (the sandbox at the
// end), forms-marks.png (a form with its marks) and forms-merchant.png; the
// server's log is target/artifacts/achd.log.
//
// Run by scripts/browser-test (which builds achd and the site first).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { get } from 'node:https';
import { join } from 'node:path';
import { pinnedBrowser } from './pinned-browser.mjs';
import { artifacts, root, startServer, stopServer } from './sandbox-server.mjs';

const site = join(root, 'target/web-site');

let server;
let dataDir;
let profileDir;
let base;
let cert;
let context;
let page;
const pageErrors = [];

/** GET a path over HTTPS, trusting only the server's own certificate. */
function fetchHeaders(path) {
  return new Promise((resolvePromise, reject) => {
    get(`${base}${path}`, { ca: cert }, (res) => {
      res.resume();
      res.on('end', () => resolvePromise({ status: res.statusCode, type: res.headers['content-type'] }));
    }).on('error', reject);
  });
}

before(async () => {
  let listening;
  ({ server, dataDir, listening } = startServer({ prefix: 'ach-browser-data-', logName: 'achd.log', args: ['--web', site] }));
  base = `https://${(await listening).listen}`;
  cert = readFileSync(join(dataDir, 'tls-cert.pem'), 'utf8');
  ({ context, page, profileDir } = await pinnedBrowser({
    cert,
    prefix: 'ach-browser-profile-',
    viewport: { width: 1100, height: 900 },
    errors: pageErrors,
  }));
});

after(async () => {
  await context?.close();
  await stopServer(server, [dataDir, profileDir]);
});

// ---- helpers on the page ----

const form = (id) => page.locator(`#${id}-form`);
const control = (id, path) => form(id).locator(`[name="${path}"]`);
const mark = (id, path) => form(id).locator(`[data-for="${path}"] > .mark, [data-group="${path}"] > .mark`).first();
const summary = (id) => form(id).locator('.summary-message');

async function set(id, path, value) {
  const c = control(id, path).first();
  const tag = await c.evaluate((n) => `${n.tagName}:${n.type}`);
  if (tag.startsWith('SELECT')) await c.selectOption(value);
  else if (tag === 'INPUT:checkbox') await c.setChecked(Boolean(value));
  else await c.fill(String(value));
  await c.blur();
}

async function marked(id) {
  return form(id).locator('.mark:not(:empty)').evaluateAll((marks) => marks.map((m) => {
    const owner = m.parentElement;
    return [owner.dataset.for ?? owner.dataset.group, m.textContent];
  }));
}

async function openTab(name) {
  await page.locator(`#${name}-tab`).click();
  await page.locator(`#${name}-panel`).waitFor({ state: 'visible' });
}

/** The leaves of a JSON value as [path, value] (arrays of strings stay whole). */
function leaves(value, path = '') {
  if (Array.isArray(value) && value.every((v) => typeof v === 'string')) return [[path, value]];
  if (Array.isArray(value)) return value.flatMap((v, i) => leaves(v, `${path}[${i}]`));
  if (value && typeof value === 'object') {
    return Object.entries(value).flatMap(([k, v]) => leaves(v, path ? `${path}.${k}` : k));
  }
  return [[path, value]];
}

const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=', 'base64');

// ---- the tests, in order on one page ----

test('the server sends the page, its modules and the wasm with the right types', async () => {
  for (const [path, type] of [
    ['/', 'text/html; charset=utf-8'],
    ['/app.js', 'text/javascript; charset=utf-8'],
    ['/pkg-web-validate/ach_wasm.js', 'text/javascript; charset=utf-8'],
    ['/pkg-web-validate/ach_wasm_bg.wasm', 'application/wasm'],
    ['/pkg-web/ach_wasm_bg.wasm', 'application/wasm'],
  ]) {
    assert.deepEqual(await fetchHeaders(path), { status: 200, type }, path);
  }
  await page.goto(`${base}/`);
  await page.locator('body[data-ready="true"]').waitFor();
  assert.match(await page.locator('#module-status').textContent(), /^Validation module ready/);
});

test('transaction: bad values are marked, good values pass', async () => {
  await openTab('transaction');
  assert.equal(await form('transaction').locator('.summary').getAttribute('data-state'), 'idle');
  await set('transaction', 'amount', 'abc');
  await set('transaction', 'customer.routing_number', '021000022');
  assert.deepEqual(await marked('transaction'), [
    ['amount', "'abc' is an invalid Amount: amount must be a positive amount with at most two decimals"],
    ['customer.routing_number', "'021000022' is an invalid Routing Number"],
  ]);
  assert.equal(await control('transaction', 'amount').getAttribute('aria-invalid'), 'true');
  assert.equal(await summary('transaction').textContent(), 'Failed to accept this transaction');

  // "Check" marks every problem, not only the fields touched so far.
  await form('transaction').locator('button[type="submit"]').click();
  const all = (await marked('transaction')).map(([field]) => field);
  for (const f of ['merchant_id', 'description', 'type', 'standard_entry_class', 'customer.name']) {
    assert.ok(all.includes(f), `${f} is marked after Check: ${all}`);
  }
  await page.screenshot({ path: join(artifacts, 'forms-marks.png'), fullPage: true });

  const good = {
    merchant_id: 'mer_0123456789abcdefghijKL', amount: '125.50', description: 'Invoice 42', type: 'debit',
    standard_entry_class: 'PPD', 'customer.name': 'Ada Lovelace', 'customer.routing_number': '021000021',
    'customer.account_number': '123456789', 'customer.account_type': 'checking',
  };
  for (const [path, value] of Object.entries(good)) await set('transaction', path, value);
  assert.deepEqual(await marked('transaction'), []);
  assert.equal(await form('transaction').locator('[aria-invalid="true"]').count(), 0);
  assert.equal(await summary('transaction').textContent(), 'Ready: the service accepts this transaction.');

  // One bad field: the summary is that field's own message.
  await set('transaction', 'amount', '1.234');
  assert.match(await summary('transaction').textContent(), /^'1\.234' is an invalid Amount/);
  await set('transaction', 'amount', '125.50');

  // POP needs the check group, which appears for it.
  await set('transaction', 'standard_entry_class', 'POP');
  assert.equal(await summary('transaction').textContent(), 'Check Number Required For POP Transactions');
  assert.equal(await mark('transaction', 'check_number').textContent(), 'Check Number Required For POP Transactions');
  await set('transaction', 'standard_entry_class', 'PPD');
  assert.equal(await form('transaction').locator('[data-path="check_number"]').isVisible(), false);
  assert.equal(await summary('transaction').textContent(), 'Ready: the service accepts this transaction.');
});

test('customer: bad values are marked, good values pass', async () => {
  await openTab('customer');
  await set('customer', 'merchant_id', 'Global');
  await set('customer', 'account_number', '0000000');
  assert.deepEqual(await marked('customer'), [
    ['merchant_id', "'Global' is an invalid Merchant ID"],
    ['account_number', "'***0000' is an invalid Account Number"],
  ]);
  assert.equal(await summary('customer').textContent(), 'Failed to accept this transaction');
  const good = {
    merchant_id: 'global', name: 'Grace Hopper', routing_number: '026009593', account_number: '000123456789',
    account_type: 'savings',
  };
  for (const [path, value] of Object.entries(good)) await set('customer', path, value);
  assert.deepEqual(await marked('customer'), []);
  assert.equal(await summary('customer').textContent(), 'Ready: the service accepts this customer.');
});

test('merchant application: every group, a principal and the bank accounts', async () => {
  await openTab('merchant');
  await set('merchant', 'company_info.address.zip', 'abc');
  await set('merchant', 'support_contact.email', 'nope');
  await set('merchant', 'custodial_bank_account.routing', '021000022');
  await set('merchant', 'principal[0].address.zip', '1234');
  const bad = Object.fromEntries(await marked('merchant'));
  assert.match(bad['company_info.address.zip'], /must be a ZIP code/);
  assert.match(bad['support_contact.email'], /must be an email address, not 'nope'/);
  assert.equal(bad['custodial_bank_account.routing'], "'021000022' is an invalid Routing Number");
  assert.match(bad['principal[0].address.zip'], /^principal\[0\]\.address\.zip must be a ZIP code/);
  assert.equal(await summary('merchant').textContent(), 'Failed to accept this transaction');

  const example = JSON.parse(readFileSync(join(root, 'examples/requests/merchant.json'), 'utf8'));
  delete example.partner_id;
  for (const [path, value] of leaves(example)) {
    if (value === null || path.includes('check_image')) continue;
    if (Array.isArray(value)) {
      for (const box of await control('merchant', path).all()) {
        await box.setChecked(value.includes(await box.getAttribute('value')));
      }
    } else {
      await set('merchant', path, value);
    }
  }
  for (const side of ['front', 'back']) {
    await control('merchant', `custodial_bank_account.check_image_${side}`).setInputFiles({
      name: `check-${side}.png`, mimeType: 'image/png', buffer: PNG,
    });
  }
  await form('merchant').locator('button[type="submit"]').click();
  await page.waitForFunction(() => document.querySelector('#merchant-form .summary').dataset.state === 'valid');
  assert.deepEqual(await marked('merchant'), []);
  assert.equal(await summary('merchant').textContent(), 'Ready: the service accepts this merchant application.');
  await page.screenshot({ path: join(artifacts, 'forms-merchant.png'), fullPage: true });

  // A second principal must be complete; a billing account too, once asked for.
  await form('merchant').locator('[data-array="principal"] .add').click();
  await form('merchant').locator('button[type="submit"]').click();
  assert.match(await mark('merchant', 'principal[1].name').textContent(), /^principal\[1\]\.name is required$/);
  await form('merchant').locator('[data-group="principal[1]"] .remove').click();
  await form('merchant').locator('#merchant-billing_bank_account-toggle').check();
  assert.match(await mark('merchant', 'billing_bank_account.routing').textContent(), /required/);
  await form('merchant').locator('#merchant-billing_bank_account-toggle').uncheck();
  assert.deepEqual(await marked('merchant'), []);
  assert.equal(await summary('merchant').textContent(), 'Ready: the service accepts this merchant application.');
});

/** The WebAssembly modules the page has fetched so far (paths from the site root). */
const fetchedModules = () => page.evaluate(() => performance.getEntriesByType('resource')
  .map((r) => new URL(r.name).pathname).filter((p) => p.endsWith('.wasm')));

test('sandbox: partner, merchant, the transaction form, past the cut-off: B in the feed', async () => {
  // Until the sandbox starts, the forms have used only the validation module
  // (within the 150 KB budget); the full one (with redb) loads on demand.
  assert.deepEqual(await fetchedModules(), ['/pkg-web-validate/ach_wasm_bg.wasm']);
  await openTab('sandbox');
  const panel = page.locator('#sandbox-panel');
  await panel.locator('.start-at').fill('2026-11-23T10:00:00-05:00');
  await panel.locator('.start').click();
  await page.locator('#sandbox-panel[data-state="running"]').waitFor({ timeout: 60_000 });
  assert.deepEqual(await fetchedModules(), ['/pkg-web-validate/ach_wasm_bg.wasm', '/pkg-web/ach_wasm_bg.wasm']);
  assert.equal(await panel.locator('.clock').textContent(), '2026-11-23 10:00 Eastern');

  await panel.locator('.setup').click();
  assert.match(await panel.locator('.ids').textContent(), /^Partner par_\w{22}, merchant mer_\w{22} \(approved\)\.$/);
  assert.match(await control('transaction', 'merchant_id').inputValue(), /^mer_\w{22}$/);

  await panel.locator('.submit').click();
  await panel.locator('.log li[data-status="201"]', { hasText: 'POST /transactions' }).waitFor();
  assert.deepEqual(await panel.locator('.feed tbody tr').evaluateAll((rows) => rows.map((r) => r.dataset.status)), ['A']);

  await panel.locator('.move').click();
  await panel.locator('.feed tbody tr[data-status="B"]').waitFor();
  assert.deepEqual(await panel.locator('.feed tbody tr').evaluateAll((rows) => rows.map((r) => r.dataset.status)), ['A', 'B']);
  assert.equal(await panel.locator('.clock').textContent(), '2026-11-23 18:30 Eastern');
  await page.screenshot({ path: join(artifacts, 'forms.png'), fullPage: true });
  assert.deepEqual(pageErrors, []);
});
