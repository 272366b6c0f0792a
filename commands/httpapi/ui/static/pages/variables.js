// Variables: the list shows paths and metadata only, never values; a
// variable's page shows its values only once asked ("Show values"), and a
// token that may not read them is told so.
import { html, useState, useEffect, useWatch, usePagedList, Link, Loading, ErrorBox, Table, Facts, api, when } from '../ui.js';

function nsParam() {
  return new URLSearchParams(location.search).get('namespace') || 'default';
}

function varPath(path) { return '/variables/' + String(path).split('/').map(encodeURIComponent).join('/'); }

/** /variables: GET /v1/vars across namespaces, by prefix, live. */
export function VariablesPage() {
  const [prefix, setPrefix] = useState('');
  const { state, controls, pager } = usePagedList('/v1/vars', { namespace: '*', prefix });
  return html`<h1>Variables</h1>
    <div class="toolbar">
      <label>Path prefix <input type="search" value=${prefix} onInput=${(e) => setPrefix(e.target.value)} /></label>
      ${controls}
    </div>
    <${Loading} state=${state} />
    ${state.data && html`<${Table} label="variables" rows=${state.data} rowKey=${(v) => v.Namespace + '/' + v.Path}
      empty="No variables." columns=${[
        ['Path', (v) => html`<${Link} to=${varPath(v.Path)} params=${{ namespace: v.Namespace }}>${v.Path}<//>`],
        ['Namespace', (v) => v.Namespace],
        ['Modified', (v) => when(v.ModifyTime)],
        ['Modify index', (v) => v.ModifyIndex],
      ]} />`}
    ${pager}`;
}
VariablesPage.title = 'Variables';

/** /variables/<path>?namespace=: metadata, and values on request. */
export function VariablePage({ path }) {
  const namespace = nsParam();
  const list = useWatch('/v1/vars', { namespace, prefix: path });
  const meta = (list.data || []).find((v) => v.Path === path);
  const [show, setShow] = useState(false);
  const [values, setValues] = useState({ data: null, error: null });
  const modified = meta ? meta.ModifyIndex : 0;
  useEffect(() => {
    if (!show) { setValues({ data: null, error: null }); return undefined; }
    const ctl = new AbortController();
    api.get('/v1/var/' + String(path).split('/').map(encodeURIComponent).join('/'), { namespace }, { signal: ctl.signal })
      .then((a) => setValues({ data: a.data, error: null }))
      .catch((e) => { if (!ctl.signal.aborted) setValues({ data: null, error: e }); });
    return () => ctl.abort();
  }, [show, modified]);
  return html`<nav class="crumbs" aria-label="breadcrumb"><${Link} to="/variables">Variables<//> / ${namespace} /</nav>
    <h1>${path}</h1>
    <${Loading} state=${list} />
    ${list.data && !meta && html`<p class="empty">No variable ${path} in namespace ${namespace}${api.atIndex() ? ' at this index' : ''}.</p>`}
    ${meta && html`<${Facts} items=${[
      ['Namespace', meta.Namespace], ['Created', when(meta.CreateTime)], ['Modified', when(meta.ModifyTime)],
      ['Create index', meta.CreateIndex], ['Modify index', meta.ModifyIndex],
    ]} />
    <div class="toolbar">
      <button type="button" aria-pressed=${show} onClick=${() => setShow(!show)}>${show ? 'Hide values' : 'Show values'}</button>
    </div>
    ${show && values.error && html`<${ErrorBox} error=${values.error} />`}
    ${show && values.data && html`<${Table} label="values" rows=${Object.entries(values.data.Items || {})} rowKey=${([k]) => k}
      empty="No items." columns=${[['Key', ([k]) => html`<code>${k}</code>`], ['Value', ([, v]) => html`<code class="secret">${v}</code>`]]} />`}`}`;
}
VariablePage.title = 'Variable';
