// The mock server's dashboard: views of what it holds, the actions the
// admin API offers, and live updates from its change stream. Every view
// reads and acts through the admin API (api.js) and writes every string
// as text (dom.js).

import { h, append, replace, $, qs, fmtTime, fmtDateTime, fmtRelative, fmtDuration, fmtBytes, fmtCount, shortId, prettyJSON, throttle } from './dom.js';
import { api, page, all, follow } from './api.js';

const EVENT_TYPES = ['context.created', 'context.updated', 'context.deleted', 'context.published',
  'context.version.created', 'team.member.added', 'team.member.removed', 'export.completed'];
// OPERATIONS are the /v1 operations the Contract view filters by.
const OPERATIONS = ['listContexts', 'getContext', 'createContext', 'updateContext', 'deleteContext',
  'listVersions', 'exportContext', 'registerWebhook', 'off the API'];
const PAGE_SIZE = 50;
// CHOOSER_MAX is how many accounts or webhooks a chooser lists: enough for
// any real test set-up, few enough that a select stays usable. Past it the
// chooser says so, and an account filter narrows the webhooks.
const CHOOSER_MAX = 1000;

const app = {
  clock: null, // the server's clock: {now, fake, nextDueAt, at: Date.now() when read}
  summary: null,
  accounts: [], // account ids, in the server's order
  accountsLoaded: null, // a promise of accounts, asked for at the start
  accountsMore: false, // the server has more accounts than CHOOSER_MAX
  view: null, // the view on screen
  ready: false,
};

// ---- The clock, the counts, the live status ----

function setClock(c) {
  app.clock = { ...c, at: Date.now() };
  renderClock();
  // A time is shown without its date on the server's day: the times drawn
  // before its clock was known (a list answered before the summary or the
  // stream), or before it moved to another day, are drawn again.
  const now = clockNow();
  for (const el of document.querySelectorAll('.when[data-at]')) el.textContent = fmtTime(el.dataset.at, now);
}

// clockNow is the server's time now: a fake clock's as it was read, a real
// one's moved on by the time since.
function clockNow() {
  const c = app.clock;
  if (!c) return null;
  if (c.fake) return c.now;
  return new Date(Date.parse(c.now) + (Date.now() - c.at)).toISOString();
}

function renderClock() {
  const c = app.clock;
  if (!c) return;
  $('#clock-now').textContent = fmtDateTime(clockNow()).slice(0, 19) + ' UTC';
  const kind = $('#clock-kind');
  kind.textContent = c.fake ? 'fake' : 'real';
  kind.className = 'badge ' + (c.fake ? 'badge-fake' : 'badge-real');
  kind.title = c.fake ? 'A fake clock: it moves only when advanced' : 'The real clock';
  const next = $('#clock-next');
  if (c.nextDueAt) {
    replace(next, 'next attempt ', h('span', { class: 'mono' }, fmtTime(c.nextDueAt, clockNow())), ' · ', rel(c.nextDueAt));
  } else {
    replace(next, h('span', { class: 'muted' }, 'no attempt waiting'));
  }
  $('#clock-actions').hidden = !c.fake;
  $('#clock-to-next').disabled = !c.nextDueAt;
}

// rel is a "in 4m 59s" that stays current: tick() rewrites it.
function rel(iso) {
  return h('span', { class: 'rel', 'data-at': iso }, fmtRelative(iso, clockNow()));
}

function tick() {
  if (app.clock && !app.clock.fake) $('#clock-now').textContent = fmtDateTime(clockNow()).slice(0, 19) + ' UTC';
  const now = clockNow();
  for (const el of document.querySelectorAll('.rel[data-at]')) el.textContent = fmtRelative(el.dataset.at, now);
}

async function loadSummary() {
  const s = await api('/_mock/summary');
  app.summary = s;
  setClock(s.clock);
  const d = s.deliveries;
  const counts = { deliveries: d.pending + d.succeeded + d.failed, events: s.events, webhooks: s.webhooks,
    contexts: s.contexts, accounts: s.accounts, faults: s.faults };
  for (const [k, v] of Object.entries(counts)) $('#count-' + k).textContent = fmtCount(v);
  renderChaosBadge(s.chaos);
  if (app.view && app.view.onSummary) app.view.onSummary(s);
}
const refreshSummary = throttle(() => loadSummary().catch(showError), 250);

function setLive(live) {
  const el = $('#live');
  el.textContent = live ? 'live' : 'reconnecting…';
  el.className = 'live ' + (live ? 'live-on' : 'live-off');
}

// renderChaosBadge shows, in the top bar and the sidebar, whether the
// chaos mode is on: every test against the mock meets its failures then,
// so the page never lets it go unnoticed.
function renderChaosBadge(ch) {
  const badge = $('#chaos-badge');
  badge.hidden = !ch.on;
  badge.title = ch.on ? 'Chaos mode on: ' + ch.spec : '';
  $('#count-chaos').textContent = ch.on ? 'on' : '';
}

// ---- Toasts and dialogs ----

function toast(message, kind = 'ok') {
  const t = h('div', { class: 'toast toast-' + kind }, message);
  $('#toasts').append(t);
  setTimeout(() => t.remove(), kind === 'error' ? 8000 : 4000);
}

function showError(e) {
  toast(e.message || String(e), 'error');
}

// confirmDialog asks before something that cannot be undone, in the page
// (a <dialog>), and resolves to the answer.
function confirmDialog(title, text, confirmLabel) {
  return new Promise(resolve => {
    const done = ok => { dlg.close(); dlg.remove(); resolve(ok); };
    const dlg = h('dialog', { class: 'confirm', 'aria-labelledby': 'confirm-title' },
      h('h2', { id: 'confirm-title' }, title),
      h('p', null, text),
      h('div', { class: 'dialog-actions' },
        h('button', { type: 'button', onclick: () => done(false) }, 'Cancel'),
        h('button', { type: 'button', class: 'danger', id: 'confirm-ok', onclick: () => done(true) }, confirmLabel)));
    dlg.addEventListener('cancel', () => resolve(false));
    document.body.append(dlg);
    dlg.showModal();
  });
}

// act runs an admin action, reports its outcome (what, or what the
// function what makes of the answer), and refreshes the counts.
async function act(what, fn) {
  try {
    const res = await fn();
    toast(typeof what === 'function' ? what(res) : what);
    refreshSummary();
    return res;
  } catch (e) {
    showError(e);
    return undefined;
  }
}

// ---- Small pieces ----

const stateBadge = st => h('span', { class: 'badge state-' + st }, st);
const mono = (text, title) => h('span', { class: 'mono', title: title || null }, text);
const link = (href, text, title) => h('a', { href, class: 'mono', title: title || null }, text);
const time = iso => h('span', { class: 'mono when', title: iso, 'data-at': iso }, fmtTime(iso, clockNow()));
const chip = text => h('span', { class: 'chip' }, text);
const empty = text => h('p', { class: 'empty' }, text);

function kv(rows) {
  return h('dl', { class: 'kv' }, rows.filter(Boolean).map(([k, v]) => [h('dt', null, k), h('dd', null, v)]));
}

// urlLabel names a webhook's url by what tells receivers apart on one
// machine first: its path, then its host ("/hooks/billing · 127.0.0.1:8081").
function urlLabel(u) {
  try {
    const p = new URL(u);
    return (p.pathname === '/' ? '' : p.pathname + ' · ') + p.host;
  } catch { return u; }
}

// lastAnswer is a delivery's latest attempt's outcome, short enough for
// a list's cell (the whole error is its title).
function lastAnswer(d) {
  const a = d.attempts[d.attempts.length - 1];
  if (!a) return h('span', { class: 'muted' }, d.state === 'pending' ? 'waiting' : '–');
  return answer(a, true);
}

// errorGist is the end of a transport error that says what happened:
// "connection refused" of `Post "http://127.0.0.1:9/down": dial tcp
// 127.0.0.1:9: connect: connection refused`, whose start a cell would
// show and cut. Other errors ("timed out after 10s") are short already.
function errorGist(err) {
  if (!err.startsWith('Post "')) return err;
  const i = err.lastIndexOf(': ');
  return i >= 0 ? err.slice(i + 2) : err;
}

// answer is an attempt's outcome: its status, or its error, whole or
// (short) its gist.
function answer(a, short) {
  const ok = !a.error;
  if (a.statusCode) {
    return h('span', { class: 'answer-cell', title: a.error || null },
      h('span', { class: 'badge ' + (ok ? 'status-ok' : 'status-bad') }, String(a.statusCode)),
      a.error ? h('span', { class: 'muted' }, ' ' + a.error.replace(/^receiver answered \d+ ?/, '')) : null);
  }
  return h('span', { class: 'error-text', title: a.error }, short ? errorGist(a.error) : a.error);
}

// ---- Routing ----

// The route is the hash: #/view?filter=…&id=… (id is the selected item).
// No hash is the deliveries; a hash that names no view is no view (view
// null), which the page says rather than show another.
function parseHash() {
  if (['', '#', '#/'].includes(location.hash)) return { view: 'deliveries', q: new URLSearchParams() };
  const m = /^#\/([a-z]+)(?:\?(.*))?$/.exec(location.hash);
  // Own views only: #/constructor names no view (VIEWS inherits it).
  if (!m || !Object.hasOwn(VIEWS, m[1])) return { view: null, q: new URLSearchParams() };
  return { view: m[1], q: new URLSearchParams(m[2] || '') };
}

// noSuchView says that the hash names no view, and links the views; a
// hash such as #/contexts/ctx_1 gets a link to the item it meant.
function noSuchView(hash) {
  const m = /^#\/([a-z]+)\/([^/?#]+)$/.exec(hash);
  const meant = m && Object.hasOwn(VIEWS, m[1]) ? '#/' + m[1] + qs({ id: decodeURIComponent(m[2]) }) : null;
  return h('section', { class: 'no-view', role: 'alert' },
    h('h1', null, 'No such view'),
    h('p', null, 'The page has no view at ', mono(hash), '.',
      meant ? [' Did you mean ', link(meant, meant), '?'] : null),
    h('p', null, 'Its views: ', Object.keys(VIEWS).map((v, i) => [i ? ', ' : '', h('a', { href: '#/' + v }, VIEWS[v].title)]), '.'));
}

function go(view, params) {
  location.hash = '#/' + view + qs(params);
}

// setParam changes one filter of the current view (its paging starts
// over; the selection stays unless the filter changes it away).
function setParam(name, value) {
  const { view, q } = parseHash();
  if (value) q.set(name, value); else q.delete(name);
  location.hash = '#/' + view + (q.toString() ? '?' + q : '');
}

function filterKey(q) {
  const f = new URLSearchParams(q);
  f.delete('id');
  f.delete('emit');
  f.sort();
  return f.toString();
}

async function route() {
  const { view, q } = parseHash();
  for (const a of document.querySelectorAll('.sidebar a[data-view]')) {
    if (a.dataset.view === view) a.setAttribute('aria-current', 'page'); else a.removeAttribute('aria-current');
  }
  if (!view) {
    app.view = null;
    replace($('#main'), noSuchView(location.hash));
    markReady();
    return;
  }
  const key = view + '?' + filterKey(q);
  if (!app.view || app.view.key !== key) {
    app.view = new ListView(view, VIEWS[view], q, key);
    await app.view.mount();
  }
  await app.view.select(q);
}

// markReady marks the page's first view on screen, once.
function markReady() {
  if (app.ready) return;
  app.ready = true;
  performance.mark('dashboard-ready');
  document.body.dataset.ready = 'true';
  // The first task after the next frame: the list is on screen (the
  // benchmark's "first paint of the deliveries").
  requestAnimationFrame(() => setTimeout(() => performance.mark('dashboard-painted')));
}

// ---- The list views ----

// A ListView is one view: a toolbar of filters, a page of a list (newest
// first where the list can), and beside it the selected item.
class ListView {
  constructor(name, def, q, key) {
    this.name = name;
    this.def = def;
    this.q = q;
    this.key = key;
    this.cursors = [null]; // the cursor of each page seen, for going back
    this.index = 0;
    this.next = null;
    this.items = [];
    this.selected = null;
    this.refresh = throttle(() => this.load(), 300);
    this.refreshDetail = throttle(() => this.loadDetail(), 300);
  }

  async mount() {
    this.rows = h('tbody');
    this.pager = h('div', { class: 'pager' });
    this.status = h('div', { class: 'list-status' });
    this.detail = h('aside', { class: 'detail', 'aria-label': 'Selected item' });
    const head = h('tr', null, this.def.columns.map(c => h('th', { scope: 'col', class: c.class || null }, c.title)));
    this.table = h('table', { class: 'list ' + this.name }, h('thead', null, head), this.rows);
    this.toolbar = h('div', { class: 'toolbar' }, h('h1', null, this.def.title), this.def.filters ? this.def.filters(this.q) : null, this.pager);
    this.layout = h('div', { class: 'split' }, h('section', { class: 'list-pane' }, this.table, this.status), this.detail);
    replace($('#main'), this.toolbar, this.layout);
    await this.load();
    markReady();
  }

  async load() {
    let res;
    try {
      res = this.def.load ? await this.def.load() : await page(this.def.path, this.def.params(this.q), PAGE_SIZE, this.cursors[this.index]);
    } catch (e) {
      replace(this.status, h('p', { class: 'error', role: 'alert' }, 'Cannot load the list: ' + e.message));
      return;
    }
    if (app.view !== this) return;
    this.items = res.items;
    this.next = res.nextCursor;
    replace(this.rows, res.items.map(it => this.row(it)));
    replace(this.status, res.items.length ? null : empty(this.index ? 'Nothing more.' : this.def.empty));
    this.renderPager();
  }

  row(it) {
    const id = this.def.id(it);
    const tr = h('tr', { 'data-id': id, class: id && id === this.selected ? 'selected' : null, tabindex: this.def.detail ? '0' : null },
      this.def.columns.map(c => h('td', { class: c.class || null }, c.cell(it))));
    if (this.def.detail) {
      const open = () => setParam('id', id);
      tr.addEventListener('click', e => { if (!e.target.closest('a, button')) open(); });
      tr.addEventListener('keydown', e => { if (e.key === 'Enter') open(); });
    }
    return tr;
  }

  // renderPager: every list's pager says the same, "‹ Previous · page N ·
  // Next ›"; its titles say which way that is (newer or older first).
  renderPager() {
    if (this.def.load) return; // one list, whole
    const [before, after] = this.def.desc ? ['newer', 'older'] : ['earlier', 'later'];
    replace(this.pager,
      h('button', { type: 'button', class: 'page-prev', title: `The previous page (${before} items)`, disabled: this.index === 0, onclick: () => this.turn(-1) }, '‹ Previous'),
      h('span', { class: 'page-no' }, `page ${this.index + 1}`),
      h('button', { type: 'button', class: 'page-next', title: `The next page (${after} items)`, disabled: !this.next, onclick: () => this.turn(1) }, 'Next ›'));
  }

  async turn(step) {
    if (step > 0) {
      this.cursors[this.index + 1] = this.next;
      this.index++;
    } else {
      this.index = Math.max(0, this.index - 1);
    }
    await this.load();
    this.layout.querySelector('.list-pane').scrollTop = 0;
  }

  async select(q) {
    this.q = q;
    const id = q.get('id');
    this.selected = id;
    for (const tr of this.rows.children) tr.classList.toggle('selected', tr.dataset.id === id);
    await this.loadDetail();
  }

  // onSummary updates the counts the toolbar shows.
  onSummary(s) {
    const d = s.deliveries;
    for (const el of this.toolbar.querySelectorAll('[data-state] .seg-count')) {
      const st = el.parentElement.dataset.state;
      el.textContent = fmtCount(st ? d[st] : d.pending + d.succeeded + d.failed);
    }
  }

  async loadDetail() {
    const id = this.selected;
    if (id && id === this.goneId) return;
    let node;
    try {
      node = id && this.def.detail ? await this.def.detail(id, this) : this.def.aside ? await this.def.aside(this.q, this) : null;
    } catch (e) {
      node = h('p', { class: 'error', role: 'alert' }, e.status === 404 ? 'It is gone (deleted, reset, or dropped from the history).' : e.message);
    }
    if (app.view !== this || this.selected !== id) return;
    this.layout.classList.toggle('with-detail', Boolean(node));
    if (!node) {
      this.detail.replaceChildren();
      return;
    }
    const close = id ? h('button', { type: 'button', class: 'close', title: 'Close', 'aria-label': 'Close', onclick: () => setParam('id', '') }, '×') : null;
    replace(this.detail, close, node);
  }

  // onChange hears every change of the server.
  onChange(c) {
    if (c.kind === 'reset') {
      this.cursors = [null];
      this.index = 0;
      this.refresh();
      // The selected item is gone with everything else: say so rather
      // than ask for it (a 404 the browser would log as an error).
      if (this.selected) this.showGone();
      else this.refreshDetail();
      return;
    }
    if (this.def.relevant(c)) this.refresh();
    if (!this.selected && this.def.asideLive && this.def.relevant(c)) this.refreshDetail();
    if (!this.selected) return;
    if (this.def.gone && this.def.gone(c, this.selected)) this.showGone();
    else if (this.def.touches && this.def.touches(c, this.selected)) this.refreshDetail();
  }

  // showGone replaces the selected item's detail with a note that it was
  // deleted, and asks the server nothing more about it.
  showGone() {
    const id = this.selected;
    this.goneId = id;
    replace(this.detail, h('button', { type: 'button', class: 'close', title: 'Close', 'aria-label': 'Close', onclick: () => setParam('id', '') }, '×'),
      h('p', { class: 'empty gone' }, 'It is gone (deleted, or reset): ', mono(id)));
  }
}

// ---- Filters ----

function select(label, name, q, options) {
  return h('label', { class: 'filter' }, h('span', null, label),
    h('select', { name, onchange: e => setParam(name, e.target.value) },
      options.map(([value, text]) => h('option', { value, selected: (q.get(name) || '') === value }, text))));
}

// accountFilter lists the accounts once they are known: the page asks for
// them at the start, beside its first list, not before it.
function accountFilter(q) {
  const cur = q.get('account') || '';
  const label = select('Account', 'account', q, cur ? [['', 'all'], [cur, cur]] : [['', 'all']]);
  const sel = label.querySelector('select');
  app.accountsLoaded.then(list => {
    for (const a of list) if (a !== cur) sel.append(h('option', { value: a }, a));
    if (app.accountsMore) sel.append(moreOption('accounts'));
  }, () => {});
  return label;
}

// moreOption ends a chooser that shows only the first CHOOSER_MAX items.
function moreOption(what, hint) {
  return h('option', { disabled: true, value: '' }, `only the first ${fmtCount(CHOOSER_MAX)} ${what} are listed` + (hint ? `: ${hint}` : ''));
}
const typeFilter = q => select('Event type', 'type', q, [['', 'all'], ...EVENT_TYPES.map(t => [t, t])]);

function stateFilter(q) {
  const cur = q.get('state') || '';
  const counts = app.summary ? app.summary.deliveries : null;
  const seg = h('div', { class: 'segmented', role: 'group', 'aria-label': 'State' });
  for (const [value, text] of [['', 'all'], ['pending', 'pending'], ['succeeded', 'succeeded'], ['failed', 'failed']]) {
    const n = !counts ? null : value ? counts[value] : counts.pending + counts.succeeded + counts.failed;
    seg.append(h('button', { type: 'button', class: value ? 'seg-' + value : null, 'aria-pressed': String(cur === value), 'data-state': value,
      onclick: () => setParam('state', value) }, text, h('span', { class: 'seg-count' }, fmtCount(n))));
  }
  return seg;
}

function webhookFilter(q) {
  const sel = h('select', { name: 'webhook', onchange: e => setParam('webhook', e.target.value) }, h('option', { value: '' }, 'all'));
  const cur = q.get('webhook') || '';
  if (cur) sel.append(h('option', { value: cur, selected: true }, shortId(cur)));
  all('/_mock/webhooks', { account: q.get('account') }, CHOOSER_MAX).then(res => {
    for (const w of res.items) {
      if (w.id === cur) sel.querySelector('option[selected]').textContent = urlLabel(w.url);
      else sel.append(h('option', { value: w.id, title: w.id }, urlLabel(w.url)));
    }
    if (res.more) sel.append(moreOption('webhooks', 'choose an account to see all of its own'));
  }).catch(() => {});
  return h('label', { class: 'filter' }, h('span', null, 'Webhook'), sel);
}

const operationFilter = q => select('Operation', 'operation', q, [['', 'all'], ...OPERATIONS.map(o => [o, o])]);

function eventFilter(q) {
  const ev = q.get('event');
  if (!ev) return null;
  return h('span', { class: 'filter-chip' }, 'event ', mono(shortId(ev), ev),
    h('button', { type: 'button', class: 'chip-x', 'aria-label': 'Show every event', onclick: () => setParam('event', '') }, '×'));
}

// ---- The views ----

const VIEWS = {
  deliveries: {
    title: 'Deliveries',
    path: '/_mock/deliveries',
    desc: true,
    empty: 'No delivery. Register a webhook (POST /v1/webhooks) and change a context, or emit an event.',
    params: q => ({ order: 'desc', state: q.get('state'), account: q.get('account'), webhookId: q.get('webhook'), type: q.get('type'), eventId: q.get('event') }),
    filters: q => h('div', { class: 'filters' }, stateFilter(q), accountFilter(q), webhookFilter(q), typeFilter(q), eventFilter(q)),
    id: d => d.id,
    columns: [
      { title: 'State', cell: d => stateBadge(d.state) },
      { title: 'Created', cell: d => time(d.createdAt) },
      { title: 'Event', cell: d => [h('span', { class: 'type' }, d.eventType), ' ', mono(shortId(d.eventId), d.eventId)] },
      { title: 'Webhook', class: 'clip', cell: d => h('span', { title: d.url }, urlLabel(d.url)) },
      { title: 'Tries', class: 'num', cell: d => [chaosMarks(d), String(d.attempts.length)] },
      { title: 'Last answer', class: 'clip', cell: d => lastAnswer(d) },
      { title: 'Next attempt', cell: d => (d.nextAttemptAt ? rel(d.nextAttemptAt) : d.state === 'pending' ? h('span', { class: 'muted' }, 'running') : '–') },
    ],
    relevant: c => c.kind === 'delivery',
    touches: (c, id) => c.kind === 'delivery' && c.id === id,
    detail: deliveryDetail,
  },
  events: {
    title: 'Events',
    path: '/_mock/events',
    desc: true,
    empty: 'No event yet. Change a context through /v1, or emit one.',
    params: q => ({ order: 'desc', type: q.get('type'), account: q.get('account') }),
    filters: q => h('div', { class: 'filters' }, typeFilter(q), accountFilter(q),
      h('a', { class: 'button', href: '#/events?emit=1' }, 'Emit an event…')),
    id: e => e.id,
    columns: [
      { title: 'Time', cell: e => time(e.timestamp) },
      { title: 'Type', cell: e => h('span', { class: 'type' }, e.type) },
      { title: 'Account', cell: e => e.account },
      { title: 'Event', cell: e => mono(shortId(e.id), e.id) },
      { title: 'About', class: 'clip', cell: e => eventAbout(e) },
    ],
    relevant: c => c.kind === 'event',
    touches: (c, id) => c.kind === 'delivery' && c.eventId === id,
    detail: eventDetail,
    aside: q => (q.get('emit') ? emitForm() : null),
  },
  webhooks: {
    title: 'Webhooks',
    path: '/_mock/webhooks',
    empty: 'No webhook. Register one with POST /v1/webhooks.',
    params: q => ({ account: q.get('account') }),
    filters: q => h('div', { class: 'filters' }, accountFilter(q)),
    id: w => w.id,
    columns: [
      { title: 'Status', cell: w => h('span', { class: 'badge ' + (w.active ? 'state-succeeded' : 'state-inactive') }, w.active ? 'active' : 'inactive') },
      { title: 'URL', class: 'clip', cell: w => h('span', { class: 'mono', title: w.url }, w.url) },
      { title: 'Events', cell: w => (w.events.length === EVENT_TYPES.length ? chip('all 8 types') : w.events.map(chip)) },
      { title: 'Account', cell: w => w.account },
      { title: 'Webhook', cell: w => mono(shortId(w.id), w.id) },
    ],
    relevant: c => c.kind === 'webhook',
    touches: (c, id) => c.kind === 'webhook' && c.id === id,
    gone: (c, id) => c.kind === 'webhook' && c.id === id && c.action === 'deleted',
    detail: webhookDetail,
  },
  contexts: {
    title: 'Contexts',
    path: '/_mock/contexts',
    desc: true,
    empty: 'No context. Create one with POST /v1/contexts.',
    params: q => ({ order: 'desc', account: q.get('account') }),
    filters: q => h('div', { class: 'filters' }, accountFilter(q)),
    id: c => c.id,
    columns: [
      { title: 'Name', class: 'clip name', cell: c => h('span', { title: c.name }, c.name) },
      { title: 'Tags', class: 'clip', cell: c => c.tags.map(chip) },
      { title: 'Version', class: 'num', cell: c => 'v' + c.version },
      { title: 'Size', class: 'num', cell: c => fmtBytes(c.sizeBytes) },
      { title: 'Updated', cell: c => time(c.updatedAt) },
      { title: 'Account', cell: c => c.account },
    ],
    relevant: c => c.kind === 'event' && Boolean(c.contextId) && c.type !== 'export.completed',
    touches: (c, id) => c.kind === 'event' && c.contextId === id && c.type !== 'export.completed',
    gone: (c, id) => c.kind === 'event' && c.contextId === id && c.type === 'context.deleted',
    detail: contextDetail,
  },
  accounts: {
    title: 'Accounts',
    path: '/_mock/accounts',
    empty: 'No account.',
    params: () => ({}),
    id: () => null,
    columns: [
      { title: 'Account', cell: a => h('strong', null, a.id) },
      { title: 'Keys (masked)', cell: a => h('ul', { class: 'keys' }, a.keys.map(k => h('li', null, mono(k.token), ' ', chip(k.plan + (k.perMinute ? ` ${k.perMinute}/min` : '')), ' ', chip(k.scope)))) },
      { title: 'User', cell: a => a.users.map(u => mono(shortId(u), u)) },
      { title: 'Contexts', class: 'num', cell: a => h('a', { href: '#/contexts' + qs({ account: a.id }) }, fmtCount(a.contexts)) },
      { title: 'Webhooks', class: 'num', cell: a => h('a', { href: '#/webhooks' + qs({ account: a.id }) }, fmtCount(a.webhooks)) },
      { title: '', cell: a => [h('a', { href: '#/deliveries' + qs({ account: a.id }) }, 'deliveries'), ' · ', h('a', { href: '#/events' + qs({ account: a.id }) }, 'events')] },
    ],
    relevant: c => c.kind === 'webhook' || (c.kind === 'event' && ['context.created', 'context.deleted'].includes(c.type)),
  },
  faults: {
    title: 'Faults',
    path: '/_mock/faults',
    empty: 'No fault: every /v1 request is served as it should be.',
    params: () => ({}),
    id: () => null,
    columns: [
      { title: 'Method', cell: f => f.method || 'any' },
      { title: 'Path', class: 'clip', cell: f => mono(f.path || 'any /v1 path') },
      { title: 'Answer', cell: f => (f.status ? h('span', { class: 'badge status-bad' }, String(f.status)) : f.mode === 'drop' ? 'connection closed' : 'served late') },
      { title: 'Mode', cell: f => f.mode || 'instead' },
      { title: 'Latency', class: 'num', cell: f => (f.latencyMs ? `${fmtCount(f.latencyMs)} ms` : '–') },
      { title: 'Retry-After', class: 'num', cell: f => (f.retryAfter ? `${f.retryAfter} s` : '–') },
      { title: 'Times left', class: 'num', cell: f => String(f.times) },
    ],
    relevant: c => c.kind === 'faults',
    aside: () => faultForm(),
  },
  chaos: {
    title: 'Chaos',
    path: '/_mock/chaos',
    empty: 'No decision yet: set a chaos mode (beside), or start the mock with -chaos SPEC.',
    // One read gives the decisions (newest first, the last 100) and the
    // counts beside them.
    load: async () => {
      const c = await api('/_mock/chaos');
      const info = document.getElementById('chaos-info');
      if (info) replace(info, chaosInfo(c));
      return { items: c.decisions, nextCursor: null };
    },
    params: () => ({}),
    id: () => null,
    columns: [
      { title: 'Time', cell: d => time(d.at) },
      { title: 'Action', cell: d => chaosBadge(d.action) },
      { title: 'Of', cell: d => (d.action === 'api-error' ? `request ${fmtCount(d.request)}` : `event ${fmtCount(d.event)}`) },
      { title: 'What it did', class: 'clip', cell: d => decisionText(d) },
    ],
    relevant: c => c.kind === 'chaos',
    aside: () => chaosPanel(),
  },
  contract: {
    title: 'Contract',
    path: '/_mock/contract/mismatches',
    desc: true,
    empty: 'No finding: every exchange through the proxy matched the contract so far.',
    params: q => ({ order: 'desc', operation: q.get('operation') }),
    filters: q => h('div', { class: 'filters' }, operationFilter(q)),
    id: f => f.id,
    columns: [
      { title: 'Time', cell: f => time(f.time) },
      { title: 'Operation', cell: f => h('span', { class: 'type' }, f.operation) },
      { title: 'Request', class: 'clip', cell: f => h('span', { class: 'mono', title: f.method + ' ' + f.target }, f.method + ' ' + f.target) },
      { title: 'Status', cell: f => h('span', { class: 'badge ' + (f.status < 400 ? 'status-ok' : 'status-bad') }, String(f.status)) },
      { title: 'Mismatches', class: 'num', cell: f => String(f.request.length + f.answer.length + (f.dropped || 0)) },
      { title: 'SDK', cell: f => sdkBadge(f) },
    ],
    relevant: c => c.kind === 'contract',
    asideLive: true,
    detail: contractDetail,
    aside: () => contractCounts(),
  },
};

// sdkBadge says whether the SDK tolerates a finding's answer.
function sdkBadge(f) {
  if (f.sdk) return h('span', { class: 'badge ' + (f.sdk.tolerated ? 'state-succeeded' : 'state-failed'), title: f.sdk.sdk }, f.sdk.tolerated ? 'tolerates' : 'breaks');
  return h('span', { class: 'muted', title: f.unvalidated || null }, f.unvalidated ? 'not checked' : '–');
}

// chaosBadge names a chaos action.
function chaosBadge(action) {
  return h('span', { class: 'badge badge-chaos chaos-' + action }, action);
}

// chaosMarks marks a delivery chaos held back or repeated, in a list.
function chaosMarks(d) {
  const actions = [...new Set(d.attempts.filter(a => a.chaos).map(a => a.chaos.action))];
  return actions.map(a => [h('span', { class: 'badge badge-chaos chaos-' + a, title: a === 'held' ? 'its first attempt was held back by the chaos mode' : 'an acknowledged attempt was sent again by the chaos mode' }, a === 'held' ? 'held' : 'dup'), ' ']);
}

// chaosEffect says what chaos did to an attempt.
function chaosEffect(a) {
  if (!a.chaos) return null;
  if (a.chaos.action === 'held') {
    return h('span', { class: 'badge badge-chaos chaos-held', title: 'The chaos mode held this first attempt back, so that later events could overtake it (reorder)' },
      'held ' + fmtDuration(a.chaos.delayNs));
  }
  return h('span', { class: 'badge badge-chaos chaos-duplicate', title: 'The chaos mode sent the acknowledged attempt before this one again (duplicate): the same event id and body' },
    `duplicate of #${a.number - 1}, ${fmtDuration(a.chaos.delayNs)} after`);
}

// decisionText says what a decision did, linking what it did it to.
function decisionText(d) {
  const delivery = () => link('#/deliveries' + qs({ id: d.deliveryId }), shortId(d.deliveryId), d.deliveryId);
  if (d.action === 'api-error') {
    return h('span', { title: `${d.method} ${d.path} answered ${d.status} (${d.requestId})` },
      h('span', { class: 'badge status-bad' }, String(d.status)), ' ', mono(d.method + ' ' + d.path));
  }
  const delay = fmtDuration(d.delayMs * 1e6);
  if (d.action === 'held') return [delivery(), ` held ${delay}`];
  return [delivery(), ` #${d.attempt} again after ${delay}`];
}

// chaosInfo shows the chaos mode's settings and counts.
function chaosInfo(c) {
  const pct = p => `${+(p * 100).toFixed(4)} %`;
  return [
    c.on
      ? kv([
        ['SPEC', h('span', { class: 'mono wrap', id: 'chaos-spec-now' }, c.spec)],
        ['Seed', [mono(String(c.seed)), c.seedChosen ? h('span', { class: 'muted' }, ' chosen by the server') : null]],
        ['Duplicate', pct(c.duplicate)],
        ['Reorder', pct(c.reorder)],
        ['Delay', `up to ${fmtDuration(c.delayMs * 1e6)}`],
        ['API errors', pct(c.apiError)],
        ['Since', h('span', { class: 'mono' }, fmtDateTime(c.since))],
      ])
      : h('p', { class: 'muted', id: 'chaos-off' }, 'Off: every request runs and every delivery goes once, as soon as it is due.'),
    h('h3', null, 'Since it was set'),
    kv([
      ['Requests', fmtCount(c.requests)],
      ['Events', fmtCount(c.events)],
      ['Failed', h('span', { id: 'chaos-api-errors' }, fmtCount(c.apiErrors))],
      ['Held', fmtCount(c.held)],
      ['Duplicated', fmtCount(c.duplicates)],
    ]),
  ];
}

// chaosPanel is the chaos mode and the form that sets it.
async function chaosPanel() {
  const c = await api('/_mock/chaos');
  const spec = h('input', { id: 'chaos-spec', class: 'mono', name: 'spec', value: c.on ? c.spec : '', spellcheck: 'false',
    placeholder: 'seed=42,duplicate=0.2,reorder=0.3,delay=2s,api-error=0.1', 'aria-label': 'The chaos mode as a SPEC' });
  const submit = e => {
    e.preventDefault();
    act(res => 'Chaos mode set: ' + res.spec, () => api('/_mock/chaos', { method: 'PUT', body: { spec: spec.value.trim() } }));
  };
  const stop = () => act('Chaos mode off', () => api('/_mock/chaos', { method: 'DELETE' }));
  return h('section', { class: 'detail-body chaos-panel' },
    h('header', { class: 'detail-head' }, h('h2', null, 'Chaos mode')),
    h('div', { id: 'chaos-info' }, chaosInfo(c)),
    h('h3', null, 'Set'),
    h('form', { class: 'form', id: 'chaos-form', onsubmit: submit },
      h('label', null, 'SPEC', spec),
      h('div', { class: 'form-actions' }, h('button', { type: 'submit', class: 'primary' }, 'Set'),
        h('button', { type: 'button', class: 'danger', id: 'chaos-stop', onclick: stop }, 'Turn off'))),
    h('p', { class: 'muted' }, 'seed=N (without it one is chosen), duplicate=P (an acknowledged attempt is sent again), reorder=P (a delivery is held back, so a later event overtakes it), ',
      'delay=D (the longest hold or wait, 2s by default) and api-error=P (a /v1 request fails with 429, 500, 502 or 503). ',
      'The same seed and the same requests, one after another, give the same decisions; setting the mode, or a reset, starts its counts over (PUT /_mock/chaos).'));
}

function eventAbout(e) {
  const d = e.data || {};
  if (d.name != null) return h('span', { title: d.name }, d.name, d.version ? h('span', { class: 'muted' }, ' v' + d.version) : null);
  if (d.contextId) return mono(shortId(d.contextId), d.contextId);
  if (d.userId) return [mono(shortId(d.userId), d.userId), d.role ? h('span', { class: 'muted' }, ' as ' + d.role) : null];
  return h('span', { class: 'muted' }, '–');
}

// ---- Details ----

// mismatchTable lists a side's mismatches: where, what, and the rule of
// the document each breaks.
function mismatchTable(title, ms) {
  if (!ms.length) return null;
  return [h('h3', null, title),
    h('table', { class: 'list mini mismatches' },
      h('thead', null, h('tr', null, h('th', { scope: 'col' }, 'Where'), h('th', { scope: 'col' }, 'How'), h('th', { scope: 'col' }, 'Rule in openapi.yaml'))),
      h('tbody', null, ms.map(m => h('tr', null, h('td', { class: 'mono' }, m.where), h('td', null, m.message), h('td', { class: 'mono wrap' }, m.rule)))))];
}

async function contractDetail(id) {
  const f = await api('/_mock/contract/mismatches/' + encodeURIComponent(id));
  return h('section', { class: 'detail-body' },
    h('header', { class: 'detail-head' }, h('h2', null, 'Finding'), h('span', { class: 'type' }, f.operation), mono(f.id)),
    kv([
      ['Time', h('span', { class: 'mono' }, fmtDateTime(f.time))],
      ['Request', h('span', { class: 'mono wrap' }, f.method + ' ' + f.target)],
      ['Status', String(f.status)],
      f.requestId ? ['Request id', mono(f.requestId)] : null,
      f.sdk ? ['SDK', h('span', null, sdkBadge(f), ' ', f.sdk.sdk)] : null,
      f.unvalidated ? ['Not checked', f.unvalidated] : null,
      f.dropped ? ['Not listed', `${fmtCount(f.dropped)} more mismatches`] : null,
    ]),
    mismatchTable('The request', f.request), mismatchTable('The answer', f.answer));
}

// contractCounts is what the proxy saw, per operation, beside its
// findings; a mock that is no proxy says how to make it one.
async function contractCounts() {
  const c = await api('/_mock/contract');
  if (!c.proxy) {
    return h('section', { class: 'detail-body contract-counts' }, h('h2', null, 'Not a proxy'),
      h('p', null, 'Start the mock with -upstream URL (in Go, mockserver.WithUpstream) to forward every /v1 request to a deployment and hold each request and answer to the contract.'));
  }
  // Soft hyphens let the long headings break, so the table fits beside the
  // findings in a 1280-px window.
  const cols = [['exchanges', 'Ex\u00ADchanges'], ['mismatched', 'Mis\u00ADmatched'], ['mismatches', 'Mis\u00ADmatches'], ['notTolerated', 'SDK breaks'],
    ['refused', 'Refused'], ['unvalidated', 'Not checked'], ['upstreamFailures', 'Upstream failed']];
  const row = n => h('tr', null, h('td', null, n.operation), cols.map(([k]) => h('td', { class: 'num' }, fmtCount(n[k]))));
  return h('section', { class: 'detail-body contract-counts' },
    h('header', { class: 'detail-head' }, h('h2', null, 'Per operation')),
    kv([
      ['Upstream', mono(c.upstream)],
      ['Kept', `${fmtCount(c.kept)} findings, ${fmtBytes(c.keptBytes)} (the newest ${fmtCount(c.limit)}, at most ${fmtBytes(c.maxBytes)})`],
      ['Checked', `bodies up to ${fmtBytes(c.maxValidatedBody)}`],
    ]),
    h('table', { class: 'list mini counts' },
      h('thead', null, h('tr', null, h('th', { scope: 'col' }, 'Operation'), cols.map(([, t]) => h('th', { scope: 'col', class: 'num' }, t)))),
      h('tbody', null, c.operations.map(row), row(c.total))));
}

async function deliveryDetail(id) {
  const d = await api('/_mock/deliveries/' + encodeURIComponent(id));
  let ev = null;
  try { ev = await api('/_mock/events/' + encodeURIComponent(d.eventId)); } catch (e) { if (e.status !== 404) throw e; }
  const fake = app.clock && app.clock.fake;
  const redeliver = () => act('Redelivered: a new attempt is due now', () => api(`/_mock/deliveries/${encodeURIComponent(d.id)}/redeliver`, { method: 'POST' }));
  let next = '–';
  if (d.nextAttemptAt) {
    next = [time(d.nextAttemptAt), ' ', h('span', { class: 'muted' }, '('), rel(d.nextAttemptAt), h('span', { class: 'muted' }, ')'),
      fake ? h('button', { type: 'button', class: 'small', onclick: () => advance({ toNextDue: true }) }, 'Advance the clock to it') : null];
  } else if (d.state === 'pending') {
    next = h('span', { class: 'muted' }, 'an attempt is running');
  }
  return h('section', { class: 'detail-body' },
    h('header', { class: 'detail-head' },
      h('h2', null, 'Delivery'), stateBadge(d.state), mono(d.id),
      h('div', { class: 'actions' }, h('button', { type: 'button', class: 'primary', id: 'redeliver', onclick: redeliver }, 'Redeliver'))),
    kv([
      ['Event', [h('span', { class: 'type' }, d.eventType), ' ', link('#/events' + qs({ id: d.eventId }), d.eventId)]],
      ['Webhook', [link('#/webhooks' + qs({ id: d.webhookId }), d.webhookId), ' ', h('a', { href: '#/deliveries' + qs({ webhook: d.webhookId }) }, 'its deliveries')]],
      ['URL', h('span', { class: 'mono wrap' }, d.url)],
      ['Account', d.account],
      ['Created', h('span', { class: 'mono', title: d.createdAt }, fmtDateTime(d.createdAt))],
      ['Next attempt', next],
      d.failureReason ? ['Failed', h('span', { class: 'failure' }, d.failureReason)] : null,
    ]),
    h('h3', null, `Attempts (${d.attempts.length})`),
    d.attempts.length ? attemptList(d.attempts) : empty('No attempt has finished yet.'),
    h('h3', null, 'Payload'),
    ev ? h('pre', { class: 'code payload' }, prettyJSON({ id: ev.id, type: ev.type, timestamp: ev.timestamp, data: ev.data }))
      : empty('The event is no longer kept (the history keeps the newest).'));
}

function attemptList(attempts) {
  return h('ol', { class: 'attempts', reversed: true },
    [...attempts].reverse().map(a => h('li', { class: 'attempt ' + (a.error ? 'attempt-failed' : 'attempt-ok') },
      h('div', { class: 'attempt-head' },
        h('span', { class: 'attempt-no' }, '#' + a.number),
        h('span', { class: 'mono', title: 'started ' + a.startedAt + (a.scheduledAt !== a.startedAt ? ', due ' + a.scheduledAt : '') }, fmtDateTime(a.startedAt).slice(0, 19)),
        h('span', { class: 'muted' }, fmtDuration(a.durationNs)),
        answer(a),
        chaosEffect(a),
        a.traceId ? h('span', { class: 'mono muted attempt-trace', title: 'the attempt\'s OpenTelemetry trace: find it in your tracing by this id' }, 'trace ' + a.traceId) : null),
      a.responseSnippet ? h('pre', { class: 'code answer' }, a.responseSnippet) : null)));
}

async function eventDetail(id) {
  const [ev, dl] = await Promise.all([
    api('/_mock/events/' + encodeURIComponent(id)),
    api('/_mock/deliveries' + qs({ eventId: id, limit: 100 })),
  ]);
  return h('section', { class: 'detail-body' },
    h('header', { class: 'detail-head' }, h('h2', null, 'Event'), h('span', { class: 'type' }, ev.type), mono(ev.id)),
    kv([
      ['Time', h('span', { class: 'mono' }, fmtDateTime(ev.timestamp))],
      ['Account', ev.account],
      ev.data && ev.data.contextId ? ['Context', link('#/contexts' + qs({ id: ev.data.contextId }), ev.data.contextId)] : null,
      ev.chaosOrdinal ? ['Chaos', h('span', { title: 'Its place among the events fired since the chaos mode was set: its deliveries\u2019 decisions are keyed on it' }, `event ${fmtCount(ev.chaosOrdinal)}`)] : null,
    ]),
    h('h3', null, 'Envelope (as delivered and signed)'),
    h('pre', { class: 'code payload' }, prettyJSON({ id: ev.id, type: ev.type, timestamp: ev.timestamp, data: ev.data })),
    h('h3', null, `Deliveries (${dl.data.length}${dl.hasMore ? '+' : ''})`),
    dl.data.length
      ? h('table', { class: 'list mini' }, h('tbody', null, dl.data.map(d => h('tr', null,
        h('td', null, stateBadge(d.state)),
        h('td', { class: 'clip' }, h('a', { href: '#/deliveries' + qs({ id: d.id, event: ev.id }) }, urlLabel(d.url))),
        h('td', { class: 'num' }, chaosMarks(d), `${d.attempts.length} tries`),
        h('td', null, lastAnswer(d))))))
      : empty('No webhook of the account receives this type.'));
}

async function webhookDetail(id) {
  const w = await api('/_mock/webhooks/' + encodeURIComponent(id));
  const path = '/_mock/webhooks/' + encodeURIComponent(w.id);
  const toggle = () => act(w.active ? 'Webhook disabled: its waiting deliveries have failed' : 'Webhook enabled',
    () => api(path, { method: 'PATCH', body: { active: !w.active } }));
  const remove = async () => {
    if (!await confirmDialog('Delete this webhook?', `Deliveries to ${w.url} stop, and its waiting ones end failed. Its deliveries stay in the history.`, 'Delete')) return;
    if (await act('Webhook deleted', () => api(path, { method: 'DELETE' })) !== undefined) setParam('id', '');
  };
  return h('section', { class: 'detail-body' },
    h('header', { class: 'detail-head' }, h('h2', null, 'Webhook'),
      h('span', { class: 'badge ' + (w.active ? 'state-succeeded' : 'state-inactive') }, w.active ? 'active' : 'inactive'), mono(w.id),
      h('div', { class: 'actions' },
        h('button', { type: 'button', id: 'webhook-toggle', onclick: toggle }, w.active ? 'Disable' : 'Enable'),
        h('button', { type: 'button', class: 'danger', id: 'webhook-delete', onclick: remove }, 'Delete…'))),
    kv([
      ['URL', h('span', { class: 'mono wrap' }, w.url)],
      ['Events', w.events.map(chip)],
      ['Account', w.account],
      ['Created', h('span', { class: 'mono' }, fmtDateTime(w.createdAt))],
      ['Secret', h('span', { class: 'muted' }, 'never shown (change it with PATCH /_mock/webhooks/{id})')],
    ]),
    h('p', null, h('a', { href: '#/deliveries' + qs({ webhook: w.id }) }, 'Its deliveries ›')));
}

async function contextDetail(id, view) {
  const enc = encodeURIComponent(id);
  const [c, vs] = await Promise.all([api('/_mock/contexts/' + enc), api(`/_mock/contexts/${enc}/versions?order=desc&limit=20`)]);
  const publish = () => act('Published: context.published fired', () => api(`/_mock/contexts/${enc}/publish`, { method: 'POST' }));
  const diffOut = h('div', { class: 'diff-out' });
  const from = h('input', { type: 'number', min: 1, max: c.version, value: Math.max(1, c.version - 1), 'aria-label': 'From version', class: 'mono' });
  const to = h('input', { type: 'number', min: 1, max: c.version, value: c.version, 'aria-label': 'To version', class: 'mono' });
  const showDiff = async () => {
    try {
      replace(diffOut, renderDiff(await api(`/_mock/contexts/${enc}/diff` + qs({ from: from.value, to: to.value }))));
    } catch (e) {
      replace(diffOut, h('p', { class: 'error', role: 'alert' }, e.message));
    }
  };
  const versions = h('table', { class: 'list mini versions' },
    h('thead', null, h('tr', null, ['Version', 'Recorded', 'By', 'Sections changed', 'Words'].map(t => h('th', { scope: 'col' }, t)))),
    h('tbody', null, vs.data.map(v => h('tr', null,
      h('td', null, 'v' + v.version),
      h('td', null, time(v.createdAt)),
      h('td', null, mono(shortId(v.createdBy), v.createdBy)),
      h('td', { class: 'clip' }, v.changes.sections_modified.length ? v.changes.sections_modified.join(', ') : h('span', { class: 'muted' }, 'none')),
      h('td', { class: 'num' }, (v.changes.word_count_delta > 0 ? '+' : '') + v.changes.word_count_delta)))));
  const node = h('section', { class: 'detail-body' },
    h('header', { class: 'detail-head' }, h('h2', { class: 'context-name' }, c.name), chip('v' + c.version),
      h('div', { class: 'actions' }, h('button', { type: 'button', id: 'publish', onclick: publish }, 'Publish'))),
    kv([
      ['Context', mono(c.id)],
      ['Account', c.account],
      ['Tags', c.tags.length ? c.tags.map(chip) : h('span', { class: 'muted' }, 'none')],
      ['Size', fmtBytes(c.sizeBytes)],
      ['Updated', h('span', { class: 'mono' }, fmtDateTime(c.updatedAt))],
    ]),
    h('h3', null, `Content (v${c.version})`),
    c.content ? h('pre', { class: 'code content' }, c.content) : empty('Empty.'),
    h('h3', null, 'Versions'),
    versions,
    vs.hasMore ? h('p', { class: 'muted' }, `Newest 20 of ${c.version}.`) : null,
    h('h3', null, 'Diff'),
    c.version > 1
      ? h('form', { class: 'diff-form', onsubmit: e => { e.preventDefault(); showDiff(); } }, 'from v', from, ' to v', to, h('button', { type: 'submit' }, 'Show'))
      : empty('One version: nothing to compare yet.'),
    diffOut);
  if (c.version > 1) await showDiff();
  return node;
}

function renderDiff(d) {
  const out = [];
  if (d.fromName !== d.toName) out.push(h('p', null, 'Name: ', h('del', null, d.fromName), ' → ', h('ins', null, d.toName)));
  if (JSON.stringify(d.fromTags) !== JSON.stringify(d.toTags)) {
    out.push(h('p', null, 'Tags: ', d.fromTags.map(chip), ' → ', d.toTags.map(chip)));
  }
  if (d.identical) {
    out.push(empty(`The content of v${d.from} and v${d.to} is the same.`));
    return out;
  }
  // A cut says how much the server left out of the answer.
  const more = n => (n ? h('span', { class: 'cut muted' }, ` … ${fmtBytes(n)} more`) : null);
  if (d.tooDifferent) {
    out.push(h('p', { class: 'note' }, `v${d.from} and v${d.to} are too different to diff line by line (more than 1,000 lines changed); here are both`,
      d.fromContentCut || d.toContentCut ? ' (the first 128 KiB of each).' : '.'),
      h('div', { class: 'side-by-side' },
        h('div', null, h('h4', null, 'v' + d.from), h('pre', { class: 'code' }, d.fromContent, more(d.fromContentCut))),
        h('div', null, h('h4', null, 'v' + d.to), h('pre', { class: 'code' }, d.toContent, more(d.toContentCut)))));
    return out;
  }
  out.push(h('p', { class: 'diff-stat' }, h('span', { class: 'ins-count' }, `+${d.added}`), ' ', h('span', { class: 'del-count' }, `−${d.removed}`),
    h('span', { class: 'muted' }, ` lines, v${d.from} → v${d.to}`)));
  const lines = [];
  for (const hk of d.hunks) {
    lines.push(h('div', { class: 'hunk' }, `@@ −${hk.fromStart},${hk.fromLines} +${hk.toStart},${hk.toLines} @@`));
    for (const l of hk.lines) {
      const sign = l.op === 'insert' ? '+' : l.op === 'delete' ? '−' : ' ';
      lines.push(h('div', { class: 'line line-' + l.op }, h('span', { class: 'sign' }, sign), l.text, more(l.cut),
        l.noNewline ? h('span', { class: 'no-eol' }, ' (no newline at the end)') : null));
    }
  }
  out.push(h('div', { class: 'diff code' }, lines));
  const leftOut = d.hunks.length ? d.hunks[d.hunks.length - 1].linesLeftOut || 0 : 0;
  if (leftOut || d.hunksLeftOut) {
    out.push(h('p', { class: 'note diff-left-out' }, 'The diff is cut here: ',
      [leftOut ? `${fmtCount(leftOut)} more lines of this hunk` : null, d.hunksLeftOut ? `${fmtCount(d.hunksLeftOut)} more hunks` : null].filter(Boolean).join(' and '),
      ' (the counts above are the whole diff\u2019s).'));
  }
  return out;
}

// ---- Forms: emit an event, add a fault ----

const emitTemplates = {
  'team.member.added': { teamId: 'team_00000000000000000001', userId: 'user_00000000000000000002', role: 'editor' },
  'team.member.removed': { teamId: 'team_00000000000000000001', userId: 'user_00000000000000000002', role: 'editor' },
};

function emitForm() {
  const type = h('select', { name: 'type', id: 'emit-type' }, EVENT_TYPES.map(t => h('option', { value: t, selected: t === 'team.member.added' }, t)));
  const account = h('select', { name: 'account', id: 'emit-account' });
  app.accountsLoaded.then(list => append(account, list.map(a => h('option', { value: a }, a)),
    app.accountsMore ? moreOption('accounts') : null), () => {});
  const data = h('textarea', { name: 'data', id: 'emit-data', class: 'mono', rows: 8, spellcheck: 'false' });
  const error = h('p', { class: 'error', role: 'alert', hidden: true });
  const fill = () => { data.value = JSON.stringify(emitTemplates[type.value] || { contextId: 'ctx_00000000000000000000', name: 'A context' }, null, 2); };
  type.addEventListener('change', fill);
  fill();
  const submit = async e => {
    e.preventDefault();
    let body;
    try {
      body = JSON.parse(data.value);
    } catch (err) {
      error.hidden = false;
      error.textContent = 'The data is not JSON: ' + err.message;
      return;
    }
    error.hidden = true;
    const ev = await act(`Emitted ${type.value}`, () => api('/_mock/events', { method: 'POST', body: { type: type.value, account: account.value, data: body } }));
    if (ev) go('events', { id: ev.id });
  };
  return h('section', { class: 'detail-body' },
    h('header', { class: 'detail-head' }, h('h2', null, 'Emit an event'),
      h('button', { type: 'button', class: 'close', 'aria-label': 'Close', onclick: () => setParam('emit', '') }, '×')),
    h('p', { class: 'muted' }, 'Records the event and delivers it to the account\u2019s webhooks subscribed to its type (POST /_mock/events). The data is sent as it is.'),
    h('form', { class: 'form', onsubmit: submit },
      h('label', null, 'Type', type), h('label', null, 'Account', account), h('label', null, 'Data', data), error,
      h('div', { class: 'form-actions' }, h('button', { type: 'submit', class: 'primary' }, 'Emit'))));
}

function faultForm() {
  const f = {
    method: h('select', { name: 'method' }, ['', 'GET', 'POST', 'PUT', 'DELETE'].map(m => h('option', { value: m }, m || 'any'))),
    path: h('input', { name: 'path', class: 'mono', placeholder: '/v1/contexts/*' }),
    status: h('input', { name: 'status', type: 'number', min: 400, max: 599, placeholder: '503' }),
    latencyMs: h('input', { name: 'latencyMs', type: 'number', min: 0, max: 300000, placeholder: '0' }),
    retryAfter: h('input', { name: 'retryAfter', type: 'number', min: 0, placeholder: '–' }),
    times: h('input', { name: 'times', type: 'number', min: 1, value: 1 }),
    mode: h('select', { name: 'mode' }, ['instead', 'after', 'drop'].map(m => h('option', { value: m }, m))),
  };
  const submit = e => {
    e.preventDefault();
    const body = {};
    for (const k of ['method', 'path', 'mode']) if (f[k].value) body[k] = f[k].value;
    for (const k of ['status', 'latencyMs', 'retryAfter', 'times']) if (f[k].value !== '') body[k] = Number(f[k].value);
    act('Fault added', () => api('/_mock/faults', { method: 'POST', body }));
  };
  const clear = () => act('Every fault cleared', () => api('/_mock/faults', { method: 'DELETE' }));
  return h('section', { class: 'detail-body' },
    h('header', { class: 'detail-head' }, h('h2', null, 'Add a fault')),
    h('p', { class: 'muted' }, 'The next matching /v1 requests answer this status, wait this latency, or lose their answer (POST /_mock/faults).'),
    h('form', { class: 'form grid-form', onsubmit: submit },
      h('label', null, 'Method', f.method), h('label', null, 'Path', f.path), h('label', null, 'Status', f.status),
      h('label', null, 'Latency (ms)', f.latencyMs), h('label', null, 'Retry-After (s)', f.retryAfter), h('label', null, 'Times', f.times),
      h('label', null, 'Mode', f.mode),
      h('div', { class: 'form-actions' }, h('button', { type: 'submit', class: 'primary' }, 'Add fault'),
        h('button', { type: 'button', class: 'danger', onclick: clear }, 'Clear every fault'))));
}

// ---- The clock's actions, reset ----

// advance moves the fake clock; the mock runs every attempt due on the
// way, each at its own time, and answers once they have run, saying how
// many did.
async function advance(body) {
  const how = body.toNextDue ? 'to the next due attempt' : `by ${body.duration}`;
  const c = await act(res => `Clock advanced ${how}: ${res.attempts} delivery ${res.attempts === 1 ? 'attempt' : 'attempts'} ran`,
    () => api('/_mock/clock/advance', { method: 'POST', body }));
  if (c) setClock(c);
}

function bindHeader() {
  $('#clock-to-next').addEventListener('click', () => advance({ toNextDue: true }));
  for (const b of document.querySelectorAll('[data-advance]')) b.addEventListener('click', () => advance({ duration: b.dataset.advance }));
  $('#clock-form').addEventListener('submit', e => {
    e.preventDefault();
    const v = $('#clock-duration').value.trim();
    if (v) advance({ duration: v });
  });
  $('#reset').addEventListener('click', async () => {
    if (!await confirmDialog('Reset everything?', 'Every context, webhook, event, delivery, fault and idempotency key is forgotten. Keys and the clock stay.', 'Reset')) return;
    await act('Reset: the mock server is empty', () => api('/_mock/reset', { method: 'POST' }));
  });
}

// ---- Start ----

async function start() {
  // The accounts, the counts and the first list are asked for at once:
  // the first paint waits for one round trip, not three (a few more for
  // the accounts past the first 100).
  app.accountsLoaded = all('/_mock/accounts', {}, CHOOSER_MAX).then(res => {
    app.accountsMore = res.more;
    return (app.accounts = res.items.map(a => a.id));
  });
  bindHeader();
  follow({
    status: setLive,
    clock: setClock,
    change: c => {
      refreshSummary();
      if (app.view) app.view.onChange(c);
    },
    resync: () => {
      refreshSummary();
      if (app.view) app.view.onChange({ kind: 'reset' });
    },
  });
  setInterval(tick, 1000);
  window.addEventListener('hashchange', () => route().catch(showError));
  try {
    await Promise.all([app.accountsLoaded, loadSummary(), route()]);
  } catch (e) {
    replace($('#main'), h('p', { class: 'error', role: 'alert' }, 'Cannot reach the mock server\u2019s admin API: ' + e.message));
  }
}

start().catch(showError);
