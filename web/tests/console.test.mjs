// The operator console in a real browser (Debian's chromium through
// playwright-core): `achd serve --sandbox` with its operator plane on a free
// loopback port serves it at /console/. Set up through the APIs: a partner, an
// approved merchant, a stored customer, a risk rule that holds a large first
// credit, that credit (held), debits, the 18:00 cut-off (an origination file),
// a return, and a second merchant waiting for approval. In the browser: a wrong key is refused with the API's own
// message, the operator key logs in, a waiting merchant is approved and
// given limits (a refused limit shows the API's words), the partner is
// suspended and resumed, the held entry shows the rule it
// tripped and is released (the API then originates it), an origination file
// is downloaded (a NACHA file: its bytes are the listed file's), and both
// charts are drawn. The screenshot is a test artefact:
// target/artifacts/console.png; the server's log is
// target/artifacts/console-achd.log.
//
// Run by scripts/browser-test (which builds achd first).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { request } from 'node:https';
import { join } from 'node:path';
import { pinnedBrowser } from './pinned-browser.mjs';
import { artifacts, root, startServer, stopServer } from './sandbox-server.mjs';

let server;
let dataDir;
let profileDir;
let publicBase;
let adminBase;
let cert;
let operatorKey;
let context;
let page;
const pageErrors = [];
/** What the set-up made. */
const made = {};

/**
 * One API request over HTTPS (trusting only the server's own certificate):
 * `key` as the Basic user name, `body` as JSON. Resolves with the status and
 * the parsed answer.
 */
function api(base, method, path, key, body) {
  return new Promise((resolvePromise, reject) => {
    const headers = { Authorization: `Basic ${Buffer.from(`${key}:`).toString('base64')}` };
    const text = body === undefined ? undefined : JSON.stringify(body);
    if (text !== undefined) headers['Content-Type'] = 'application/json';
    const req = request(`${base}${path}`, { method, headers, ca: cert }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => {
        const answer = Buffer.concat(chunks).toString('utf8');
        resolvePromise({ status: res.statusCode, body: answer ? JSON.parse(answer) : null });
      });
    });
    req.on('error', reject);
    req.end(text);
  });
}

/** An API request that must answer `status`: its answer. */
async function expect(base, method, path, key, body, status) {
  const answer = await api(base, method, path, key, body);
  assert.equal(answer.status, status, `${method} ${path}: ${JSON.stringify(answer.body)}`);
  return answer.body;
}

const operator = (method, path, body, status = 200) => expect(adminBase, method, path, operatorKey, body, status);
const partner = (method, path, body, status) => expect(publicBase, method, path, made.partnerKey, body, status);

/** Everything the browser is shown, made through the APIs. */
async function setUp() {
  const p = await operator('POST', '/admin/partners', { name: 'Acme Payments' }, 201);
  made.partnerId = p.payload.partner_id;
  made.partnerKey = p.payload.api_key;
  const application = JSON.parse(readFileSync(join(root, 'examples/requests/merchant.json'), 'utf8'));
  application.partner_id = made.partnerId;
  application.velocities.decline_duplicates = false;
  const m = await partner('POST', '/merchants', application, 201);
  made.merchantId = m.id;
  const limits = { max_transaction_amount: '5000.00', max_credit_amount: '5000.00', monthly_count: 1000, monthly_amount: '900000.00' };
  await operator('POST', `/admin/merchants/${made.merchantId}/approve`, { limits });
  const customer = await partner('POST', '/customers', {
    partner_id: made.partnerId, merchant_id: 'global', name: 'Grace Hopper', routing_number: '026009593',
    account_number: '000123456789', account_type: 'checking',
  }, 201);
  made.customerId = customer.payload.id;
  // A second merchant, waiting for the operator's approval (submitted later:
  // the list is newest first).
  await operator('POST', '/admin/clock', { now: '2026-11-23T10:05:00-05:00' });
  made.submittedId = (await partner('POST', '/merchants', application, 201)).id;
  // A merchant's first credit to an account of $500.00 or more is held.
  await operator('PUT', '/admin/risk-rules', { new_account_credit: { enabled: true, min_amount: '500.00' } });
  const entry = (type, amount) => ({
    partner_id: made.partnerId, merchant_id: made.merchantId, amount, description: 'Console test', type,
    standard_entry_class: 'PPD', customer: { id: made.customerId },
  });
  made.debits = [];
  for (const amount of ['40.00', '25.00', '10.00', '5.00']) {
    made.debits.push((await partner('POST', '/transactions', entry('debit', amount), 201)).payload.id);
  }
  made.held = (await partner('POST', '/transactions', entry('credit', '750.00'), 201)).payload.id;
  const reviews = await operator('GET', '/admin/reviews');
  assert.deepEqual(reviews.payload.reviews.map((r) => [r.transaction_id, r.rules]), [[made.held, ['new_account_credit']]]);
  // The 18:00 cut-off writes the file of the four debits (the held credit waits).
  await operator('POST', '/admin/clock', { now: '2026-11-23T18:30:00-05:00' });
  const files = await operator('GET', '/admin/origination-files');
  assert.equal(files.payload.length, 1);
  made.file = files.payload[0];
  assert.equal(made.file.entries, 4);
  // One debit comes back unauthorized: 1 of 4 is over Nacha's 0.5 %.
  await operator('POST', `/admin/simulations/transactions/${made.debits[0]}/return`, { return_code: 'R10' });
}

before(async () => {
  let listening;
  ({ server, dataDir, listening } = startServer({ prefix: 'ach-console-data-', logName: 'console-achd.log' }));
  const { admin, listen } = await listening;
  adminBase = `https://${admin}`;
  publicBase = `https://${listen}`;
  cert = readFileSync(join(dataDir, 'tls-cert.pem'), 'utf8');
  operatorKey = readFileSync(join(dataDir, 'operator.key'), 'utf8').trim();
  await setUp();
  ({ context, page, profileDir } = await pinnedBrowser({
    cert,
    prefix: 'ach-console-profile-',
    viewport: { width: 1280, height: 900 },
    acceptDownloads: true,
    errors: pageErrors,
    // The refusals the tests provoke (a wrong key, a wrong limit) are the
    // API's answers, which the browser also reports; nothing else may be.
    ignore: (m) => /status of 4\d\d/.test(m.text()) && new URL(m.location().url).pathname.startsWith('/admin/'),
  }));
});

after(async () => {
  await context?.close();
  await stopServer(server, [dataDir, profileDir]);
});

/** Log in with `key` through the form. */
async function logIn(key) {
  await page.locator('#operator-key').fill(key);
  await page.locator('#login-form button[type="submit"]').click();
}

// ---- the tests, in order on one page ----

test('a wrong key is refused with the API\'s own message', async () => {
  await page.goto(`${adminBase}/console/`);
  assert.equal(await page.locator('body').getAttribute('data-state'), 'locked');
  await logIn('ok_not_the_operator_key');
  await page.locator('#login-error:not(:empty)').waitFor();
  assert.equal(await page.locator('#login-error').textContent(), 'Authentication failed.');
  assert.equal(await page.locator('#console').isVisible(), false);
  assert.equal(await page.evaluate(() => sessionStorage.length), 0, 'a refused key is not kept');
});

test('the operator key logs in; the key is kept in this tab only', async () => {
  await logIn(operatorKey);
  await page.locator('body[data-state="ready"]').waitFor();
  assert.equal(await page.locator('#login-error').textContent(), '');
  assert.equal(await page.evaluate(() => sessionStorage.getItem('ach.operator-key')), operatorKey);
  assert.equal(await page.evaluate(() => localStorage.length), 0);
  assert.deepEqual(
    await page.locator('#partners tbody tr').evaluateAll((rows) => rows.map((r) => r.dataset.id)),
    [made.partnerId],
  );
  await page.locator(`#partners tr[data-id="${made.partnerId}"] button.merchants`).click();
  await page.locator(`#merchants tr[data-id="${made.merchantId}"][data-status="approved"]`).waitFor();
  assert.deepEqual(
    await page.locator('#merchants tbody tr').evaluateAll((rows) => rows.map((r) => [r.dataset.id, r.dataset.status])),
    [[made.submittedId, 'submitted'], [made.merchantId, 'approved']],
    'newest first',
  );
});

test('a merchant is approved and given limits; a partner is suspended and resumed', async () => {
  await page.locator(`#merchants tr[data-id="${made.submittedId}"] button.approve`).click();
  await page.locator(`#merchants tr[data-id="${made.submittedId}"][data-status="approved"]`).waitFor();
  assert.match(await page.locator('#notice').textContent(), new RegExp(`^Merchant ${made.submittedId} approved\\. Its events key, shown once: \\S+$`));

  // A limit the API refuses: its own words, as they came.
  await page.locator(`#merchants tr[data-id="${made.submittedId}"] button.limits`).click();
  await page.locator('#limits-form input[name="daily_count"]').fill('a dozen');
  await page.locator('#limits-form button[type="submit"]').click();
  await page.locator('#problem:not(:empty)').waitFor();
  const refusal = await page.locator('#problem').textContent();
  assert.match(refusal, /^Failed to accept this transaction/);
  assert.match(refusal, /a dozen/);
  await page.locator('#limits-form input[name="daily_count"]').fill('12');
  await page.locator('#limits-form input[name="daily_amount"]').fill('2500.00');
  await page.locator('#limits-form button[type="submit"]').click();
  await page.locator('#notice', { hasText: `Limits of merchant ${made.submittedId} set.` }).waitFor();
  const merchants = await operator('GET', `/admin/partners/${made.partnerId}/merchants`);
  const approved = merchants.payload.merchants.find((m) => m.id === made.submittedId);
  assert.deepEqual([approved.status, approved.limits.daily_count, approved.limits.daily_amount], ['approved', 12, 2500]);

  const partnerRow = () => page.locator(`#partners tr[data-id="${made.partnerId}"]`);
  await partnerRow().locator('button.suspension').click();
  await page.locator('#notice', { hasText: `Partner ${made.partnerId} suspended.` }).waitFor();
  assert.match(await partnerRow().textContent(), /suspended/);
  assert.equal((await operator('GET', '/admin/partners')).payload.partners[0].suspended, true);
  assert.equal((await api(publicBase, 'GET', `/merchants?partner_id=${made.partnerId}`, made.partnerKey)).status, 401);
  await partnerRow().locator('button.suspension').click();
  await page.locator('#notice', { hasText: `Partner ${made.partnerId} resumed.` }).waitFor();
  assert.equal((await operator('GET', '/admin/partners')).payload.partners[0].suspended, false);
});

test('the held entry shows the rule it tripped and is released', async () => {
  const row = page.locator(`#reviews tr[data-transaction="${made.held}"]`);
  assert.deepEqual(await row.locator('.rule').allTextContents(), ['new_account_credit']);
  assert.match(await row.textContent(), /\$750\.00/);
  await row.locator('input[name="note"]').fill('Customer called to confirm');
  await row.locator('button.release').click();
  await page.locator('#notice', { hasText: `Transaction ${made.held} released.` }).waitFor();
  assert.equal(await page.locator('#reviews tbody tr').count(), 0);
  assert.equal(await page.locator('#reviews-panel .empty').isVisible(), true);
  // Through the API: no longer held, and the next cut-off originates it.
  const reviews = await operator('GET', '/admin/reviews');
  assert.deepEqual(reviews.payload.reviews, []);
  await operator('POST', '/admin/clock', { now: '2026-11-24T18:30:00-05:00' });
  const files = await operator('GET', '/admin/origination-files');
  assert.equal(files.payload.length, 2);
  assert.deepEqual([files.payload[1].entries, files.payload[1].total_credit], [1, 750]);
});

test('an origination file downloads as the NACHA file the API lists', async () => {
  const row = page.locator(`#files tr[data-id="${made.file.id}"]`);
  const [download] = await Promise.all([page.waitForEvent('download'), row.locator('button.download').click()]);
  assert.equal(download.suggestedFilename(), `${made.file.id}.ach`);
  const bytes = readFileSync(await download.path());
  assert.equal(bytes.subarray(0, 3).toString('latin1'), '101', 'a NACHA file begins with its file header record');
  assert.equal(createHash('sha256').update(bytes).digest('hex'), made.file.sha256, 'the bytes of the listed file');
  await page.locator('#notice', { hasText: `saved as ${made.file.id}.ach` }).waitFor();
});

/** The canvas of a chart: its size and how many of its pixels are drawn. */
const painted = (selector) => page.locator(`${selector} canvas`).evaluate((canvas) => {
  const { data } = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height);
  let drawn = 0;
  for (let i = 3; i < data.length; i += 4) if (data[i] !== 0) drawn += 1;
  return { width: canvas.width, height: canvas.height, drawn };
});

test('both charts are drawn from the API\'s figures', async () => {
  const rates = page.locator('#return-chart');
  assert.equal(await rates.getAttribute('data-merchants'), '1');
  const ratesCanvas = await painted('#return-chart');
  assert.ok(ratesCanvas.width > 300 && ratesCanvas.drawn > 1000, JSON.stringify(ratesCanvas));
  // The legend names the three groups and Nacha's three lines.
  const legend = await rates.locator('.u-legend .u-label').allTextContents();
  for (const label of ['unauthorized rate', 'administrative rate', 'overall rate', 'unauthorized threshold', 'administrative threshold', 'overall threshold']) {
    assert.ok(legend.includes(label), `${label} in ${legend}`);
  }
  const line = page.locator(`#return-rates tr[data-merchant="${made.merchantId}"]`);
  assert.equal(await line.locator('td.exceeded').count(), 2, 'unauthorized and overall over their thresholds');
  assert.match(await line.textContent(), /25\.00 % \(1\)/);

  const volume = page.locator('#volume-chart');
  assert.equal(await volume.getAttribute('data-days'), '30');
  assert.equal(await volume.getAttribute('data-active-days'), '1');
  const volumeCanvas = await painted('#volume-chart');
  assert.ok(volumeCanvas.width > 300 && volumeCanvas.drawn > 1000, JSON.stringify(volumeCanvas));
  assert.match(await page.locator('#volume-summary').textContent(), /1 files, 4 entries, \$80\.00 of debits/);
  await page.screenshot({ path: join(artifacts, 'console.png'), fullPage: true });
  assert.deepEqual(pageErrors, []);
});
