// What every page is built from: preact with htm's tagged templates, the
// hooks that read the API (live through blocking queries, or once at the
// slider's index), links that keep the slider's index, and the common
// pieces (tables, filters, pagers, errors, buttons that write).
import { h, render } from './vendor/preact.mjs';
import { useState, useEffect, useRef, useCallback, useMemo } from './vendor/preact-hooks.mjs';
import htm from './vendor/htm.mjs';
import * as api from './api.js';

export const html = htm.bind(h);
export { h, render, useState, useEffect, useRef, useCallback, useMemo, api };

/** Re-renders the caller when the slider moves; returns its index (0: live). */
export function useAtIndex() {
  const [index, setIndex] = useState(api.atIndex());
  useEffect(() => api.onAtIndex(setIndex), []);
  return index;
}

/**
 * Reads path with params, live (a blocking query: every change shows
 * without a reload) or at the slider's index. Returns {data, error,
 * index, loading}. Pass path null to read nothing.
 */
export function useWatch(path, params) {
  const at = useAtIndex();
  const key = path === null ? '' : path + api.query(params) + '@' + at;
  const [state, setState] = useState({ data: undefined, error: null, index: 0, loading: true });
  useEffect(() => {
    if (path === null) return undefined;
    setState((s) => ({ ...s, loading: true, error: null }));
    const ctl = new AbortController();
    api.watch(path, params || {},
      (a) => setState({ data: a.data, error: null, index: a.index, nextToken: a.nextToken, loading: false }),
      (e) => setState((s) => ({ ...s, error: e, loading: false })),
      ctl.signal);
    return () => ctl.abort();
  }, [key]);
  return state;
}

/**
 * Reads path once, again when the slider, the params or again (a value
 * the caller changes to read anew, never sent) change.
 */
export function useRead(path, params, again) {
  const at = useAtIndex();
  const key = path === null ? '' : path + api.query(params) + '@' + at + '#' + (again || '');
  const [state, setState] = useState({ data: undefined, error: null, loading: true });
  useEffect(() => {
    if (path === null) return undefined;
    const ctl = new AbortController();
    setState((s) => ({ ...s, loading: true }));
    api.get(path, params, { signal: ctl.signal })
      .then((a) => setState({ data: a.data, error: null, loading: false, index: a.index }))
      .catch((e) => { if (!ctl.signal.aborted) setState({ data: undefined, error: e, loading: false }); });
    return () => ctl.abort();
  }, [key]);
  return state;
}

/** The UI's own URL for path, carrying the slider's index. */
export function href(path, params) {
  const q = { ...params };
  if (api.atIndex()) q.at_index = api.atIndex();
  return '/ui' + path + api.query(q);
}

/** Moves the app to a UI URL without a reload. */
export function navigate(url, replace) {
  if (replace) history.replaceState(null, '', url);
  else history.pushState(null, '', url);
  dispatchEvent(new PopStateEvent('popstate'));
}

/** A link inside the UI, keeping the slider's index. */
export function Link({ to, params, children, ...rest }) {
  useAtIndex();
  return html`<a href=${href(to, params)} ...${rest}>${children}</a>`;
}

/** The id shown short, as Nomad's UI does, with the whole id on hover. */
export function shortId(id) { return id ? String(id).slice(0, 8) : ''; }

/** A job's UI path: /jobs/<id>@<namespace>. */
export function jobPath(id, namespace) {
  return '/jobs/' + encodeURIComponent(id) + '@' + encodeURIComponent(namespace || 'default');
}

/** A time as local time, with how long ago. */
export function when(t) {
  if (!t) return '';
  const d = typeof t === 'number' ? new Date(t > 1e14 ? t / 1e6 : t) : new Date(t);
  if (isNaN(d) || d.getFullYear() < 1971) return '';
  return d.toLocaleString() + ' (' + ago(d) + ')';
}

/** How long ago d was, in words. */
export function ago(d) {
  const s = Math.round((Date.now() - d.getTime()) / 1000);
  if (s < 0) return 'in the future';
  if (s < 60) return s + 's ago';
  if (s < 3600) return Math.floor(s / 60) + 'm ago';
  if (s < 86400) return Math.floor(s / 3600) + 'h ' + Math.floor((s % 3600) / 60) + 'm ago';
  return Math.floor(s / 86400) + 'd ago';
}

/** A status as a coloured badge. */
export function Status({ value }) {
  return html`<span class=${'status status-' + String(value || 'unknown').replace(/[^a-z-]/gi, '')}>${value || 'unknown'}</span>`;
}

/** An error answer, worded for a person: a denied read says so plainly. */
export function ErrorBox({ error }) {
  if (!error) return null;
  if (error.denied) {
    return html`<div class="error denied" role="alert">
      <strong>Not authorized.</strong> Your token cannot read this (${error.message}).
      Set a token with the rights it needs in <${Link} to="/settings/tokens">ACL tokens<//>.
    </div>`;
  }
  return html`<div class="error" role="alert"><strong>Error ${error.status || ''}</strong> ${error.message}</div>`;
}

/** A page's loading line, or its error. */
export function Loading({ state }) {
  if (state.error) return html`<${ErrorBox} error=${state.error} />`;
  if (state.loading && state.data === undefined) return html`<p class="loading" aria-live="polite">Loading…</p>`;
  return null;
}

/**
 * A button that writes: disabled (and saying why) while the UI shows the
 * past; shows the write's error beside it.
 */
export function WriteButton({ onClick, children, confirm: ask, danger, label }) {
  const at = useAtIndex();
  const [err, setErr] = useState(null);
  const [busy, setBusy] = useState(false);
  const run = async () => {
    if (ask && !window.confirm(ask)) return;
    setBusy(true);
    setErr(null);
    try { await onClick(); } catch (e) { setErr(e); } finally { setBusy(false); }
  };
  return html`<span class="write">
    <button type="button" class=${danger ? 'danger' : ''} disabled=${!!at || busy} onClick=${run}
      aria-label=${label || undefined}
      title=${at ? 'Writes are disabled while the UI shows a past state' : ''}>${children}</button>
    ${err && html`<${ErrorBox} error=${err} />`}
  </span>`;
}

/**
 * A table of rows: columns are [heading, row => cell]. Empty lists say
 * what is empty.
 */
export function Table({ columns, rows, empty, label, rowKey }) {
  if (!rows || rows.length === 0) return html`<p class="empty">${empty || 'Nothing here.'}</p>`;
  return html`<table aria-label=${label}>
    <thead><tr>${columns.map(([name]) => html`<th scope="col">${name}</th>`)}</tr></thead>
    <tbody>${rows.map((r, i) => html`<tr key=${rowKey ? rowKey(r) : i}>${columns.map(([, cell]) => html`<td>${cell(r)}</td>`)}</tr>`)}</tbody>
  </table>`;
}

/**
 * A list read from the API as its pages are: a filter expression (the
 * API's filter), a prefix, per_page and next_token. Live at the head.
 */
export function usePagedList(path, extra, what) {
  const [filter, setFilter] = useState('');
  const [applied, setApplied] = useState('');
  const [tokens, setTokens] = useState(['']);
  const perPage = 25;
  const state = useWatch(path, { ...extra, filter: applied, per_page: perPage, next_token: tokens[tokens.length - 1] });
  // what names the list when a page has several ("node requests").
  const controls = html`<form class="filter" onSubmit=${(e) => { e.preventDefault(); setApplied(filter); setTokens(['']); }}>
      <label>${what ? 'Filter ' + what : 'Filter'} <input type="search" value=${filter} placeholder='e.g. Status == "running"'
        onInput=${(e) => setFilter(e.target.value)} /></label>
      <button type="submit">Apply</button>
    </form>`;
  const pager = html`<nav class="pager" aria-label=${what ? 'pages of ' + what : 'pages'}>
      <button type="button" disabled=${tokens.length < 2} onClick=${() => setTokens(tokens.slice(0, -1))}>Previous page</button>
      <span>page ${tokens.length}</span>
      <button type="button" disabled=${!state.nextToken} onClick=${() => setTokens([...tokens, state.nextToken])}>Next page</button>
    </nav>`;
  return { state, controls, pager };
}

/** A definition list of [term, value] pairs. */
export function Facts({ items }) {
  return html`<dl class="facts">${items.filter(Boolean).map(([k, v]) => html`<dt>${k}</dt><dd>${v === undefined || v === null || v === '' ? '—' : v}</dd>`)}</dl>`;
}

/** Pretty JSON in a collapsible block. */
export function Json({ value, summary, open }) {
  return html`<details open=${open}><summary>${summary || 'JSON'}</summary><pre class="json">${JSON.stringify(value, null, 2)}</pre></details>`;
}

// How many namespaces a picker offers as suggestions; any other is typed.
const pickerNamespaces = 200;
let pickerList = 0;

/**
 * A namespace chooser that stays cheap with thousands of namespaces: a
 * text field suggesting the first namespaces (the API's first page),
 * where any other is typed. value "" is every namespace; onChange gets
 * the chosen name, or "" for all, when the field is committed.
 */
export function NamespacePicker({ value, onChange }) {
  const [id] = useState(() => 'ns-list-' + (++pickerList));
  const [text, setText] = useState(value);
  useEffect(() => setText(value), [value]);
  const list = useRead('/v1/namespaces', { per_page: pickerNamespaces });
  const commit = (v) => { const name = v.trim(); if (name !== value) onChange(name); };
  return html`<label>Namespace <input type="search" list=${id} value=${text} placeholder="all" size="14"
      onInput=${(e) => setText(e.target.value)} onChange=${(e) => commit(e.target.value)}
      onKeyDown=${(e) => { if (e.key === 'Enter') { e.preventDefault(); commit(e.target.value); } }} />
    <datalist id=${id}>${(list.data || []).map((n) => html`<option value=${n.Name} />`)}</datalist></label>`;
}
