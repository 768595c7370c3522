// The sandbox panel: the whole service running in this tab. The full module
// (pkg-web: validation and the engine on redb's in-memory backend) loads only
// when asked; the page makes an operator key, a partner and an approved
// merchant, sends the transaction form, moves the sandbox clock past the 6 PM
// Eastern cut-off, and shows the status-changes feed.

const STATUS_NAMES = { A: 'Pending', B: 'Originated', S: 'Settled', R: 'Returned' };

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined) continue;
    if (k === 'class') node.className = v;
    else node.setAttribute(k, v);
  }
  node.append(...children.filter((c) => c != null));
  return node;
}

/** A random operator key for this tab's engine (`ok_` + 32 letters and digits). */
function operatorKey() {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  return `ok_${Array.from(bytes, (b) => alphabet[b % 62]).join('')}`;
}

/** Year, month, day, hour, minute of an instant in US Eastern time. */
function eastern(ms) {
  const parts = new Intl.DateTimeFormat('en-CA', {
    timeZone: 'America/New_York', year: 'numeric', month: '2-digit', day: '2-digit',
    hour: '2-digit', minute: '2-digit', hourCycle: 'h23',
  }).formatToParts(ms);
  const get = (type) => Number(parts.find((p) => p.type === type).value);
  return { y: get('year'), m: get('month'), d: get('day'), h: get('hour'), min: get('minute') };
}

/** The offset of US Eastern time (`-05:00` or `-04:00`) at an instant. */
function easternOffset(ms) {
  const name = new Intl.DateTimeFormat('en-US', { timeZone: 'America/New_York', timeZoneName: 'longOffset' })
    .formatToParts(ms).find((p) => p.type === 'timeZoneName').value;
  return name === 'GMT' ? '+00:00' : name.replace('GMT', '');
}

/** The first 6:30 PM Eastern strictly after `ms`, as RFC 3339 with its offset. */
export function nextCutoff(ms) {
  const e = eastern(ms);
  const late = e.h * 60 + e.min >= 18 * 60 + 30;
  const day = new Date(Date.UTC(e.y, e.m - 1, e.d + (late ? 1 : 0), 23, 30));
  const date = day.toISOString().slice(0, 10);
  return `${date}T18:30:00${easternOffset(day.getTime())}`;
}

export function setupSandbox(panel, forms) {
  const $ = (selector) => panel.querySelector(selector);
  const log = $('.log');
  const feedBody = $('.feed tbody');
  const state = { engine: null, clock: 0, operator: null, partner: null, merchant: null };

  const note = (text, kind = 'info') => {
    log.prepend(el('li', { class: kind }, text));
  };

  /** One API request to the engine, logged with its answer. */
  const call = (request) => {
    const answer = state.engine.request(request);
    const body = JSON.stringify(answer.body);
    const short = body.length > 400 ? `${body.slice(0, 400)}…` : body;
    const entry = el('li', { class: answer.status < 300 ? 'ok' : 'refused', 'data-status': String(answer.status) },
      el('code', {}, `${request.method} ${request.path}`), ` → ${answer.status} `, el('code', { class: 'body' }, short));
    log.prepend(entry);
    return answer;
  };

  const setBusy = () => {
    const ready = Boolean(state.engine);
    $('.start').disabled = ready;
    $('.start-at').disabled = ready;
    $('.setup').disabled = !ready || Boolean(state.merchant);
    $('.submit').disabled = !state.merchant;
    $('.move').disabled = !ready;
    $('.refresh').disabled = !state.partner;
  };

  const showClock = () => {
    const e = eastern(state.clock);
    const pad = (n) => String(n).padStart(2, '0');
    $('.clock').textContent = `${e.y}-${pad(e.m)}-${pad(e.d)} ${pad(e.h)}:${pad(e.min)} Eastern`;
  };

  const refreshFeed = () => {
    if (!state.partner) return;
    const answer = state.engine.request({
      method: 'GET', path: '/status-changes/0', query: { partner_id: state.partner.id }, apiKey: state.partner.key,
    });
    feedBody.replaceChildren();
    for (const c of answer.body.payload?.changes ?? []) {
      feedBody.append(el('tr', { 'data-status': c.status },
        el('td', {}, el('code', {}, c.transaction_id)),
        el('td', { class: 'status' }, `${c.status} ${STATUS_NAMES[c.status] ?? ''}`),
        el('td', {}, c.change_timestamp),
        el('td', {}, c.origination_date ?? '—'),
        el('td', {}, c.effective_date ?? '—'),
        el('td', {}, c.settlement_date ?? '—'),
        el('td', {}, c.reason ?? '')));
    }
    $('.feed').dataset.count = String(feedBody.children.length);
  };

  $('.start').addEventListener('click', async () => {
    const status = $('.sandbox-status');
    status.textContent = 'Loading the full module…';
    const started = performance.now();
    try {
      const full = await import('./pkg-web/ach_wasm.js');
      await full.default();
      const startText = $('.start-at').value.trim();
      state.clock = startText ? Date.parse(startText) : Date.now();
      if (Number.isNaN(state.clock)) throw new Error(`'${startText}' is not a date and time`);
      state.operator = operatorKey();
      state.engine = new full.Engine({
        operatorKey: state.operator, sandbox: true, start: new Date(state.clock).toISOString(),
      });
      const entry = performance.getEntriesByType('resource').find((r) => r.name.endsWith('pkg-web/ach_wasm_bg.wasm'));
      const size = entry?.encodedBodySize ? `${Math.round(entry.encodedBodySize / 1024)} KB, ` : '';
      status.textContent = `Sandbox engine running in this tab (${size}${Math.round(performance.now() - started)} ms). Operator key: ${state.operator}`;
      panel.dataset.state = 'running';
      showClock();
    } catch (e) {
      status.textContent = `The sandbox did not start: ${e.message}`;
      state.engine = null;
    }
    setBusy();
  });

  $('.setup').addEventListener('click', () => {
    const partner = call({ method: 'POST', path: '/admin/partners', apiKey: state.operator, body: { name: 'Browser sandbox' } });
    if (partner.status !== 201) return;
    state.partner = { id: partner.body.payload.partner_id, key: partner.body.payload.api_key };
    const form = forms.merchant();
    const application = form.verdict.valid ? form.json : structuredClone(forms.sampleMerchant);
    note(form.verdict.valid ? 'Merchant: the application form.' : 'Merchant: the example application (the form is not complete).');
    const submitted = call({
      method: 'POST', path: '/merchants', apiKey: state.partner.key, body: { ...application, partner_id: state.partner.id },
    });
    if (submitted.status !== 201) return;
    const approved = call({ method: 'POST', path: `/admin/merchants/${submitted.body.id}/approve`, apiKey: state.operator, body: {} });
    if (approved.status !== 200) return;
    state.merchant = { id: submitted.body.id, key: approved.body.payload.api_key };
    $('.ids').textContent = `Partner ${state.partner.id}, merchant ${state.merchant.id} (approved).`;
    forms.useMerchant(state.merchant.id);
    refreshFeed();
    setBusy();
  });

  $('.submit').addEventListener('click', () => {
    const { json, verdict } = forms.transaction();
    if (!verdict.valid) note(`The transaction form is not valid (${verdict.message}); sending it shows the service's answer.`, 'refused');
    call({ method: 'POST', path: '/transactions', apiKey: state.partner.key, body: { ...json, partner_id: state.partner.id } });
    refreshFeed();
  });

  $('.move').addEventListener('click', () => {
    const now = nextCutoff(state.clock);
    const answer = call({ method: 'POST', path: '/admin/clock', apiKey: state.operator, body: { now } });
    if (answer.status === 200) {
      state.clock = Date.parse(answer.body.payload.now);
      showClock();
      const { originated, settled } = answer.body.payload;
      note(`Clock moved to ${now}: ${originated} originated, ${settled} settled${originated || settled ? '' : ' (no banking day cut-off passed: move again)'}.`);
    }
    refreshFeed();
  });

  $('.refresh').addEventListener('click', refreshFeed);
  setBusy();
}
