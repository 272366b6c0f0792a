// The launcher: providers (their pause, usage and quota), the node
// requests and the instances providers launched for them, all live.
import { html, useWatch, usePagedList, Link, Loading, Table, Status, shortId } from '../ui.js';

function usage(u) { return u ? u.Servers + ' servers, ' + u.Cores + ' cores, ' + u.RAMMB + ' MB' : ''; }

function hist(kind, id, text) {
  return html`<${Link} to=${'/history/' + kind + '/' + encodeURIComponent(id)} title=${kind + ' ' + id}
    aria-label=${'timeline of ' + kind.replace('_', ' ') + ' ' + id}>${text || id}<//>`;
}

/** /launcher: GET /v1/providers, /v1/node-requests and /v1/instances. */
export function LauncherPage() {
  const providers = useWatch('/v1/providers');
  const { state: requests, controls: requestFilter, pager: requestPager } = usePagedList('/v1/node-requests', {}, 'node requests');
  const { state: instances, controls: instanceFilter, pager: instancePager } = usePagedList('/v1/instances', {}, 'instances');
  return html`<h1>Launcher</h1>
    <h2>Providers</h2>
    <${Loading} state=${providers} />
    ${providers.data && html`<${Table} label="providers" rows=${providers.data} rowKey=${(p) => p.Name}
      empty="No providers. Apply one with: ordo provider apply docs/examples/providers/cheap-cloud.hcl" columns=${[
        ['Name', (p) => hist('provider', p.Name)],
        ['Driver', (p) => p.Config && p.Config.Driver],
        ['Priority', (p) => p.Config && p.Config.Priority],
        ['Generation', (p) => p.ConfigIndex],
        ['State', (p) => html`<${Status} value=${p.Paused ? 'paused' : 'running'} />${p.Paused ? ' ' + (p.PauseReason || '') + (p.PausedRequest ? ' (request ' + shortId(p.PausedRequest) + ')' : '') : ''}`],
        ['Errored labels', (p) => Object.entries(p.ErroredLabels || {}).map(([l, why]) => l + ': ' + why).join('; ')],
        ['Used', (p) => usage(p.Used)],
        ['Free', (p) => (p.Free ? usage(p.Free) : 'no quota')],
        ['Instances', (p) => Object.entries(p.States || {}).map(([s, n]) => s + ' ' + n).join(', ')],
      ]} />`}
    <h2>Node requests</h2>
    <div class="toolbar">${requestFilter}</div>
    <${Loading} state=${requests} />
    ${requests.data && html`<${Table} label="node requests" rows=${requests.data} rowKey=${(r) => r.ID} empty="No node requests." columns=${[
      ['ID', (r) => hist('node_request', r.ID, shortId(r.ID))],
      ['Labels', (r) => (r.Labels || []).join(', ')],
      ['State', (r) => html`<${Status} value=${r.State} />`],
      ['Requestor', (r) => r.Requestor], ['Tenant', (r) => r.Tenant], ['Priority', (r) => r.RelativePriority],
      ['Provider', (r) => r.Provider ? r.Provider + (r.Pool ? ' / ' + r.Pool : '') : ''],
      ['Instances', (r) => (r.Instances || []).map((i) => shortId(i)).join(', ')],
      ['Declined by', (r) => (r.DeclinedBy || []).map((d) => d.Provider + (d.Reason ? ' (' + d.Reason + ')' : '')).join('; ')],
      ['Reason', (r) => r.Reason],
    ]} />`}
    ${requestPager}
    <h2>Instances</h2>
    <div class="toolbar">${instanceFilter}</div>
    <${Loading} state=${instances} />
    ${instances.data && html`<${Table} label="instances" rows=${instances.data} rowKey=${(i) => i.ID} empty="No instances." columns=${[
      ['ID', (i) => hist('instance', i.ID, shortId(i.ID))],
      ['Provider', (i) => i.Provider + ' / ' + i.Pool], ['Label', (i) => i.Label],
      ['Type', (i) => [i.InstanceType, i.Cores ? i.Cores + ' cores' : '', i.RAMMB ? i.RAMMB + ' MB' : ''].filter(Boolean).join(', ')],
      ['State', (i) => html`<${Status} value=${i.State} />`],
      ['Request', (i) => i.RequestID ? shortId(i.RequestID) : ''], ['Tenant', (i) => i.Tenant],
      ['Addresses', (i) => (i.Addresses || []).join(', ')], ['Reason', (i) => i.Reason],
    ]} />`}
    ${instancePager}`;
}
LauncherPage.title = 'Launcher';
