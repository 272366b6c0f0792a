// CSI volumes and plugins: the volumes with their plugin, access and
// claims; a volume with the allocations that claim it.
import { html, useWatch, Link, Loading, Table, Facts, Status } from '../ui.js';
import { AllocTable } from './jobs.js';

/** /csi/volumes: GET /v1/volumes?type=csi and /v1/plugins?type=csi, live. */
export function VolumesPage() {
  const vols = useWatch('/v1/volumes', { type: 'csi', namespace: '*' });
  const plugins = useWatch('/v1/plugins', { type: 'csi' });
  return html`<h1>CSI volumes</h1>
    <${Loading} state=${vols} />
    ${vols.data && html`<${Table} label="volumes" rows=${vols.data} rowKey=${(v) => v.Namespace + '/' + v.ID} empty="No CSI volumes." columns=${[
      ['ID', (v) => html`<${Link} to=${'/csi/volumes/' + encodeURIComponent(v.ID)} params=${{ namespace: v.Namespace }}>${v.ID}<//>`],
      ['Name', (v) => v.Name], ['Namespace', (v) => v.Namespace], ['Plugin', (v) => v.PluginID],
      ['Schedulable', (v) => html`<${Status} value=${v.Schedulable ? 'healthy' : 'unhealthy'} />`],
      ['Access', (v) => [v.AccessMode, v.AttachmentMode].filter(Boolean).join(' / ')],
      ['Readers', (v) => v.CurrentReaders], ['Writers', (v) => v.CurrentWriters],
    ]} />`}
    <h2>CSI plugins</h2>
    <${Loading} state=${plugins} />
    ${plugins.data && html`<${Table} label="plugins" rows=${plugins.data} rowKey=${(p) => p.ID} empty="No CSI plugins." columns=${[
      ['ID', (p) => p.ID], ['Provider', (p) => p.Provider],
      ['Controllers healthy', (p) => (p.ControllerRequired ? p.ControllersHealthy + ' / ' + p.ControllersExpected : 'not required')],
      ['Nodes healthy', (p) => p.NodesHealthy + ' / ' + p.NodesExpected],
    ]} />`}`;
}
VolumesPage.title = 'CSI volumes';

/** /csi/volumes/<id>?namespace=: GET /v1/volume/csi/<id>, live. */
export function VolumePage({ id }) {
  const namespace = new URLSearchParams(location.search).get('namespace') || 'default';
  const vol = useWatch('/v1/volume/csi/' + encodeURIComponent(id), { namespace });
  const v = vol.data;
  const claims = v ? [...Object.keys(v.ReadAllocs || {}).map((a) => [a, 'read']), ...Object.keys(v.WriteAllocs || {}).map((a) => [a, 'write'])] : [];
  return html`<nav class="crumbs" aria-label="breadcrumb"><${Link} to="/csi/volumes">CSI volumes<//> / ${namespace} /</nav>
    <h1>${id} ${v && html`<${Status} value=${v.Schedulable ? 'healthy' : 'unhealthy'} />`}</h1>
    <${Loading} state=${vol} />
    ${v && html`<div class="toolbar"><${Link} to=${'/history/volume/' + encodeURIComponent(id)}>History of this volume<//></div>
      <${Facts} items=${[
        ['Name', v.Name], ['Namespace', v.Namespace], ['External ID', v.ExternalID], ['Plugin', v.PluginID + (v.Provider ? ' (' + v.Provider + ')' : '')],
        ['Capacity', v.Capacity ? v.Capacity + ' bytes' : ''],
        ['Capabilities', (v.RequestedCapabilities || []).map((c) => c.AccessMode + ' / ' + c.AttachmentMode).join(', ')],
        ['Controllers healthy', v.ControllerRequired ? v.ControllersHealthy + ' / ' + v.ControllersExpected : 'not required'],
        ['Nodes healthy', v.NodesHealthy + ' / ' + v.NodesExpected],
        ['Topologies', (v.Topologies || []).map((t) => Object.entries(t.Segments || {}).map(([k, s]) => k + '=' + s).join(',')).join('; ')],
      ]} />
      <h2>Claims</h2>
      <${Table} label="claims" rows=${claims} rowKey=${([a]) => a} empty="No allocation claims this volume." columns=${[
        ['Allocation', ([a]) => html`<${Link} to=${'/allocations/' + a} title=${a}>${a.slice(0, 8)}<//>`], ['Mode', ([, m]) => m],
      ]} />
      <h2>Allocations</h2>
      <${AllocTable} rows=${v.Allocations || []} empty="No allocations use this volume." />`}`;
}
VolumePage.title = 'CSI volume';

