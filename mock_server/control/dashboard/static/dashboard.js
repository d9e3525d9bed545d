// The dashboard: every call goes to the admin API (or the stream) with the admin token as a header,
// when the mock has one; every value a peer sent is put in the page as text (textContent), never as markup.
'use strict';

const ADMIN = new URL('..', location.href).pathname.replace(/\/$/, ''); // /__mock__
const TOKEN_KEY = 'shop-mock-admin-token';
const KEEP = 500; // exchanges the table keeps
const PAGE = 20; // items per page in the state view
const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS'];

const $ = (id) => document.getElementById(id);
const exchanges = []; // newest last
const known = new Set(); // their ids
let selected = null;
let streaming = false;

function el(tag, text, attributes) {
  const node = document.createElement(tag);
  if (text !== undefined && text !== null) node.textContent = String(text);
  for (const [name, value] of Object.entries(attributes || {})) node.setAttribute(name, value);
  return node;
}

function say(id, text, isError) {
  const node = $(id);
  node.textContent = text;
  node.classList.toggle('error', Boolean(isError));
}

function headers(extra) {
  const token = sessionStorage.getItem(TOKEN_KEY);
  return Object.assign(token ? { Authorization: 'Bearer ' + token } : {}, extra || {});
}

class Refused extends Error {}

// One admin API call; a refusal is a Refused error with the server's own detail.
async function call(method, path, body, type) {
  const init = { method, headers: headers(body === undefined ? {} : { 'Content-Type': type || 'application/json' }) };
  if (body !== undefined) init.body = body;
  const response = await fetch(ADMIN + path, init);
  if (response.status === 401) askToken();
  if (!response.ok) {
    let detail = response.status + ' ' + response.statusText;
    try {
      const problem = await response.json();
      if (problem && problem.detail) detail = problem.detail;
    } catch (error) { /* not JSON: the status says it */ }
    throw new Refused(detail);
  }
  return response;
}

async function json(path) {
  return (await call('GET', path)).json();
}

function askToken() {
  $('token-form').hidden = false;
  $('token').focus();
}

// ---- tabs (arrow keys move between them, as the ARIA tabs pattern says)
function showTab(tab) {
  for (const other of document.querySelectorAll('[role="tab"]')) {
    const on = other === tab;
    other.setAttribute('aria-selected', String(on));
    other.tabIndex = on ? 0 : -1;
    $(other.getAttribute('aria-controls')).hidden = !on;
  }
  tab.focus();
  const load = { 'tab-state': loadState, 'tab-sessions': loadSessions, 'tab-faults': loadFaults, 'tab-steering': loadOperations }[tab.id];
  if (load) load();
}

function setUpTabs() {
  const tabs = [...document.querySelectorAll('[role="tab"]')];
  for (const tab of tabs) {
    tab.addEventListener('click', () => showTab(tab));
    tab.addEventListener('keydown', (event) => {
      const step = { ArrowRight: 1, ArrowLeft: -1 }[event.key];
      if (step) showTab(tabs[(tabs.indexOf(tab) + step + tabs.length) % tabs.length]);
    });
  }
}

// ---- live requests
// The journal keeps a path as sent (an identifier's "/" as %2F): the filter also reads it decoded.
function decoded(path) {
  try { return decodeURIComponent(path); } catch { return path; }  // a stray "%" is text
}

function matches(exchange) {
  const method = $('f-method').value;
  const path = $('f-path').value.trim().toLowerCase();
  const status = $('f-status').value;
  const session = $('f-session').value.trim();
  if (method && exchange.method !== method) return false;
  const named = [exchange.path, decoded(exchange.path), exchange.operationId || ''];
  if (path && !named.some((text) => text.toLowerCase().includes(path))) return false;
  if (status === 'none' && exchange.status !== null) return false;
  if (status && status !== 'none' && String(Math.floor((exchange.status || 0) / 100)) !== status) return false;
  if (session && !(exchange.session || '').includes(session)) return false;
  return true;
}

function row(exchange) {
  const tr = el('tr', null, { tabindex: '0', 'data-id': String(exchange.id), 'aria-selected': 'false' });
  const status = el('td', exchange.status === null ? 'none' : exchange.status);
  status.className = 's' + Math.floor((exchange.status || 0) / 100);
  tr.append(
    el('td', exchange.time.slice(11, 23)),
    el('td', exchange.method),
    el('td', exchange.path + (exchange.query ? '?' + exchange.query : '')),
    el('td', exchange.operationId || ''),
    status,
    el('td', exchange.duration_ms.toFixed(1)),
    el('td', exchange.session || ''),
  );
  const open = () => showExchange(exchange, tr);
  tr.addEventListener('click', open);
  tr.addEventListener('keydown', (event) => {
    if (event.key === 'Enter' || event.key === ' ') { event.preventDefault(); open(); }
    if (event.key === 'ArrowDown' && tr.nextElementSibling) tr.nextElementSibling.focus();
    if (event.key === 'ArrowUp' && tr.previousElementSibling) tr.previousElementSibling.focus();
  });
  return tr;
}

function add(exchange) {
  if (known.has(exchange.id)) return;
  known.add(exchange.id);
  exchanges.push(exchange);
  const body = $('live').tBodies[0];
  if (exchanges.length > KEEP) {
    // the oldest goes, and its row with it (the last one, if shown): a filter shows only what is kept
    const gone = exchanges.shift();
    known.delete(gone.id);
    const last = body.lastElementChild;
    if (last && last.dataset.id === String(gone.id)) last.remove();
  }
  if (matches(exchange)) body.prepend(row(exchange));
  counted();
}

function redraw() {
  const body = $('live').tBodies[0];
  body.replaceChildren(...exchanges.filter(matches).reverse().map(row));
  counted();
}

function counted() {
  say('shown', $('live').tBodies[0].rows.length + ' of the last ' + exchanges.length + ' exchanges shown');
}

function headerTable(id, values) {
  const table = $(id);
  table.replaceChildren(...Object.entries(values).map(([name, value]) => {
    const tr = el('tr');
    tr.append(el('td', name), el('td', value));
    return tr;
  }));
}

function showBody(id, message) {
  say(id, message.body + (message.truncated ? '\n… (cut at the journal\'s limit)' : ''));
  $(id).hidden = !message.body;
}

function showExchange(exchange, tr) {
  selected = exchange;
  for (const other of $('live').querySelectorAll('tr[aria-selected="true"]')) other.setAttribute('aria-selected', 'false');
  if (tr) tr.setAttribute('aria-selected', 'true');
  $('detail').hidden = false;
  say('d-title', exchange.method + ' ' + exchange.path + (exchange.query ? '?' + exchange.query : ''));
  say('d-summary', 'status ' + (exchange.status === null ? 'none (connection dropped)' : exchange.status) +
    ' · ' + exchange.duration_ms + ' ms · ' + (exchange.operationId || 'no operation of the spec') +
    ' · session ' + (exchange.session || 'none') + ' · ' + exchange.time +
    (exchange.replica ? ' · replica ' + exchange.replica : ''));
  $('d-fault-box').hidden = !exchange.fault;
  say('d-fault', exchange.fault ? JSON.stringify(exchange.fault, null, 2) : '');
  $('d-violations-box').hidden = exchange.violations.length === 0;
  $('d-violations').replaceChildren(...exchange.violations.map((text) => el('li', text)));
  headerTable('d-request-headers', exchange.request.headers);
  showBody('d-request-body', exchange.request);
  headerTable('d-response-headers', exchange.response.headers);
  showBody('d-response-body', exchange.response);
  $('d-curl').value = curl(exchange);
  $('d-steer').disabled = !exchange.operationId;
  $('detail').focus();
}

function quoted(text) {
  return "'" + String(text).replace(/'/g, "'\\''") + "'";
}

// The request as curl; masked credentials stay masked (put yours back).
function curl(exchange) {
  const skip = new Set(['host', 'content-length', 'connection', 'accept-encoding']);
  const url = location.origin + exchange.path + (exchange.query ? '?' + exchange.query : '');
  const words = ['curl', '-X', exchange.method, quoted(url)];
  for (const [name, value] of Object.entries(exchange.request.headers)) {
    if (!skip.has(name.toLowerCase())) words.push('-H', quoted(name + ': ' + value));
  }
  if (exchange.request.body) words.push('--data-raw', quoted(exchange.request.body));
  return words.join(' ');
}

async function copy(text, statusId) {
  try {
    await navigator.clipboard.writeText(text);
    say(statusId, 'copied');
  } catch (error) {
    say(statusId, 'the browser refused the clipboard: select the text and copy it', true);
  }
}

async function loadHistory() {
  for (const exchange of await json('/requests?limit=' + KEEP)) add(exchange);
}

// Server-Sent Events through fetch(), which can send the token as a header (EventSource cannot).
async function stream() {
  for (;;) {
    try {
      const response = await fetch(ADMIN + '/ui/stream', { headers: headers(), cache: 'no-store' });
      if (response.status === 401) { askToken(); streaming = false; say('status', 'waiting for the admin token', true); return; }
      if (!response.ok) throw new Refused('the stream was refused: ' + response.status);
      await loadHistory();
      say('status', 'live'); $('status').className = 'live';
      const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
      let buffer = '';
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += value;
        let end;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          event(buffer.slice(0, end));
          buffer = buffer.slice(end + 2);
        }
      }
      say('status', 'disconnected (the mock ended the stream, e.g. stopping): reconnecting'); $('status').className = 'down';
    } catch (error) {
      say('status', 'disconnected (' + error.message + '): retrying'); $('status').className = 'down';
    }
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
}

function event(text) {
  let name = 'message';
  const data = [];
  for (const line of text.split('\n')) {
    if (line.startsWith('event:')) name = line.slice(6).trim();
    else if (line.startsWith('data:')) data.push(line.slice(5).trimStart());
  }
  if (name === 'exchange' && data.length) add(JSON.parse(data.join('\n')));
}

function startStream() {
  if (!streaming) { streaming = true; stream(); }
}

// ---- state
let items = [];
let collection = null;
let page = 0;

async function loadState() {
  try {
    const health = await json('/health');
    const state = await json('/state');
    $('counts').replaceChildren(...Object.entries(health.counts).map(([name, count]) => {
      const button = el('button', name + ' ' + count, { type: 'button', 'aria-pressed': String(name === collection) });
      button.addEventListener('click', () => { collection = name; page = 0; loadState(); });
      const li = el('li');
      li.append(button);
      return li;
    }));
    collection = collection && collection in state ? collection : Object.keys(state)[0];
    for (const button of $('counts').querySelectorAll('button')) button.setAttribute('aria-pressed', String(button.textContent.startsWith(collection + ' ')));
    items = state[collection] || [];
    showItems();
  } catch (error) {
    say('state-message', error.message, true);
  }
}

function showItems() {
  const needle = $('state-search').value.trim().toLowerCase();
  const found = needle ? items.filter((item) => JSON.stringify(item).toLowerCase().includes(needle)) : items;
  const pages = Math.max(1, Math.ceil(found.length / PAGE));
  page = Math.min(page, pages - 1);
  const shown = found.slice(page * PAGE, (page + 1) * PAGE);
  const columns = [...new Set(shown.flatMap((item) => Object.keys(item)))];
  const head = el('tr');
  head.append(...columns.map((name) => el('th', name)));
  const rows = shown.map((item) => {
    const tr = el('tr');
    tr.append(...columns.map((name) => {
      const value = item[name];
      return el('td', value !== null && typeof value === 'object' ? JSON.stringify(value) : value ?? '', { title: String(value ?? '') });
    }));
    return tr;
  });
  const thead = el('thead');
  thead.append(head);
  const tbody = el('tbody');
  tbody.append(...rows);
  $('items').replaceChildren(thead, tbody);
  say('state-page', collection + ': page ' + (page + 1) + ' of ' + pages + ' (' + found.length + ' items)');
}

async function stateAction(action, done) {
  try {
    await action();
    say('state-message', done);
    await loadState();
  } catch (error) {
    say('state-message', error.message, true);
  }
}

async function exportState() {
  const text = await (await call('GET', '/state')).text();
  const link = el('a', null, { download: 'mock-state.json' });
  link.href = URL.createObjectURL(new Blob([text], { type: 'application/json' }));
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(link.href), 1000);
}

// ---- sessions
async function loadSessions() {
  try {
    const sessions = await json('/sessions');
    const body = $('session-list').tBodies[0];
    if (!sessions.length) { // said in the list itself: the message keeps the last action's outcome
      const empty = el('tr');
      empty.append(el('td', 'no session yet: a request with X-Mock-Session: NAME starts one', { colspan: '5', class: 'hint' }));
      body.replaceChildren(empty);
      return;
    }
    body.replaceChildren(...sessions.map((session) => {
      const tr = el('tr', null, { 'data-session': session.name });
      const actions = el('td');
      const reset = el('button', 'Reset', { type: 'button', 'aria-label': 'Reset session ' + session.name });
      const remove = el('button', 'Delete', { type: 'button', 'aria-label': 'Delete session ' + session.name });
      const path = '/sessions/' + encodeURIComponent(session.name);
      reset.addEventListener('click', () => sessionAction(() => call('POST', path + '/reset'), 'session ' + session.name + ' reset'));
      remove.addEventListener('click', () => sessionAction(() => call('DELETE', path), 'session ' + session.name + ' deleted'));
      actions.append(reset, ' ', remove);
      tr.append(el('td', session.name), el('td', session.created), el('td', session.last_used), el('td', session.size), actions);
      return tr;
    }));
  } catch (error) {
    say('sessions-message', error.message, true);
  }
}

async function sessionAction(action, done) {
  try {
    await action();
    say('sessions-message', done);
  } catch (error) {
    say('sessions-message', error.message, true);
  }
  await loadSessions();
}

// ---- faults
// Opening the tab shows the server's rules, but never over what was typed while they loaded (a slow
// answer came after the typing once); the Reload button shows them whatever was typed.
async function loadFaults(overwrite = false) {
  const before = $('rules').value;
  try {
    const rules = JSON.stringify(await json('/faults'), null, 2);
    if (overwrite || $('rules').value === before) $('rules').value = rules;
  } catch (error) {
    say('faults-message', error.message, true);
  }
}

async function faultAction(action, done) {
  try {
    await action();
    // The rules shown first, then the message: a message on screen means the page shows the server's rules.
    $('rules').value = JSON.stringify(await json('/faults'), null, 2);
    say('faults-message', done);
  } catch (error) {
    say('faults-message', error.message, true);
  }
}

// ---- steering help
let operations = [];
let operationsLoaded = null; // the one fetch of the list, shared by every caller
let wantedOperation = null; // the operationId to select once the list is there (from an opened exchange)

async function loadOperations() {
  try {
    if (!operationsLoaded) {
      operationsLoaded = json('/ui/operations').then((list) => {
        operations = list;
        $('operation').replaceChildren(...operations.map((operation, n) =>
          el('option', operation.operationId + ' (' + operation.surface + '): ' + operation.method + ' ' + operation.path, { value: String(n) })));
      });
    }
    await operationsLoaded;
    if (wantedOperation) {
      const found = operations.findIndex((operation) => operation.operationId === wantedOperation);
      if (found >= 0) $('operation').value = String(found);
      wantedOperation = null;
    }
    showSteering();
  } catch (error) {
    operationsLoaded = null;
    say('steering-message', error.message, true);
  }
}

function copies(id, entries, label) {
  $(id).replaceChildren(...entries.map((entry) => {
    const li = el('li');
    const button = el('button', 'Copy', { type: 'button', 'aria-label': 'Copy ' + entry.header });
    button.addEventListener('click', () => copy(entry.header, 'steering-message'));
    li.append(el('code', entry.header), el('span', label(entry), { class: 'hint' }), button);
    return li;
  }));
}

function showSteering() {
  const operation = operations[Number($('operation').value)];
  if (!operation) return;
  copies('steer-statuses', operation.statuses, () => '');
  copies('steer-examples', operation.examples, (entry) => 'status ' + entry.status);
  if (!operation.examples.length) $('steer-examples').append(el('li', 'none in the spec', { class: 'hint' }));
}

// ---- wiring
function start() {
  setUpTabs();
  $('f-method').append(...METHODS.map((method) => el('option', method, { value: method })));
  for (const id of ['f-method', 'f-status']) $(id).addEventListener('change', redraw);
  for (const id of ['f-path', 'f-session']) $(id).addEventListener('input', redraw);
  $('filters').addEventListener('submit', (event) => event.preventDefault());
  $('clear-table').addEventListener('click', () => { exchanges.length = 0; known.clear(); redraw(); });
  $('copy-curl').addEventListener('click', () => copy($('d-curl').value, 'status'));
  $('d-steer').addEventListener('click', () => {
    wantedOperation = selected && selected.operationId;
    showTab($('tab-steering'));
  });
  $('token-form').addEventListener('submit', (event) => {
    event.preventDefault();
    sessionStorage.setItem(TOKEN_KEY, $('token').value);
    $('token').value = '';
    $('token-form').hidden = true;
    startStream();
  });
  $('state-reload').addEventListener('click', loadState);
  $('state-reset').addEventListener('click', () => stateAction(() => call('POST', '/reset'), 'the state is back to its seed'));
  $('state-export').addEventListener('click', () => stateAction(exportState, 'exported'));
  $('state-import').addEventListener('change', async (event) => {
    const file = event.target.files[0];
    if (file) await stateAction(async () => call('PUT', '/state', await file.text()), 'imported ' + file.name);
    event.target.value = '';
  });
  $('state-search').addEventListener('input', () => { page = 0; showItems(); });
  $('state-prev').addEventListener('click', () => { page = Math.max(0, page - 1); showItems(); });
  $('state-next').addEventListener('click', () => { page += 1; showItems(); });
  $('sessions-reload').addEventListener('click', loadSessions);
  $('faults-save').addEventListener('click', () => faultAction(() => call('PUT', '/faults', $('rules').value), 'rules installed'));
  $('faults-clear').addEventListener('click', () => faultAction(() => call('DELETE', '/faults'), 'rules cleared'));
  $('faults-reload').addEventListener('click', () => loadFaults(true));
  $('operation').addEventListener('change', showSteering);
  startStream();
}

document.addEventListener('DOMContentLoaded', start);
