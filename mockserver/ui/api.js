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

// follow opens the change stream and calls handlers.change(change) for
// each change, handlers.resync() when changes were lost (a reconnection,
// or a page too slow for a burst), and handlers.status(live) when the
// stream opens or drops. The browser reconnects by itself.
export function follow(handlers) {
  const es = new EventSource('/_mock/stream');
  let opened = false;
  es.addEventListener('hello', e => {
    handlers.status(true);
    if (opened) handlers.resync(); // changes may have been missed meanwhile
    opened = true;
    handlers.clock(JSON.parse(e.data));
  });
  es.addEventListener('change', e => handlers.change(JSON.parse(e.data)));
  es.addEventListener('resync', () => handlers.resync());
  es.addEventListener('error', () => handlers.status(false));
  return es;
}
