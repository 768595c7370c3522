// The operator console. Every figure it shows comes from the operator API
// (`/admin/*`) on this page's own address, called with the operator key typed
// in at log-in; the key is kept in this tab's sessionStorage only and sent as
// HTTP Basic (the key as user name, no password), as the API expects. The
// API's refusals are shown as it words them: its `message`, then each
// problem of `errors`. Charts are drawn by uPlot (vendor/). No build step.
'use strict';

(() => {
  const KEY_ITEM = 'ach.operator-key';
  const EASTERN = 'America/New_York';
  const $ = (selector, root = document) => root.querySelector(selector);

  // ---- the API ----

  /** A refusal of the API: its status and its JSON body (null if none). */
  class ApiError extends Error {
    constructor(status, body) {
      super(body?.message ?? `HTTP ${status}`);
      this.status = status;
      this.body = body;
    }
  }

  /** `Authorization: Basic` with `key` as the user name (UTF-8, base64). */
  function basic(key) {
    let binary = '';
    for (const byte of new TextEncoder().encode(`${key}:`)) binary += String.fromCharCode(byte);
    return `Basic ${btoa(binary)}`;
  }

  /**
   * `method path` with the stored key and `body` as JSON: the answer's JSON,
   * or the HTTP response itself when `bytes` is set and the answer is not
   * JSON (a file). A refusal throws an ApiError.
   */
  async function call(method, path, body, { bytes = false } = {}) {
    const headers = { Authorization: basic(sessionStorage.getItem(KEY_ITEM) ?? ''), Accept: 'application/json' };
    const init = { method, headers, cache: 'no-store', credentials: 'omit' };
    if (body !== undefined) {
      headers['Content-Type'] = 'application/json';
      init.body = JSON.stringify(body);
    }
    const response = await fetch(path, init);
    const type = response.headers.get('Content-Type') ?? '';
    if (bytes && response.ok && !type.startsWith('application/json')) return response;
    let json = null;
    try {
      json = JSON.parse(await response.text());
    } catch {
      json = null;
    }
    if (!response.ok || json === null || json.success === false) throw new ApiError(response.status, json);
    return json;
  }

  // ---- the page ----

  /** An element: attributes (`class`, `dataset`, `on…` listeners, others as attributes) and children. */
  function el(tag, attributes = {}, ...children) {
    const node = document.createElement(tag);
    for (const [name, value] of Object.entries(attributes)) {
      if (value === undefined || value === null || value === false) continue;
      if (name === 'class') node.className = value;
      else if (name === 'dataset') Object.assign(node.dataset, value);
      else if (name.startsWith('on')) node.addEventListener(name.slice(2), value);
      else node.setAttribute(name, value === true ? '' : String(value));
    }
    node.append(...children.filter((c) => c !== undefined && c !== null && c !== false));
    return node;
  }

  const cell = (text, cls) => el('td', { class: cls }, text ?? '—');
  const button = (label, onclick, extra = {}) => el('button', { type: 'button', onclick, ...extra }, label);
  const dollars = (n) => (n === null || n === undefined
    ? '—'
    : Number(n).toLocaleString('en-US', { style: 'currency', currency: 'USD' }));
  const percent = (rate) => `${(rate * 100).toFixed(2)} %`;
  const eastern = (instant) => `${new Date(instant).toLocaleString('en-US', {
    timeZone: EASTERN, year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', hour12: false,
  })} ET`;
  const easternDate = (instant) => new Intl.DateTimeFormat('en-CA', { timeZone: EASTERN }).format(new Date(instant));
  const path = (text) => encodeURIComponent(text);

  /** Show `error` in `target`: the API's message as it came, then each of its problems. */
  function showProblem(target, error) {
    target.replaceChildren();
    if (!(error instanceof ApiError)) {
      target.append(`The request could not be made: ${error.message}`);
      return;
    }
    target.append(error.body?.message ?? `The answer was HTTP ${error.status}, without a message.`);
    const problems = (error.body?.errors ?? []).filter((p) => p.message && p.message !== error.body.message);
    if (problems.length > 0) {
      target.append(el('ul', {}, ...problems.map((p) => el('li', {}, p.field ? `${p.field}: ${p.message}` : p.message))));
    }
  }

  const notice = (text) => $('#notice').replaceChildren(text);

  /**
   * Run an action of the operator's: the notices cleared first, a refusal
   * shown; a refused key ends the log-in.
   */
  async function act(action) {
    $('#notice').replaceChildren();
    $('#problem').replaceChildren();
    try {
      await action();
    } catch (error) {
      if (error instanceof ApiError && error.status === 401) {
        lock(error);
        return;
      }
      showProblem($('#problem'), error);
    }
  }

  /** Save `blob` as the file `name` (a Blob URL and a link with `download`). */
  function save(blob, name) {
    const url = URL.createObjectURL(blob);
    const link = el('a', { href: url, download: name, hidden: true });
    document.body.append(link);
    link.click();
    link.remove();
    setTimeout(() => URL.revokeObjectURL(url), 60_000);
  }

  // ---- partners and merchants ----

  const state = { partnersCursor: null, partner: null, merchantsCursor: null, limitsOf: null, charts: [] };

  /** The limits the API knows: [member, label, kind, whose] (`both`, `partner` or `merchant`). */
  const LIMITS = [
    ['max_transaction_amount', 'Largest transaction ($)', 'money', 'both'],
    ['min_transaction_amount', 'Smallest transaction ($)', 'money', 'both'],
    ['max_credit_amount', 'Largest credit ($)', 'money', 'both'],
    ['daily_count', 'Transactions a day', 'count', 'both'],
    ['daily_amount', 'Dollars a day ($)', 'money', 'both'],
    ['period_days', 'Rolling period (days)', 'count', 'both'],
    ['period_count', 'Transactions a period', 'count', 'both'],
    ['period_amount', 'Dollars a period ($)', 'money', 'both'],
    ['monthly_count', 'Transactions a month', 'count', 'both'],
    ['monthly_amount', 'Dollars a month ($)', 'money', 'both'],
    ['monthly_average_amount', 'Largest monthly average ($)', 'money', 'both'],
    ['monthly_average_min_count', 'Average judged from (transactions)', 'count', 'both'],
    ['exposure_limit', 'Exposure limit ($)', 'money', 'merchant'],
    ['requests_per_second', 'Requests a second (per key)', 'count', 'partner'],
  ];

  function partnerRow(partner) {
    const row = el('tr', { dataset: { id: partner.id } },
      cell(partner.id, 'id'),
      cell(partner.name),
      cell(partner.created_at),
      cell(partner.suspended ? 'suspended' : 'active', partner.suspended ? 'state-suspended' : 'state-active'),
      el('td', { class: 'actions' },
        button('Merchants', () => act(() => showMerchants(partner)), { class: 'merchants' }),
        button(partner.suspended ? 'Resume' : 'Suspend', () => act(async () => {
          const verb = partner.suspended ? 'resume' : 'suspend';
          const v = await call('POST', `/admin/partners/${path(partner.id)}/${verb}`, {});
          const updated = { ...partner, suspended: v.payload.suspended };
          row.replaceWith(partnerRow(updated));
          notice(`Partner ${partner.id} ${updated.suspended ? 'suspended' : 'resumed'}.`);
        }), { class: 'suspension' }),
        button('Limits', () => openLimits('partner', partner), { class: 'limits' })));
    return row;
  }

  async function loadPartners(more = false) {
    const query = new URLSearchParams({ limit: '25' });
    if (more && state.partnersCursor) query.set('after', state.partnersCursor);
    const v = await call('GET', `/admin/partners?${query}`);
    const body = $('#partners tbody');
    if (!more) body.replaceChildren();
    body.append(...v.payload.partners.map(partnerRow));
    state.partnersCursor = v.payload.next_cursor;
    $('#partners-more').hidden = !state.partnersCursor;
  }

  function merchantRow(merchant) {
    const approve = merchant.status === 'submitted'
      && button('Approve', () => act(async () => {
        const v = await call('POST', `/admin/merchants/${path(merchant.id)}/approve`, {});
        await loadMerchants();
        notice(`Merchant ${merchant.id} approved. Its events key, shown once: ${v.payload.api_key}`);
      }), { class: 'approve' });
    const suspended = merchant.status === 'suspended';
    return el('tr', { dataset: { id: merchant.id, status: merchant.status } },
      cell(merchant.id, 'id'),
      cell(merchant.dba ? `${merchant.company_name} (${merchant.dba})` : merchant.company_name),
      cell(merchant.standard_entry_classes.join(', ')),
      cell(merchant.status, `state-${merchant.status}`),
      cell(merchant.created_at),
      el('td', { class: 'actions' },
        approve,
        merchant.status !== 'submitted' && button(suspended ? 'Resume' : 'Suspend', () => act(async () => {
          await call('POST', `/admin/merchants/${path(merchant.id)}/${suspended ? 'resume' : 'suspend'}`, {});
          await loadMerchants();
          notice(`Merchant ${merchant.id} ${suspended ? 'resumed' : 'suspended'}.`);
        }), { class: 'suspension' }),
        button('Limits', () => openLimits('merchant', merchant), { class: 'limits' })));
  }

  async function showMerchants(partner) {
    state.partner = partner;
    for (const row of document.querySelectorAll('#partners tbody tr')) {
      row.setAttribute('aria-current', String(row.dataset.id === partner.id));
    }
    await loadMerchants();
  }

  async function loadMerchants(more = false) {
    const partner = state.partner;
    if (!partner) return;
    const query = new URLSearchParams({ limit: '25' });
    if (more && state.merchantsCursor) query.set('after', state.merchantsCursor);
    const v = await call('GET', `/admin/partners/${path(partner.id)}/merchants?${query}`);
    const body = $('#merchants tbody');
    if (!more) body.replaceChildren();
    body.append(...v.payload.merchants.map(merchantRow));
    state.merchantsCursor = v.payload.next_cursor;
    $('#merchants-more').hidden = !state.merchantsCursor;
    $('#merchants-title').textContent = v.payload.merchants.length === 0 && !more
      ? `${partner.name} (${partner.id}) has no merchant`
      : `Merchants of ${partner.name} (${partner.id}), newest first`;
    $('#merchants-block').hidden = false;
  }

  function openLimits(kind, holder) {
    state.limitsOf = { kind, holder };
    const form = $('#limits-form');
    $('#limits-title').textContent = `Limits of ${kind} ${holder.id}`;
    const fields = LIMITS.filter(([, , , whose]) => whose === 'both' || whose === kind).map(([name, label, type]) => {
      const now = holder.limits?.[name];
      const shown = now === null || now === undefined ? 'no limit' : (type === 'money' ? Number(now).toFixed(2) : String(now));
      return el('label', {}, label,
        el('input', { name, inputmode: type === 'money' ? 'decimal' : 'numeric', placeholder: shown, autocomplete: 'off' }));
    });
    form.querySelector('.limits-fields').replaceChildren(...fields);
    form.hidden = false;
    form.querySelector('input')?.focus();
  }

  async function setLimits() {
    const { kind, holder } = state.limitsOf;
    const limits = {};
    for (const input of $('#limits-form').querySelectorAll('input')) {
      const text = input.value.trim();
      if (text === '') continue;
      const [, , type] = LIMITS.find(([name]) => name === input.name);
      // Counts go as numbers, amounts as their exact text; anything else as
      // typed, for the API to refuse in its own words.
      limits[input.name] = type === 'count' && /^\d+$/.test(text) ? Number(text) : text;
    }
    const owner = kind === 'partner' ? 'partners' : 'merchants';
    const v = await call('POST', `/admin/${owner}/${path(holder.id)}/limits`, limits);
    holder.limits = v.payload.limits;
    $('#limits-form').hidden = true;
    if (kind === 'partner') await loadPartners();
    else await loadMerchants();
    notice(`Limits of ${kind} ${holder.id} set.`);
  }

  // ---- held entries ----

  /** What each rule holds, as the risk rules describe it. */
  const RULES = {
    new_account_credit: "a merchant's first credit to an account, at or above the rule's amount",
    changed_account_credit: 'a credit to an account that lately replaced another of a payee of the same name',
    amount_outlier: "an amount far above the merchant's recent average for its type",
    velocity: 'too many entries from one merchant to one account in 24 hours',
    exposure_limit: 'an entry that would take the merchant over its exposure limit',
  };

  function reviewRow(review) {
    const note = el('input', { name: 'note', placeholder: 'note (optional)', maxlength: 500, autocomplete: 'off' });
    const decide = (verb) => act(async () => {
      const body = note.value.trim() === '' ? {} : { note: note.value.trim() };
      const v = await call('POST', `/admin/reviews/${path(review.transaction_id)}/${verb}`, body);
      await loadReviews();
      notice(`Transaction ${v.payload.transaction_id} ${v.payload.status}.`);
    });
    return el('tr', { dataset: { transaction: review.transaction_id } },
      cell(review.transaction_id, 'id'),
      cell(review.merchant_id, 'id'),
      cell(dollars(review.amount), 'number'),
      cell(review.type),
      cell(review.standard_entry_class),
      el('td', { class: 'rules' }, ...review.rules.map((rule) => el('span', { class: 'rule', title: RULES[rule] ?? rule }, rule))),
      cell(review.held_at),
      el('td', {}, note),
      el('td', { class: 'actions' },
        button('Release', () => decide('release'), { class: 'release' }),
        button('Reject', () => decide('reject'), { class: 'reject' })));
  }

  async function loadReviews() {
    const v = await call('GET', '/admin/reviews');
    const reviews = v.payload.reviews;
    $('#reviews tbody').replaceChildren(...reviews.map(reviewRow));
    $('#reviews-panel .empty').hidden = reviews.length > 0;
  }

  // ---- files ----

  async function downloadFile(id) {
    const v = await call('GET', `/admin/origination-files/${path(id)}`);
    save(new Blob([v.payload.text], { type: 'text/plain' }), `${id}.ach`);
    notice(`Origination file ${id} saved as ${id}.ach.`);
  }

  async function downloadLetter(id) {
    const answer = await call('GET', `/admin/image-cash-letters/${path(id)}`, undefined, { bytes: true });
    let blob;
    if (answer instanceof Response) {
      blob = await answer.blob();
    } else {
      const bytes = Uint8Array.from(atob(answer.payload.content_base64), (c) => c.charCodeAt(0));
      blob = new Blob([bytes], { type: 'application/octet-stream' });
    }
    save(blob, `${id}.x937`);
    notice(`Image cash letter ${id} saved as ${id}.x937.`);
  }

  const digest = (sha256) => el('td', { class: 'digest', title: sha256 }, sha256 || '—');

  async function loadFiles() {
    const [files, letters] = await Promise.all([
      call('GET', '/admin/origination-files'),
      call('GET', '/admin/image-cash-letters'),
    ]);
    // Newest first.
    const fileRows = [...files.payload].reverse().map((f) => el('tr', { dataset: { id: f.id } },
      cell(f.id, 'id'),
      cell(eastern(f.cutoff)),
      cell(f.effective_date),
      cell(String(f.entries), 'number'),
      cell(dollars(f.total_debit), 'number'),
      cell(dollars(f.total_credit), 'number'),
      digest(f.sha256),
      el('td', { class: 'actions' }, button('Download', () => act(() => downloadFile(f.id)), { class: 'download' }))));
    $('#files tbody').replaceChildren(...fileRows);
    $('#files').previousElementSibling.hidden = fileRows.length > 0;
    const letterRows = [...letters.payload].reverse().map((l) => el('tr', { dataset: { id: l.id } },
      cell(l.id, 'id'),
      cell(eastern(l.cutoff)),
      cell(String(l.items), 'number'),
      cell(dollars(l.total), 'number'),
      cell(String((l.held ?? []).length), 'number'),
      digest(l.sha256),
      el('td', { class: 'actions' },
        button('Download', () => act(() => downloadLetter(l.id)), { class: 'download', disabled: !l.sha256 }))));
    $('#letters tbody').replaceChildren(...letterRows);
    $('#letters').previousElementSibling.hidden = letterRows.length > 0;
    // The newest cut-off's Eastern date: where the volume's period ends by default.
    const cutoffs = [...files.payload, ...letters.payload].map((f) => easternDate(f.cutoff));
    return cutoffs.sort().at(-1) ?? null;
  }

  // ---- charts ----

  const COLORS = { unauthorized: '#b3261e', administrative: '#c77700', overall: '#2355c5' };

  function chartWidth(container) {
    return Math.max(320, Math.floor(container.getBoundingClientRect().width || document.body.clientWidth - 48));
  }

  /**
   * Draw a uPlot chart into `container`, replacing the one it held; its x
   * scale spans `xRange` (a fixed range: uPlot fits an automatic one to the
   * data's first and last x).
   */
  function draw(container, options, data, xRange) {
    const old = state.charts.find((c) => c.container === container);
    old?.plot.destroy();
    state.charts = state.charts.filter((c) => c !== old);
    container.replaceChildren();
    const scales = { ...options.scales, x: { ...options.scales.x, range: xRange } };
    const plot = new uPlot({ width: chartWidth(container), height: 300, ...options, scales }, data, container);
    state.charts.push({ container, plot });
    return plot;
  }

  function drawReturnRates(rates) {
    const container = $('#return-chart');
    const groups = ['unauthorized', 'administrative', 'overall'];
    // Each merchant takes four places on the x axis: its three bars, then a
    // gap; one more place before the first (-1) and after the last, where
    // only the threshold lines are, so that they run across the whole width.
    const xs = [-1];
    const bars = Object.fromEntries(groups.map((g) => [g, [null]]));
    rates.forEach((r, i) => {
      groups.forEach((g, j) => {
        xs.push(4 * i + j);
        for (const h of groups) bars[h].push(h === g ? r[g].rate * 100 : null);
      });
    });
    xs.push(4 * rates.length - 1);
    for (const g of groups) bars[g].push(null);
    const thresholds = Object.fromEntries(groups.map((g) => [g, rates[0][g].threshold * 100]));
    const merchantAt = (x) => rates[Math.min(rates.length - 1, Math.max(0, Math.floor((x + 0.5) / 4)))]?.merchant_id ?? '';
    const bar = uPlot.paths.bars({ size: [0.9, 48] });
    const shown = (u, v) => (v === null || v === undefined ? '—' : `${v.toFixed(2)} %`);
    const series = [{ label: 'Merchant', value: (u, x) => (x === null ? '' : merchantAt(x)) }];
    for (const g of groups) {
      series.push({ label: `${g} rate`, stroke: COLORS[g], fill: `${COLORS[g]}b0`, paths: bar, points: { show: false }, value: shown });
    }
    for (const g of groups) {
      series.push({ label: `${g} threshold`, stroke: COLORS[g], dash: [8, 5], width: 1.5, points: { show: false }, value: shown });
    }
    const data = [xs, ...groups.map((g) => bars[g]), ...groups.map((g) => xs.map(() => thresholds[g]))];
    draw(container, {
      title: 'Return rates (%) against Nacha\'s thresholds',
      scales: {
        x: { time: false },
        y: { range: (u, min, max) => [0, Math.max(16, (max ?? 0) * 1.1)] },
      },
      axes: [
        {
          splits: () => rates.map((_, i) => 4 * i + 1),
          values: (u, splits) => splits.map((x) => {
            const id = merchantAt(x);
            return id.length > 12 ? `${id.slice(0, 10)}…` : id;
          }),
        },
        { values: (u, splits) => splits.map((v) => `${v} %`), size: 60 },
      ],
      series,
    }, data, [-1, 4 * rates.length - 1]);
    container.dataset.merchants = String(rates.length);
  }

  async function loadReturnRates() {
    const v = await call('GET', '/admin/return-rates');
    const rates = v.payload;
    const mark = (group) => {
      const text = `${percent(group.rate)} (${group.count})`;
      return cell(text, group.exceeded ? 'number exceeded' : 'number');
    };
    $('#return-rates tbody').replaceChildren(...rates.map((r) => el('tr', { dataset: { merchant: r.merchant_id } },
      cell(r.merchant_id, 'id'), cell(r.partner_id, 'id'), cell(String(r.debits), 'number'),
      mark(r.unauthorized), mark(r.administrative), mark(r.overall))));
    $('#returns-panel .empty').hidden = rates.length > 0;
    if (rates.length > 0) {
      $('#returns-panel .window').textContent = String(rates[0].window_days);
      drawReturnRates(rates);
    } else {
      $('#return-chart').replaceChildren();
      $('#return-chart').dataset.merchants = '0';
    }
  }

  /** Half a day in seconds: the volume chart's margin before its first day and after its last, so that their bars show whole. */
  const HALF_DAY = 43_200;

  /** `date` (`YYYY-MM-DD`) moved by `days`. */
  function addDays(date, days) {
    const d = new Date(`${date}T00:00:00Z`);
    d.setUTCDate(d.getUTCDate() + days);
    return d.toISOString().slice(0, 10);
  }

  async function loadVolume() {
    const from = $('#volume-from').value;
    const to = $('#volume-to').value;
    const v = await call('GET', `/admin/volume?${new URLSearchParams({ from, to })}`);
    const days = v.payload.days;
    const xs = days.map((d) => Date.parse(`${d.date}T00:00:00Z`) / 1000);
    const money = (u, value) => (value === null || value === undefined ? '—' : dollars(value));
    const active = days.filter((d) => d.files > 0 || d.cash_letters > 0);
    const sum = (member) => days.reduce((total, d) => total + Number(d[member]), 0);
    $('#volume-summary').textContent = `${from} to ${to}: ${sum('files')} files, ${sum('entries')} entries, `
      + `${dollars(sum('total_debit'))} of debits and ${dollars(sum('total_credit'))} of credits; `
      + `${sum('cash_letters')} cash letters, ${sum('check_items')} checks, ${dollars(sum('check_total'))}.`;
    const container = $('#volume-chart');
    draw(container, {
      title: 'Sent to the bank per day (Eastern date of the cut-offs)',
      tzDate: (ts) => uPlot.tzDate(new Date(ts * 1000), 'Etc/UTC'),
      scales: {
        x: { time: true },
        entries: { range: (u, min, max) => [0, Math.max(1, max ?? 0) * 1.1] },
      },
      axes: [
        {},
        { values: (u, splits) => splits.map((s) => dollars(s)), size: 90 },
        { scale: 'entries', side: 1, grid: { show: false }, size: 50 },
      ],
      series: [
        { label: 'Day' },
        { label: 'Entries', scale: 'entries', stroke: '#8892a6', fill: '#8892a640', paths: uPlot.paths.bars({ size: [0.6, 40] }), points: { show: false } },
        { label: 'Debits', stroke: COLORS.unauthorized, width: 2, value: money },
        { label: 'Credits', stroke: COLORS.overall, width: 2, value: money },
        { label: 'Checks (ICL)', stroke: COLORS.administrative, width: 2, value: money },
      ],
    }, [
      xs,
      days.map((d) => d.entries),
      days.map((d) => Number(d.total_debit)),
      days.map((d) => Number(d.total_credit)),
      days.map((d) => Number(d.check_total)),
    ], [xs[0] - HALF_DAY, xs.at(-1) + HALF_DAY]);
    container.dataset.days = String(days.length);
    container.dataset.activeDays = String(active.length);
  }

  // ---- log-in and the whole page ----

  async function loadAll() {
    document.body.dataset.state = 'loading';
    await act(async () => {
      await loadPartners();
      await loadReviews();
      const newest = await loadFiles();
      await loadReturnRates();
      // The period ends on the newest cut-off's day (the engine's clock, which
      // a sandbox sets), else today (Eastern); it covers 30 days.
      if (!$('#volume-to').value) {
        const to = newest ?? easternDate(Date.now());
        $('#volume-to').value = to;
        $('#volume-from').value = addDays(to, -29);
      }
      await loadVolume();
    });
    if (document.body.dataset.state === 'loading') {
      document.body.dataset.state = $('#problem').hasChildNodes() ? 'problem' : 'ready';
    }
  }

  /** Back to the log-in form; `error` (a refusal) shown there. */
  function lock(error) {
    sessionStorage.removeItem(KEY_ITEM);
    for (const chart of state.charts) chart.plot.destroy();
    state.charts = [];
    $('#console').hidden = true;
    $('#log-out').hidden = true;
    $('#login').hidden = false;
    $('#login-error').replaceChildren();
    if (error) showProblem($('#login-error'), error);
    document.body.dataset.state = 'locked';
  }

  async function logIn(key) {
    sessionStorage.setItem(KEY_ITEM, key);
    $('#login-error').replaceChildren();
    try {
      // Any operator read tells whether the key is the operator's.
      await call('GET', '/admin/partners?limit=1');
    } catch (error) {
      lock(error);
      return;
    }
    $('#login').hidden = true;
    $('#console').hidden = false;
    $('#log-out').hidden = false;
    await loadAll();
  }

  document.addEventListener('DOMContentLoaded', () => {
    $('#login-form').addEventListener('submit', (event) => {
      event.preventDefault();
      const input = $('#operator-key');
      const key = input.value.trim();
      input.value = '';
      logIn(key);
    });
    $('#log-out').addEventListener('click', () => lock());
    $('#partners-more').addEventListener('click', () => act(() => loadPartners(true)));
    $('#merchants-more').addEventListener('click', () => act(() => loadMerchants(true)));
    $('#limits-form').addEventListener('submit', (event) => {
      event.preventDefault();
      act(setLimits);
    });
    $('#limits-form .cancel').addEventListener('click', () => {
      $('#limits-form').hidden = true;
    });
    $('#volume-form').addEventListener('submit', (event) => {
      event.preventDefault();
      act(loadVolume);
    });
    window.addEventListener('resize', () => {
      for (const { container, plot } of state.charts) plot.setSize({ width: chartWidth(container), height: 300 });
    });
    const kept = sessionStorage.getItem(KEY_ITEM);
    if (kept) logIn(kept);
  });
})();
