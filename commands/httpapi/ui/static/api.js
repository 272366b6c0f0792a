// The UI's one client of ordo's public HTTP API (docs/api.md): reads at
// the moment the time slider names, blocking queries, the ndjson event
// streams, and writes that are refused while the UI shows the past.

/**
 * An answer the API refused, with the status and the server's message
 * (which names the field at fault).
 */
export class ApiError extends Error {
  /** @param {number} status @param {string} message @param {string} path */
  constructor(status, message, path) {
    super(message);
    this.status = status;
    this.path = path;
  }
  /** True when the token cannot read or do this (401, 403). */
  get denied() { return this.status === 401 || this.status === 403; }
}

const tokenKey = 'ordo.token';

/** The ACL token, kept in the browser's session storage. */
export function token() { return sessionStorage.getItem(tokenKey) || ''; }

/** Sets (or with '' clears) the ACL token. */
export function setToken(secret) {
  if (secret) sessionStorage.setItem(tokenKey, secret);
  else sessionStorage.removeItem(tokenKey);
}

/**
 * The moment every read is made at: null for the live state, or
 * {index} for the state once that raft index was applied.
 * @type {{index: number} | null}
 */
let at = null;
const atListeners = new Set();

/** The index the UI reads at, 0 when it shows the live state. */
export function atIndex() { return at ? at.index : 0; }

/** Moves every read to index (0: back to the live state). */
export function setAtIndex(index) {
  const next = index > 0 ? { index } : null;
  if ((next && next.index) === (at && at.index)) return;
  at = next;
  for (const f of atListeners) f(atIndex());
}

/** Calls f with the new index whenever setAtIndex changes it. */
export function onAtIndex(f) {
  atListeners.add(f);
  return () => atListeners.delete(f);
}

/** Builds a query string from params, dropping empty values. */
export function query(params) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params || {})) {
    if (v === undefined || v === null || v === '') continue;
    if (Array.isArray(v)) v.forEach((x) => q.append(k, String(x)));
    else q.set(k, String(v));
  }
  const s = q.toString();
  return s ? '?' + s : '';
}

// Leaving the page ends every read it holds open. Browsers give a host
// six HTTP/1.1 connections; the page's blocking queries and streams
// would otherwise keep them while the next document (a reload, a typed
// URL) waits for one.
const leaving = new AbortController();
addEventListener('beforeunload', () => leaving.abort());
addEventListener('pagehide', () => leaving.abort());

/** signal, ended also when the page is left. */
function untilLeft(signal) {
  return signal ? AbortSignal.any([signal, leaving.signal]) : leaving.signal;
}

function headers(extra) {
  const h = { ...extra };
  const t = token();
  if (t) h['X-Nomad-Token'] = t;
  return h;
}

async function failure(res, path) {
  let msg = (await res.text()).trim();
  try {
    const j = JSON.parse(msg);
    msg = j.Error || j.error || j.message || msg;
  } catch (_) { /* plain text */ }
  return new ApiError(res.status, msg || res.statusText, path);
}

/**
 * One answer: the decoded body, the X-Nomad-Index and X-Nomad-NextToken.
 * @typedef {{data: any, index: number, nextToken: string}} Answer
 */

/**
 * GET path with params, at the slider's index unless live is set or the
 * params block (index).
 * @param {string} path @param {Record<string, any>=} params
 * @param {{signal?: AbortSignal, live?: boolean}=} opts
 * @returns {Promise<Answer>}
 */
export async function get(path, params, opts = {}) {
  const p = { ...params };
  if (at && !opts.live && p.index === undefined) p.at_index = at.index;
  const res = await fetch(path + query(p), { headers: headers(), signal: untilLeft(opts.signal) });
  if (!res.ok) throw await failure(res, path);
  const type = res.headers.get('Content-Type') || '';
  const data = type.includes('json') ? await res.json() : await res.text();
  return {
    data,
    index: Number(res.headers.get('X-Ordo-At-Index') || res.headers.get('X-Nomad-Index') || 0),
    nextToken: res.headers.get('X-Nomad-NextToken') || '',
  };
}

/** The error a write gets while the UI shows the past. */
export const pastIsReadOnly = new ApiError(400, 'writes are disabled while the UI shows a past state: go back to live first', '');

/**
 * A write (POST, PUT, DELETE); its answer describes that write.
 * @param {string} method @param {string} path @param {any=} body
 * @param {Record<string, any>=} params
 */
export async function write(method, path, body, params) {
  if (at) throw pastIsReadOnly;
  const init = { method, headers: headers(body === undefined ? {} : { 'Content-Type': 'application/json' }) };
  if (body !== undefined) init.body = JSON.stringify(body);
  const res = await fetch(path + query(params), init);
  if (!res.ok) throw await failure(res, path);
  const text = await res.text();
  return text ? JSON.parse(text) : null;
}

/**
 * Follows a blocking query: calls onAnswer with each new answer until
 * signal aborts; at a past index it reads once. Errors go to onError and
 * the watch retries after a pause that grows to 10 s.
 * @param {string} path @param {Record<string, any>} params
 * @param {(a: Answer) => void} onAnswer @param {(e: Error) => void} onError
 * @param {AbortSignal} signal
 */
export async function watch(path, params, onAnswer, onError, signal) {
  if (at) {
    try { onAnswer(await get(path, params, { signal })); } catch (e) { if (!signal.aborted) onError(e); }
    return;
  }
  let index = 0;
  let pause = 500;
  while (!signal.aborted) {
    try {
      const p = index ? { ...params, index, wait: '60s' } : params;
      const a = await get(path, p, { signal, live: true });
      pause = 500;
      if (a.index !== index || !index) onAnswer(a);
      // An index that went backwards (a new leader, a restored snapshot)
      // starts over rather than waiting for it to pass the old one.
      index = a.index < index ? 0 : a.index;
    } catch (e) {
      if (signal.aborted) return;
      onError(e);
      await new Promise((r) => setTimeout(r, pause));
      pause = Math.min(pause * 2, 10000);
    }
  }
}

/** GETs path live, as a response whose body the caller reads; refused answers throw. */
async function opened(path, params, signal) {
  const res = await fetch(path + query(params), { headers: headers(), signal: untilLeft(signal) });
  if (!res.ok) throw await failure(res, path);
  return res;
}

/**
 * Reads an ndjson stream (the event streams, a followed log), calling
 * onLine with each decoded line until signal aborts or the stream ends.
 * @param {string} path @param {Record<string, any>} params
 * @param {(line: any) => void} onLine @param {AbortSignal} signal
 */
export async function stream(path, params, onLine, signal) {
  const res = await opened(path, params, signal);
  const reader = res.body.getReader();
  const dec = new TextDecoder();
  let buf = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buf += dec.decode(value, { stream: true });
    let nl;
    while ((nl = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, nl).trim();
      buf = buf.slice(nl + 1);
      if (line && line !== '{}') onLine(JSON.parse(line));
    }
  }
}

/**
 * Reads a byte stream (a task's log followed), calling onText with each
 * decoded chunk until signal aborts or the stream ends.
 */
export async function streamText(path, params, onText, signal) {
  const res = await opened(path, params, signal);
  const reader = res.body.getReader();
  const dec = new TextDecoder();
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    onText(dec.decode(value, { stream: true }));
  }
}

/**
 * The first archived entry at or after index: {Index, Time} of its first
 * event, or null past the end. The slider's banner reads an index's time
 * from it.
 */
export async function entryAt(index) {
  const a = await get('/v1/operator/log', { from: Math.max(1, index), limit: 1 }, { live: true });
  const ev = a.data.Events[0];
  return ev ? { Index: ev.Index, Time: ev.Time, LastIndex: a.data.LastIndex } : null;
}

/** The newest archived index, and how many events the archive holds. */
export async function lastIndex() {
  const a = await get('/v1/operator/log', { from: 1 << 30, limit: 1 }, { live: true });
  return { LastIndex: a.data.LastIndex, Length: a.data.Length };
}

/** The index a time resolves to (the last entry at or before it), 0 before the first. */
export async function indexAtTime(iso) {
  return (await get('/v1/namespaces', { at_time: iso }, { live: true })).index;
}

/**
 * The archived entry before index: its index, or 0 when index is the
 * first. Log indexes are not contiguous (raft's own entries hold no
 * events), so it reads back a window at a time.
 */
export async function entryBefore(index) {
  for (let span = 64; ; span *= 8) {
    const from = Math.max(1, index - span);
    const a = await get('/v1/operator/log', { from, limit: Math.min(10000, span) }, { live: true });
    const before = a.data.Events.filter((e) => e.Index < index);
    if (before.length) return before[before.length - 1].Index;
    if (from === 1) return 0;
  }
}

/**
 * Downloads path's answer (binary: a snapshot) as a file named filename:
 * fetched with the token, saved through an object URL.
 */
export async function download(path, filename, params) {
  const res = await opened(path, params);
  const url = URL.createObjectURL(await res.blob());
  try {
    const a = document.createElement('a');
    a.href = url;
    a.download = filename;
    document.body.appendChild(a);
    a.click();
    a.remove();
  } finally {
    setTimeout(() => URL.revokeObjectURL(url), 10000);
  }
}
