// The forms, validated live by the service's own rules compiled to WebAssembly
// (pkg-web-validate: the validation-only module). Every problem the module
// reports is marked next to its field, the form's message stands on top.
import init, {
  validateTransaction,
  validateCustomer,
  validateMerchant,
  loadRoutingDirectory,
} from './pkg-web-validate/ach_wasm.js';
import * as specs from './forms.js';
import { setupSandbox } from './sandbox.js';

const validators = { transaction: validateTransaction, customer: validateCustomer, merchant: validateMerchant };
const nouns = { transaction: 'transaction', customer: 'customer', merchant: 'merchant application' };

// ---- JSON paths: "principal[0].address.zip" ----

function segments(path) {
  return path.match(/[^.[\]]+|\[\d+\]/g).map((s) => (s.startsWith('[') ? Number(s.slice(1, -1)) : s));
}

function getPath(obj, path) {
  return segments(path).reduce((v, k) => (v == null ? undefined : v[k]), obj);
}

/** Set `path` in `obj`, making the objects and arrays on the way. */
function setPath(obj, path, value, { keep = false } = {}) {
  const keys = segments(path);
  let at = obj;
  keys.forEach((k, i) => {
    if (i === keys.length - 1) {
      if (!(keep && at[k] != null)) at[k] = value;
    } else {
      if (at[k] == null) at[k] = typeof keys[i + 1] === 'number' ? [] : {};
      at = at[k];
    }
  });
}

// ---- rendering the forms from forms.js ----

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === false) continue;
    if (k === 'class') node.className = v;
    else if (k === 'dataset') {
      for (const [dk, dv] of Object.entries(v)) if (dv !== undefined) node.dataset[dk] = dv;
    }
    else node.setAttribute(k, v === true ? '' : v);
  }
  node.append(...children.filter((c) => c != null));
  return node;
}

const idOf = (formId, path) => `${formId}-${path.replace(/[^A-Za-z0-9_-]/g, '_')}`;

function renderField(formId, f) {
  const id = idOf(formId, f.path);
  const markId = `${id}-mark`;
  const hintId = f.hint ? `${id}-hint` : undefined;
  const describedBy = [markId, hintId].filter(Boolean).join(' ');
  const common = { id, name: f.path, dataset: { path: f.path }, 'aria-describedby': describedBy };
  let control;
  let label = el('label', { for: id }, f.label, f.optional ? el('span', { class: 'optional' }, ' (optional)') : null);
  switch (f.kind) {
    case 'select':
      control = el('select', common, el('option', { value: '' }, 'Choose…'), ...f.options.map((o) => el('option', { value: o }, o)));
      break;
    case 'checkbox':
      control = el('input', { ...common, type: 'checkbox', dataset: { path: f.path, kind: 'checkbox' } });
      label = el('label', { for: id, class: 'inline' }, control, ' ', f.label);
      control = null;
      break;
    case 'checkboxes':
      label = el('span', { class: 'label', id: `${id}-label` }, f.label);
      control = el('div', { class: 'choices', role: 'group', 'aria-labelledby': `${id}-label`, 'aria-describedby': describedBy },
        ...f.options.map((o) => el('label', { class: 'inline' },
          el('input', { type: 'checkbox', name: f.path, value: o, dataset: { path: f.path, kind: 'checkboxes' } }), ' ', o)));
      break;
    case 'file':
      control = el('input', { ...common, type: 'file', accept: 'image/*', dataset: { path: f.path, kind: 'file' } });
      control.addEventListener('change', () => readImage(control));
      break;
    case 'date':
      control = el('input', { ...common, type: 'date' });
      break;
    default:
      control = el('input', {
        ...common, type: f.type ?? 'text', inputmode: f.inputmode, autocomplete: f.autocomplete ?? 'off', spellcheck: 'false',
      });
  }
  const hint = f.hint ? el('span', { class: 'hint', id: hintId }, f.hint) : null;
  return el('div', { class: `field${f.short ? ' short' : ''}`, dataset: { for: f.path, classes: f.classes?.join(' ') } },
    label, control, hint, el('p', { class: 'mark', id: markId, 'aria-live': 'polite' }));
}

function renderGroup(formId, g) {
  const attrs = { class: 'group', dataset: {} };
  if (!g.group.includes('#') && g.group !== 'check') attrs.dataset.group = g.group;
  if (!g.flat) attrs.dataset.object = g.group;
  if (g.when) attrs.dataset.when = g.when;
  if (g.classes) attrs.dataset.classes = g.classes.join(' ');
  if (g.toggle) attrs.dataset.toggle = g.group;
  const legendParts = [g.legend];
  if (g.toggle) {
    const id = idOf(formId, `${g.group}-toggle`);
    legendParts.push(' ', el('label', { class: 'inline toggle', for: id },
      el('input', { type: 'checkbox', id, class: 'group-toggle' }), ' ', g.toggle));
  }
  if (g.choice) {
    legendParts.push(' ', el('span', { class: 'choice', role: 'radiogroup' }, ...g.choice.options.map(([value, text], i) =>
      el('label', { class: 'inline' },
        el('input', { type: 'radio', name: `${formId}-${g.choice.name}`, value, checked: i === 0, class: 'group-choice' }), ' ', text))));
  }
  const legend = g.legend || g.toggle || g.choice ? el('legend', {}, ...legendParts) : null;
  const body = el('div', { class: 'group-body' });
  if (g.repeat) {
    body.append(el('div', { class: 'items' }), el('button', { type: 'button', class: 'add' }, g.add));
    attrs.dataset.array = g.group;
    attrs.class += ' repeater';
  }
  for (const f of g.fields ?? []) body.append(renderField(formId, f));
  for (const sub of g.groups ?? []) body.append(renderGroup(formId, sub));
  const fieldset = el('fieldset', { ...attrs, disabled: Boolean(g.toggle) },
    legend, attrs.dataset.group ? el('p', { class: 'mark group-mark', 'aria-live': 'polite' }) : null, body);
  if (g.repeat) setupRepeater(formId, fieldset, g);
  return fieldset;
}

/** Principals and references: items `group[0]`, `group[1]`, … with add and remove. */
function setupRepeater(formId, fieldset, g) {
  const items = fieldset.querySelector('.items');
  const render = (values) => {
    items.replaceChildren();
    values.forEach((v, i) => {
      const item = renderGroup(formId, g.repeat(i));
      const remove = el('button', { type: 'button', class: 'remove' }, `Remove ${g.repeat(i).legend.toLowerCase()}`);
      remove.addEventListener('click', () => {
        const all = snapshot();
        all.splice(i, 1);
        render(all);
        fieldset.dispatchEvent(new Event('input', { bubbles: true }));
      });
      if (values.length > g.min) item.querySelector('.group-body').append(remove);
      items.append(item);
      const whole = {};
      setPath(whole, `${g.group}[${i}]`, v ?? {});
      fill(item, whole);
    });
  };
  const snapshot = () => [...items.children].map((item, i) => getPath(collect(item), `${g.group}[${i}]`) ?? {});
  fieldset.repeat = { render, snapshot };
  fieldset.querySelector('.add').addEventListener('click', () => {
    render([...snapshot(), {}]);
    fieldset.dispatchEvent(new Event('input', { bubbles: true }));
  });
  render(Array.from({ length: g.min }, () => ({})));
}

function readImage(input) {
  const file = input.files?.[0];
  if (!file) {
    delete input.dataset.value;
    return;
  }
  const reader = new FileReader();
  reader.onload = () => {
    input.dataset.value = String(reader.result).replace(/^data:[^,]*,/, '');
    input.dispatchEvent(new Event('input', { bubbles: true }));
  };
  reader.readAsDataURL(file);
}

// ---- form → JSON, JSON → form ----

/** The JSON the form stands for: empty fields are left out (so "required" shows),
 * disabled groups too; an unchecked billing account and no references are null. */
function collect(root) {
  const out = {};
  for (const node of root.querySelectorAll('[data-object], [data-array], [data-path]')) {
    const off = node.matches(':disabled');
    if (node.dataset.toggle && off && !node.parentElement.closest(':disabled')) {
      setPath(out, node.dataset.toggle, null);
      continue;
    }
    if (off) continue;
    if (node.dataset.array) {
      const count = node.querySelector('.items').children.length;
      const spec = node.closest('form').spec.groups.find((x) => x.group === node.dataset.array);
      setPath(out, node.dataset.array, count === 0 && spec?.nullWhenEmpty ? null : [], { keep: true });
    } else if (node.dataset.object) {
      setPath(out, node.dataset.object, {}, { keep: true });
    } else if (node.dataset.kind === 'checkbox') {
      setPath(out, node.dataset.path, node.checked);
    } else if (node.dataset.kind === 'checkboxes') {
      setPath(out, node.dataset.path, [], { keep: true });
      if (node.checked) getPath(out, node.dataset.path).push(node.value);
    } else if (node.dataset.kind === 'file') {
      if (node.dataset.value) setPath(out, node.dataset.path, node.dataset.value);
    } else if (node.value !== '') {
      setPath(out, node.dataset.path, node.value);
    }
  }
  return out;
}

/** Put a JSON value's members into the form's fields (the "example" button). */
function fill(root, json) {
  for (const rep of root.querySelectorAll('.repeater')) {
    const path = rep.dataset.array;
    const items = getPath(json, path);
    if (Array.isArray(items)) rep.repeat.render(items);
    else rep.repeat.render(Array.from({ length: rep.closest('form').spec.groups.find((g) => g.group === path).min }, () => ({})));
  }
  for (const node of root.querySelectorAll('[data-toggle]')) {
    const v = getPath(json, node.dataset.toggle);
    node.disabled = v == null;
    node.querySelector('.group-toggle').checked = v != null;
  }
  for (const node of root.querySelectorAll('[data-path]')) {
    const v = getPath(json, node.dataset.path);
    if (node.dataset.kind === 'checkbox') node.checked = Boolean(v);
    else if (node.dataset.kind === 'checkboxes') node.checked = Array.isArray(v) && v.includes(node.value);
    else if (node.dataset.kind === 'file') {
      node.value = '';
      if (v) node.dataset.value = v;
      else delete node.dataset.value;
      node.closest('.field').querySelector('.attached')?.remove();
      if (v) node.after(el('span', { class: 'hint attached' }, `image attached (${v.length} base64 characters)`));
    } else node.value = v == null ? '' : String(v);
  }
}

// ---- live validation and marks ----

const forms = {};

function problemTarget(form, field) {
  let path = field;
  while (path) {
    const target = form.querySelector(`[data-for="${CSS.escape(path)}"], [data-group="${CSS.escape(path)}"]`);
    if (target) return target;
    path = path.replace(/(\.[^.[\]]+|\[\d+\])$/, '');
    if (path === field) break;
  }
  return null;
}

function shown(state, target) {
  if (state.submitted) return true;
  const key = target.dataset.for ?? target.dataset.group;
  for (const p of state.touched) {
    if (p === key || p.startsWith(`${key}.`) || p.startsWith(`${key}[`)) return true;
  }
  return false;
}

/** Validate a form with the module and mark what is wrong. */
function check(id) {
  const state = forms[id];
  const { form } = state;
  updateVisibility(form);
  const json = collect(form);
  const started = performance.now();
  const verdict = validators[id](json);
  const took = performance.now() - started;
  state.json = json;
  state.verdict = verdict;

  for (const target of form.querySelectorAll('.invalid')) target.classList.remove('invalid');
  for (const mark of form.querySelectorAll('.mark')) mark.replaceChildren();
  for (const c of form.querySelectorAll('[aria-invalid]')) c.removeAttribute('aria-invalid');
  const unplaced = [];
  let marked = 0;
  for (const problem of verdict.errors) {
    const target = problemTarget(form, problem.field);
    if (!target || target.closest('[hidden]')) {
      unplaced.push(problem);
      continue;
    }
    if (!shown(state, target)) continue;
    marked += 1;
    target.classList.add('invalid');
    const mark = target.querySelector(':scope > .mark');
    mark.append(el('span', { dataset: { code: problem.code } }, problem.message));
    for (const c of target.querySelectorAll(':scope > [data-path], :scope > label > [data-path], :scope > .choices')) {
      c.setAttribute('aria-invalid', 'true');
    }
  }

  const summary = form.querySelector('.summary');
  const message = summary.querySelector('.summary-message');
  const detail = summary.querySelector('.summary-detail');
  const list = summary.querySelector('.summary-list');
  list.replaceChildren();
  const touched = state.submitted || state.touched.size > 0;
  summary.dataset.state = verdict.valid ? 'valid' : touched ? 'invalid' : 'idle';
  if (verdict.valid) {
    message.textContent = `Ready: the service accepts this ${nouns[id]}.`;
    detail.textContent = `Checked in ${took.toFixed(2)} ms.`;
  } else if (!touched) {
    message.textContent = 'Checked as you type, with the service’s own rules.';
    detail.textContent = '';
  } else {
    const n = verdict.errors.length;
    message.textContent = verdict.message;
    detail.textContent = `${n} problem${n === 1 ? '' : 's'}${state.submitted ? '' : `, ${marked} marked so far (Check marks all)`}. Checked in ${took.toFixed(2)} ms.`;
    if (state.submitted) {
      for (const p of unplaced) list.append(el('li', { dataset: { code: p.code } }, p.message));
    }
  }
  form.dispatchEvent(new CustomEvent('checked', { detail: verdict }));
  return verdict;
}

/** Show and enable only the groups that apply (customer token or account, check fields by entry class). */
function updateVisibility(form) {
  const sec = form.querySelector('[data-path="standard_entry_class"]')?.value ?? '';
  for (const node of form.querySelectorAll('[data-classes]')) {
    const on = node.dataset.classes.split(' ').includes(sec);
    node.hidden = !on;
    if (node.tagName === 'FIELDSET') node.disabled = !on;
    else for (const c of node.querySelectorAll('[data-path]')) c.disabled = !on;
  }
  for (const node of form.querySelectorAll('[data-when]')) {
    const choice = node.parentElement.closest('fieldset').querySelector(':scope > legend .group-choice:checked');
    const on = choice?.value === node.dataset.when;
    node.hidden = !on;
    node.disabled = !on;
  }
}

function setupForm(spec) {
  const form = document.getElementById(`${spec.id}-form`);
  form.append(document.getElementById('form-frame').content.cloneNode(true));
  form.spec = spec;
  const body = form.querySelector('.form-body');
  for (const f of spec.fields ?? []) body.append(renderField(spec.id, f));
  for (const g of spec.groups ?? []) body.append(renderGroup(spec.id, g));
  const state = { form, touched: new Set(), submitted: false };
  forms[spec.id] = state;

  const touch = (event) => {
    const path = event.target.dataset?.path;
    if (path) state.touched.add(path);
    if (event.target.classList?.contains('group-toggle')) {
      event.target.closest('fieldset').disabled = !event.target.checked;
    }
    check(spec.id);
  };
  form.addEventListener('input', touch);
  form.addEventListener('change', touch);
  form.addEventListener('focusout', (event) => {
    if (event.target.dataset?.path) touch(event);
  });
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    state.submitted = true;
    const verdict = check(spec.id);
    if (!verdict.valid) form.querySelector('[aria-invalid="true"]')?.focus();
  });
  form.querySelector('.example').addEventListener('click', () => {
    fill(form, specs.examples[spec.id]);
    state.submitted = true;
    check(spec.id);
  });
  form.addEventListener('reset', () => {
    setTimeout(() => {
      fill(form, {});
      state.touched.clear();
      state.submitted = false;
      check(spec.id);
    });
  });
  check(spec.id);
}

// ---- tabs ----

function setupTabs() {
  const tabs = [...document.querySelectorAll('[role="tab"]')];
  const select = (tab) => {
    for (const t of tabs) {
      const on = t === tab;
      t.setAttribute('aria-selected', String(on));
      t.tabIndex = on ? 0 : -1;
      document.getElementById(t.getAttribute('aria-controls')).hidden = !on;
    }
  };
  for (const [i, tab] of tabs.entries()) {
    tab.addEventListener('click', () => {
      select(tab);
      history.replaceState(null, '', `#${tab.getAttribute('aria-controls').replace(/-panel$/, '')}`);
    });
    // The tab pattern: arrow keys move between tabs, Tab goes into the panel.
    tab.addEventListener('keydown', (event) => {
      const step = { ArrowRight: 1, ArrowLeft: -1 }[event.key];
      if (!step) return;
      const next = tabs[(i + step + tabs.length) % tabs.length];
      next.focus();
      next.click();
    });
  }
  const wanted = tabs.find((t) => `#${t.getAttribute('aria-controls').replace(/-panel$/, '')}` === location.hash);
  select(wanted ?? tabs[0]);
}

// ---- start ----

async function main() {
  const status = document.getElementById('module-status');
  const started = performance.now();
  try {
    await init();
  } catch (e) {
    status.textContent = `The validation module did not load: ${e.message}`;
    status.dataset.state = 'error';
    return;
  }
  const entry = performance.getEntriesByType('resource').find((r) => r.name.endsWith('pkg-web-validate/ach_wasm_bg.wasm'));
  const size = entry?.encodedBodySize ? `, ${Math.round(entry.encodedBodySize / 1024)} KB` : '';
  status.textContent = `Validation module ready (WebAssembly${size}, ${Math.round(performance.now() - started)} ms). Routing directory: embedded default.`;
  status.dataset.ready = 'true';

  setupTabs();
  for (const spec of [specs.transaction, specs.customer, specs.merchant]) setupForm(spec);

  document.getElementById('fedach-file').addEventListener('change', async (event) => {
    const file = event.target.files?.[0];
    if (!file) return;
    try {
      const records = loadRoutingDirectory(await file.text());
      status.textContent = `Validation module ready. Routing directory: ${file.name}, ${records} records.`;
      for (const id of Object.keys(forms)) check(id);
    } catch (e) {
      status.textContent = `${file.name}: ${e.message}`;
    }
  });

  setupSandbox(document.getElementById('sandbox-panel'), {
    transaction: () => ({ json: collect(forms.transaction.form), verdict: check('transaction') }),
    merchant: () => ({ json: collect(forms.merchant.form), verdict: check('merchant') }),
    sampleMerchant: specs.examples.merchant,
    useMerchant: (merchantId) => {
      const input = forms.transaction.form.querySelector('[data-path="merchant_id"]');
      input.value = merchantId;
      check('transaction');
    },
  });
  document.body.dataset.ready = 'true';
}

main();
