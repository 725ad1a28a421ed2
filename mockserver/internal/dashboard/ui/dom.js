// DOM building and formatting for the dashboard.
//
// Every string the page shows is written as text: h() appends strings as
// Text nodes and sets attributes with setAttribute, so a context named
// <img src=x onerror=alert(1)> is shown as those characters and never
// parsed as HTML. Nothing in the dashboard assigns HTML from a string
// (the Go tests forbid the APIs that would), and the Content-Security-Policy
// refuses inline script besides.

// h makes an element: h('td', {class: 'mono', title: id}, id, ' ', child).
// Attributes whose value is null, undefined or false are left out; on…
// attributes take a function (an event listener); href takes only the
// page's own #/ routes.
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v == null || v === false) continue;
    if (k === 'class') el.className = v;
    else if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), v);
    else if (k === 'href') el.setAttribute('href', String(v).startsWith('#/') || String(v).startsWith('/_mock/') ? String(v) : '#/');
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  append(el, children);
  return el;
}

// append adds children (nodes, strings as text, arrays of them) to el.
export function append(el, children) {
  for (const c of [children].flat(Infinity)) {
    if (c == null || c === false) continue;
    el.append(c instanceof Node ? c : String(c));
  }
  return el;
}

// replace empties el and appends children.
export function replace(el, ...children) {
  el.replaceChildren();
  return append(el, children);
}

export const $ = (sel, root = document) => root.querySelector(sel);

// Query strings of the page's routes and of API calls.
export function qs(params) {
  const p = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v != null && v !== '') p.set(k, v);
  const s = p.toString();
  return s ? '?' + s : '';
}

// Times come from the server as RFC 3339 in UTC with milliseconds; the
// page shows them in UTC, as the server's clock (a fake one is often days
// ahead of the machine's).
const pad = (n, w = 2) => String(n).padStart(w, '0');

export function fmtTime(iso, ref) {
  if (!iso) return '–';
  const d = new Date(iso);
  const time = `${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}`;
  const r = ref ? new Date(ref) : null;
  if (r && r.getUTCFullYear() === d.getUTCFullYear() && r.getUTCMonth() === d.getUTCMonth() && r.getUTCDate() === d.getUTCDate()) return time;
  return `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())} ${time}`;
}

export function fmtDateTime(iso) {
  if (!iso) return '–';
  const d = new Date(iso);
  return `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())} ${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}.${pad(d.getUTCMilliseconds(), 3)}`;
}

// fmtSpan says how long ms milliseconds are: "4m 59s", "2h 36m", "1d 2h".
export function fmtSpan(ms) {
  const s = Math.round(Math.abs(ms) / 1000);
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return s % 60 ? `${m}m ${s % 60}s` : `${m}m`;
  const hr = Math.floor(m / 60);
  if (hr < 24) return m % 60 ? `${hr}h ${m % 60}m` : `${hr}h`;
  const d = Math.floor(hr / 24);
  return hr % 24 ? `${d}d ${hr % 24}h` : `${d}d`;
}

// fmtRelative says when iso is from now (the server's): "in 4m 59s",
// "due now", "3m ago".
export function fmtRelative(iso, now) {
  if (!iso || !now) return '';
  const ms = new Date(iso) - new Date(now);
  if (Math.abs(ms) < 1000) return 'due now';
  return ms > 0 ? `in ${fmtSpan(ms)}` : `${fmtSpan(ms)} ago`;
}

// fmtDuration shows a duration given in nanoseconds.
export function fmtDuration(ns) {
  const ms = ns / 1e6;
  if (ms < 1) return '<1 ms';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  return `${(ms / 1000).toFixed(ms < 10000 ? 2 : 1)} s`;
}

export function fmtBytes(n) {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(n < 10240 ? 1 : 0)} KiB`;
  return `${(n / 1048576).toFixed(1)} MiB`;
}

export const fmtCount = n => (n == null ? '' : Number(n).toLocaleString('en-US'));

// shortId keeps an id's prefix and its last characters: "dlv_…k3f9a2".
export function shortId(id) {
  if (!id || id.length <= 14) return id || '';
  const us = id.indexOf('_');
  return id.slice(0, us + 1) + '…' + id.slice(-6);
}

// prettyJSON indents a JSON value for a <pre>, or gives the text as it is
// when it is not JSON.
export function prettyJSON(v) {
  if (typeof v === 'string') {
    try { return JSON.stringify(JSON.parse(v), null, 2); } catch { return v; }
  }
  return JSON.stringify(v, null, 2);
}

// throttle runs fn at most once per ms, at the end of the period in which
// it was asked for, and never twice at once: a burst of changes makes one
// refresh, not one each.
export function throttle(fn, ms) {
  let timer = null, running = false, again = false, last = 0;
  const run = async () => {
    timer = null;
    if (running) { again = true; return; }
    running = true;
    last = Date.now();
    try { await fn(); } finally {
      running = false;
      if (again) { again = false; schedule(); }
    }
  };
  const schedule = () => {
    if (timer) return;
    timer = setTimeout(run, Math.max(0, last + ms - Date.now()));
  };
  return schedule;
}
