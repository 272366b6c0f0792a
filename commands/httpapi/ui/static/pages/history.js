// An entity's own timeline: every event that touched it (GET
// /v1/history/<kind>/<id>; a job's with its evals, allocations and
// deployments), each with its summary and the fields it changed, a link
// to the cluster as it stood at that index and to the entity's page.
import { html, useState, useWatch, Link, Loading, ErrorBox, jobPath, shortId, href } from '../ui.js';

/** The entity kinds the history API knows (projections/history Kinds). */
export const historyKinds = new Set(['alloc', 'component', 'deployment', 'eval', 'instance', 'job', 'namespace',
  'node', 'node_request', 'plugin', 'provider', 'server', 'service', 'tenant', 'volume']);

/**
 * The UI page of an entity, or '' when it has none: a job's needs its
 * namespace (ns).
 */
export function entityPath(kind, id, ns) {
  switch (kind) {
    case 'job': return jobPath(id, ns);
    case 'alloc': return '/allocations/' + encodeURIComponent(id);
    case 'node': return '/clients/' + encodeURIComponent(id);
    case 'eval': return '/evaluations/' + encodeURIComponent(id);
    case 'deployment': return '/deployments/' + encodeURIComponent(id);
    case 'variable': return '/variables/' + String(id).split('/').map(encodeURIComponent).join('/');
    case 'volume': return '/csi/volumes/' + encodeURIComponent(id);
    case 'namespace': return '/jobs';
    case 'provider': case 'node_request': case 'instance': case 'tenant': return '/launcher';
    case 'server': return '/operator';
    default: return '';
  }
}

/** Query parameters an entity's page needs beside its path (a namespace). */
export function entityParams(kind, id, ns) {
  if (kind === 'namespace') return { namespace: id };
  if ((kind === 'variable' || kind === 'volume') && ns) return { namespace: ns };
  return undefined;
}

/** The UI path of an entity's timeline ('' for a kind the history API lacks). */
export function historyPath(kind, id, ns) {
  if (!historyKinds.has(kind)) return '';
  const hid = kind === 'job' ? (ns || 'default') + '/' + id : id;
  return '/history/' + kind + '/' + encodeURIComponent(hid);
}

/** An entity named short: "alloc 1a2b3c4d", "job web". */
export function entityLabel(kind, id) {
  const long = /^[0-9a-f]{8}-[0-9a-f]{4}-/i.test(id);
  return kind + ' ' + (long ? shortId(id) : id);
}

// The API path and params for an entity's history: a job by its id and
// ?namespace= (so a job id with slashes stays whole).
function apiPath(kind, id) {
  if (kind === 'job') {
    const slash = id.indexOf('/');
    const ns = slash < 0 ? 'default' : id.slice(0, slash);
    const jid = slash < 0 ? id : id.slice(slash + 1);
    return { path: '/v1/history/job/' + encodeURIComponent(jid), params: { namespace: ns, related: true }, ns, jid };
  }
  return { path: '/v1/history/' + encodeURIComponent(kind) + '/' + encodeURIComponent(id), params: {}, ns: '', jid: id };
}

/** /history/<kind>/<id>: the entity's timeline, live. */
export function HistoryPage({ kind, id }) {
  const [reverse, setReverse] = useState(false);
  const [tokens, setTokens] = useState(['']);
  const a = apiPath(kind, id);
  const state = useWatch(a.path, { ...a.params, reverse: reverse || undefined, next_token: tokens[tokens.length - 1] });
  const own = entityPath(kind, a.jid, a.ns);
  const notFound = state.error && state.error.status === 404;
  const rows = state.data || [];
  return html`<nav class="crumbs" aria-label="breadcrumb">History / ${kind} /</nav>
    <h1>History of ${kind} ${id}</h1>
    <div class="toolbar">
      ${own && html`<${Link} to=${own} params=${entityParams(kind, a.jid, a.ns)}>${kind === 'namespace' ? 'Jobs in namespace ' + id : 'The ' + kind + "'s page"}<//>`}
      <label><input type="checkbox" checked=${reverse}
        onChange=${(e) => { setReverse(e.target.checked); setTokens(['']); }} /> Newest first</label>
      <${Link} to="/timeline">Whole timeline<//>
    </div>
    ${notFound
      ? html`<p class="empty" role="status">No event ever touched ${kind} ${id}.</p>`
      : state.error ? html`<${ErrorBox} error=${state.error} />` : html`<${Loading} state=${state} />`}
    ${state.data && (rows.length === 0
      ? html`<p class="empty">No events in this window.</p>`
      : html`<table class="history" aria-label=${'history of ' + kind + ' ' + id}>
        <thead><tr>
          <th scope="col">Index</th><th scope="col">Time</th>${kind === 'job' && html`<th scope="col">Entity</th>`}
          <th scope="col">Type</th><th scope="col">Actor</th><th scope="col">Summary</th><th scope="col">View</th>
        </tr></thead>
        ${rows.map((ev) => html`<${HistoryLine} key=${ev.Index + '.' + ev.Seq + '.' + (ev.EntityKind || '') + (ev.EntityID || '')}
          ev=${ev} kind=${kind} a=${a} showEntity=${kind === 'job'} />`)}
      </table>`)}
    <nav class="pager" aria-label="pages">
      <button type="button" disabled=${tokens.length < 2} onClick=${() => setTokens(tokens.slice(0, -1))}>Previous page</button>
      <span>page ${tokens.length}</span>
      <button type="button" disabled=${!state.nextToken} onClick=${() => setTokens([...tokens, state.nextToken])}>Next page</button>
    </nav>`;
}
HistoryPage.title = 'History';

function HistoryLine({ ev, kind, a, showEntity }) {
  // A related line names its own entity; else the line is the page's.
  const ek = ev.EntityKind || kind;
  const eid = ev.EntityID || a.jid;
  const ejob = ek === 'job';
  const page = entityPath(ek, ejob ? a.jid : eid, a.ns);
  const params = entityParams(ek, eid, a.ns);
  const atHref = page ? '/ui' + page + '?' + new URLSearchParams({ ...(params || {}), at_index: String(ev.Index) }) : '';
  const changes = ev.Changes || [];
  const cols = showEntity ? 7 : 6;
  return html`<tbody class="hline">
    <tr>
      <td>${ev.Index}</td>
      <td title=${ev.Time}>${new Date(ev.Time).toLocaleString()}</td>
      ${showEntity && html`<td>${ejob ? 'job' : html`<${Link} to=${historyPath(ek, eid)} title=${ek + ' ' + eid}>${entityLabel(ek, eid)}<//>`}</td>`}
      <td>${ev.Type}</td>
      <td>${ev.Actor}</td>
      <td>${ev.Summary}</td>
      <td class="nowrap">
        ${atHref && html`<a href=${atHref} aria-label=${'view ' + ek + ' ' + eid + ' at index ' + ev.Index}>at ${ev.Index}</a>`}
        ${' '}<a href=${'/ui/jobs?at_index=' + ev.Index} aria-label=${'view the cluster at index ' + ev.Index}>cluster</a>
        ${page && html` <a href=${href(page, params)} aria-label=${'page of ' + ek + ' ' + eid}>${ek}</a>`}
      </td>
    </tr>
    ${changes.length > 0 && html`<tr class="changes"><td></td><td colspan=${cols - 1}>
      <ul>${changes.map((c) => html`<li><code>${c.Field}</code>: ${c.Old === '' ? '(none)' : c.Old} → ${c.New === '' ? '(none)' : c.New}</li>`)}</ul>
    </td></tr>`}
  </tbody>`;
}
