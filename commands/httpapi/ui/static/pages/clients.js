// The clients pages: every node with its status, eligibility and drain,
// and one node with its drivers, resources, attributes and allocations,
// where it can be drained and marked (in)eligible.
import {
  html, useState, useWatch, usePagedList, Link, Loading, Status, Table, Facts, WriteButton, shortId, when, api,
} from '../ui.js';
import { AllocTable } from './jobs.js';

function healthyDrivers(n) {
  return Object.entries(n.Drivers || {}).filter(([, d]) => d.Detected && d.Healthy).map(([k]) => k).sort().join(', ');
}

/** GET /v1/nodes, live, filtered and paged. */
export function ClientsPage() {
  const { state, controls, pager } = usePagedList('/v1/nodes', {});
  return html`<h1>Clients</h1>
    <div class="toolbar">${controls}</div>
    <${Loading} state=${state} />
    ${state.data && html`<${Table} label="clients" rows=${state.data} rowKey=${(n) => n.ID}
      empty="No clients. Start one with: ordo agent -client -servers <address>" columns=${[
        ['ID', (n) => html`<${Link} to=${'/clients/' + n.ID} title=${n.ID}>${shortId(n.ID)}<//>`],
        ['Name', (n) => html`<${Link} to=${'/clients/' + n.ID}>${n.Name}<//>`],
        ['Address', (n) => n.Address],
        ['Datacenter', (n) => n.Datacenter],
        ['Class', (n) => n.NodeClass || '—'],
        ['Pool', (n) => n.NodePool],
        ['Status', (n) => html`<${Status} value=${n.Status} />`],
        ['Eligibility', (n) => n.SchedulingEligibility],
        ['Drain', (n) => (n.Drain ? html`<${Status} value="draining" />` : 'no')],
        ['Drivers', (n) => healthyDrivers(n)],
      ]} />`}
    ${pager}`;
}
ClientsPage.title = 'Clients';

/** Parses "1h30m", "90s", "2h" into nanoseconds; NaN when it is not a duration. */
export function parseDuration(s) {
  const re = /(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h)/g;
  const unit = { ns: 1, us: 1e3, 'µs': 1e3, ms: 1e6, s: 1e9, m: 60e9, h: 3600e9 };
  const t = String(s).trim();
  if (!t) return NaN;
  let total = 0;
  let used = 0;
  for (const m of t.matchAll(re)) {
    total += Number(m[1]) * unit[m[2]];
    used += m[0].length;
  }
  return used === t.length ? Math.round(total) : NaN;
}

function duration(ns) {
  if (!ns) return 'none';
  const s = Math.round(ns / 1e9);
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  return (h ? h + 'h' : '') + (m ? m + 'm' : '') + (s % 60 || (!h && !m) ? (s % 60) + 's' : '');
}

/** One node, by /clients/<id>. */
export function ClientPage({ id }) {
  const node = useWatch('/v1/node/' + encodeURIComponent(id));
  const n = node.data;
  return html`<nav class="crumbs" aria-label="breadcrumb"><${Link} to="/clients">Clients<//> /</nav>
    <h1>${n ? n.Name : shortId(id)} ${n && html`<${Status} value=${n.Status} />`}</h1>
    <${Loading} state=${node} />
    ${n && html`<${NodeControls} n=${n} />
      <${Facts} items=${[
        ['ID', n.ID],
        ['Status', n.Status + (n.StatusDescription ? ' (' + n.StatusDescription + ')' : '')],
        ['Eligibility', n.SchedulingEligibility],
        ['Drain', n.Drain ? drainText(n.DrainStrategy) : 'no'],
        ['Datacenter', n.Datacenter], ['Class', n.NodeClass], ['Node pool', n.NodePool],
        ['Address', n.HTTPAddr], ['Status updated', when((n.StatusUpdatedAt || 0) * 1000)],
      ]} />
      <h2>Drivers</h2>
      <${Table} label="drivers" rows=${Object.entries(n.Drivers || {}).sort(([x], [y]) => (x < y ? -1 : 1))} rowKey=${([k]) => k}
        empty="No drivers." columns=${[
          ['Driver', ([k]) => k],
          ['Detected', ([, d]) => (d.Detected ? 'yes' : 'no')],
          ['Health', ([, d]) => html`<${Status} value=${d.Healthy ? 'healthy' : 'unhealthy'} />`],
          ['Description', ([, d]) => d.HealthDescription],
        ]} />
      <h2>Resources</h2>
      <${Facts} items=${[
        ['CPU', ((n.Resources || {}).CPU || 0) + ' MHz' + ((n.Reserved || {}).CPU ? ' (' + n.Reserved.CPU + ' reserved)' : '')],
        ['Memory', ((n.Resources || {}).MemoryMB || 0) + ' MB' + ((n.Reserved || {}).MemoryMB ? ' (' + n.Reserved.MemoryMB + ' reserved)' : '')],
        ['Disk', ((n.Resources || {}).DiskMB || 0) + ' MB' + ((n.Reserved || {}).DiskMB ? ' (' + n.Reserved.DiskMB + ' reserved)' : '')],
        (n.MinDynamicPort || n.MaxDynamicPort) && ['Dynamic ports', n.MinDynamicPort + '–' + n.MaxDynamicPort],
        n.ReservedPorts && ['Reserved ports', n.ReservedPorts],
      ]} />
      ${(n.Networks || []).length > 0 && html`<h3>Addresses</h3>
        <${Table} label="host networks" rows=${n.Networks} rowKey=${(x) => x.Name} columns=${[
          ['Network', (x) => x.Name], ['Address', (x) => x.Address],
          ['Reserved ports', (x) => x.ReservedPorts || ''],
        ]} />`}
      ${n.HostVolumes && Object.keys(n.HostVolumes).length > 0 && html`<h3>Host volumes</h3>
        <${Table} label="host volumes" rows=${Object.entries(n.HostVolumes)} rowKey=${([k]) => k} columns=${[
          ['Name', ([k]) => k], ['Path', ([, v]) => v.Path], ['Read only', ([, v]) => (v.ReadOnly ? 'yes' : 'no')],
        ]} />`}
      ${n.Meta && Object.keys(n.Meta).length > 0 && html`<h3>Meta</h3><${Facts} items=${Object.entries(n.Meta).sort()} />`}
      <details class="attributes"><summary>Attributes (${Object.keys(n.Attributes || {}).length})</summary>
        <${Facts} items=${Object.entries(n.Attributes || {}).sort(([x], [y]) => (x < y ? -1 : 1))} />
      </details>
      <h2>Allocations</h2>
      <${NodeAllocs} id=${n.ID} />`}`;
}
ClientPage.title = 'Client';

function drainText(d) {
  if (!d) return 'yes';
  const s = d.DrainSpec || d;
  return 'yes, deadline ' + duration(s.Deadline) + (s.IgnoreSystemJobs ? ', system jobs stay' : '') +
    (d.ForceDeadline && new Date(d.ForceDeadline).getFullYear() > 1971 ? ' (forced at ' + when(d.ForceDeadline) + ')' : '');
}

/** The node's history link and its writes: drain on or off, eligibility. */
function NodeControls({ n }) {
  const [deadline, setDeadline] = useState('1h');
  const [ignoreSystem, setIgnoreSystem] = useState(false);
  const base = '/v1/node/' + n.ID;
  const drain = async () => {
    const ns = parseDuration(deadline);
    if (!Number.isFinite(ns)) throw new Error('the deadline "' + deadline + '" is not a duration such as 1h or 30m');
    await api.write('POST', base + '/drain', { DrainSpec: { Deadline: ns, IgnoreSystemJobs: ignoreSystem }, MarkEligible: false });
  };
  const eligible = n.SchedulingEligibility === 'eligible';
  return html`<div class="toolbar">
    <${Link} to=${'/history/node/' + n.ID}>History of this client<//>
    ${n.Drain
      ? html`<${WriteButton} label="stop draining" onClick=${() => api.write('POST', base + '/drain', { DrainSpec: null, MarkEligible: true })}>Stop drain<//>`
      : html`<label>Drain deadline <input type="text" size="6" value=${deadline} onInput=${(e) => setDeadline(e.target.value)} /></label>
        <label><input type="checkbox" checked=${ignoreSystem} onChange=${(e) => setIgnoreSystem(e.target.checked)} /> Ignore system jobs</label>
        <${WriteButton} danger label="drain client" confirm=${'Drain ' + n.Name + '? Its allocations migrate to other clients.'} onClick=${drain}>Drain<//>`}
    <${WriteButton} label=${eligible ? 'mark ineligible' : 'mark eligible'}
      onClick=${() => api.write('POST', base + '/eligibility', { Eligibility: eligible ? 'ineligible' : 'eligible' })}>
      ${eligible ? 'Mark ineligible' : 'Mark eligible'}<//>
  </div>`;
}

function NodeAllocs({ id }) {
  const allocs = useWatch('/v1/node/' + id + '/allocations');
  const rows = [...(allocs.data || [])].sort((a, b) => (b.CreateIndex || 0) - (a.CreateIndex || 0));
  return html`<${Loading} state=${allocs} />${allocs.data && html`<${AllocTable} rows=${rows} empty="No allocations on this client." />`}`;
}
