// The namespaces: each with its description, metadata, a link to its
// jobs (the jobs page filtered to it) and to its own timeline.
import { html, useWatch, Link, Loading, Table } from '../ui.js';

/** /namespaces: GET /v1/namespaces, live. */
export function NamespacesPage() {
  const list = useWatch('/v1/namespaces');
  return html`<h1>Namespaces</h1>
    <${Loading} state=${list} />
    ${list.data && html`<${Table} label="namespaces" rows=${list.data} rowKey=${(n) => n.Name} empty="No namespaces." columns=${[
      ['Name', (n) => html`<${Link} to="/jobs" params=${{ namespace: n.Name }} aria-label=${'jobs in namespace ' + n.Name}>${n.Name}<//>`],
      ['Description', (n) => n.Description],
      ['Metadata', (n) => Object.entries(n.Meta || {}).map(([k, v]) => k + '=' + v).join(', ')],
      ['Node pool', (n) => (n.NodePoolConfiguration && n.NodePoolConfiguration.Default) || ''],
      ['Modified at', (n) => n.ModifyIndex],
      ['History', (n) => html`<${Link} to=${'/history/namespace/' + encodeURIComponent(n.Name)} aria-label=${'timeline of namespace ' + n.Name}>timeline<//>`],
    ]} />`}`;
}
NamespacesPage.title = 'Namespaces';
