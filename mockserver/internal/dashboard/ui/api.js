// The dashboard's calls to the mock server: the admin API (the same
// endpoints a test or curl uses, so the page and the API never disagree)
// and its change stream.

// ApiError is an answer other than 2xx, with the contract's error body.
export class ApiError extends Error {
  constructor(status, message, detail) {
    super(message);
    this.status = status;
    this.detail = detail || {};
  }
}

// api sends one request and returns the decoded answer (null for 204).
export async function api(path, { method = 'GET', body } = {}) {
  const init = { method, headers: { Accept: 'application/json' } };
  if (body !== undefined) {
    init.headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  let res;
  try {
    res = await fetch(path, init);
  } catch (e) {
    throw new ApiError(0, 'the mock server does not answer (' + e.message + ')');
  }
  if (res.status === 204) return null;
  const text = await res.text();
  let data = null;
  try { data = text ? JSON.parse(text) : null; } catch { /* not JSON */ }
  if (!res.ok) {
    const e = data && data.error;
    const msg = e ? e.message + (e.param ? ` (${e.param})` : '') : `${res.status} ${res.statusText}`;
    throw new ApiError(res.status, msg, e);
  }
  return data;
}

// page fetches one page of an admin list from cursor. A filtered list may
// answer a short page (it walks a bounded number of items per request),
// so this follows its cursors until the page is full, it ends, or a few
// requests have been made.
export async function page(path, params, limit, cursor) {
  const items = [];
  let next = cursor, hasMore = false;
  for (let round = 0; round < 10; round++) {
    const p = new URLSearchParams();
    // An unset filter (null, undefined, '') is left out: the admin API
    // refuses an empty or unknown value.
    for (const [k, v] of Object.entries(params)) if (v != null && v !== '') p.set(k, v);
    p.set('limit', String(limit - items.length));
    if (next) p.set('cursor', next);
    const res = await api(`${path}?${p}`);
    items.push(...res.data);
    hasMore = res.hasMore;
    next = res.nextCursor;
    if (!hasMore || items.length >= limit) break;
  }
  return { items, hasMore, nextCursor: hasMore ? next : null };
}

// all fetches a whole admin list, a page of 100 at a time, up to max
// items; more is true when the list holds more than that. The choosers
// (account, webhook) use it: those lists are short next to events and
// deliveries, but an account has up to 100 webhooks and a server any
// number of accounts, so one page is not enough.
export async function all(path, params, max) {
  const items = [];
  let cursor = null;
  for (;;) {
    const r = await page(path, params, Math.min(100, max - items.length), cursor);
    items.push(...r.items);
    if (!r.hasMore) return { items, more: false };
    if (items.length >= max) return { items, more: true };
    cursor = r.nextCursor;
  }
}

// The delays between the page's own attempts to reopen the change stream:
// the first, doubled after each refusal, up to the last.
const REOPEN_FIRST_MS = 1000, REOPEN_MAX_MS = 30000;

// follow opens the change stream and calls handlers.change(change) for
// each change, handlers.resync() when changes were lost (a reconnection,
// or a page too slow for a burst), and handlers.status(live) when the
// stream opens or drops.
//
// The browser reconnects by itself after a dropped connection (the mock
// stopped, or restarted), but gives up for good when an answer is not the
// stream (a 503 while the mock shuts down or has too many streams open, a
// proxy's 502): then follow opens a new one itself, after 1 s, then 2, 4…
// up to 30 s, so a page left open follows the mock again whenever it is
// back. A tab in the background holds no stream: browsers give an origin
// only six connections over HTTP/1.1, all tabs together, and six
// dashboards open would leave none for the pages' requests. It opens
// again, and reloads what it shows, when the tab is shown.
export function follow(handlers) {
  // opened: the page has shown what the mock held before this stream
  // opens, so the stream's hello asks for a reload (resync).
  let es = null, opened = document.hidden, timer = null, delay = REOPEN_FIRST_MS;
  const open = () => {
    timer = null;
    if (es || document.hidden) return;
    const src = new EventSource('/_mock/stream');
    es = src;
    src.addEventListener('hello', e => {
      delay = REOPEN_FIRST_MS;
      handlers.status(true);
      if (opened) handlers.resync(); // changes may have been missed meanwhile
      opened = true;
      handlers.clock(JSON.parse(e.data));
    });
    src.addEventListener('change', e => handlers.change(JSON.parse(e.data)));
    src.addEventListener('resync', () => handlers.resync());
    src.addEventListener('error', () => {
      if (es !== src) return;
      handlers.status(false);
      if (src.readyState === EventSource.CLOSED) {
        es = null;
        reopen();
      }
    });
  };
  const reopen = () => {
    if (timer || document.hidden) return;
    timer = setTimeout(open, delay);
    delay = Math.min(2 * delay, REOPEN_MAX_MS);
  };
  const close = () => {
    clearTimeout(timer);
    timer = null;
    if (es) es.close();
    es = null;
    opened = true;
  };
  document.addEventListener('visibilitychange', () => {
    if (document.hidden) {
      close();
      handlers.status(false);
    } else {
      delay = REOPEN_FIRST_MS;
      open();
    }
  });
  open();
}
