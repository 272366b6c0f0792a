// The deployments pages: every deployment across namespaces, and one
// deployment with each task group's progress, its allocations, and
// Promote and Fail while it is still going.
import {
  html, useWatch, usePagedList, Link, Loading, Status, Table, Facts, WriteButton, shortId, jobPath, when, api,
} from '../ui.js';
import { AllocTable } from './jobs.js';

function groupsText(d) {
  return Object.entries(d.TaskGroups || {}).sort(([x], [y]) => (x < y ? -1 : 1))
    .map(([g, s]) => g + ' ' + (s.HealthyAllocs || 0) + '/' + (s.DesiredTotal || 0) + ' healthy').join('; ');
}

/** GET /v1/deployments across namespaces, live, filtered and paged. */
export function DeploymentsPage() {
  const { state, controls, pager } = usePagedList('/v1/deployments', { namespace: '*' });
  return html`<h1>Deployments</h1>
    <div class="toolbar">${controls}</div>
    <${Loading} state=${state} />
    ${state.data && html`<${Table} label="deployments" rows=${state.data} rowKey=${(d) => d.ID}
      empty="No deployments. A service job with an update block makes one when it changes." columns=${[
        ['ID', (d) => html`<${Link} to=${'/deployments/' + d.ID} title=${d.ID}>${shortId(d.ID)}<//>`],
        ['Job', (d) => html`<${Link} to=${jobPath(d.JobID, d.Namespace)}>${d.JobID}<//>`],
        ['Namespace', (d) => d.Namespace],
        ['Version', (d) => d.JobVersion],
        ['Status', (d) => html`<${Status} value=${d.Status} />`],
        ['Description', (d) => d.StatusDescription],
        ['Progress', (d) => groupsText(d)],
        ['Modified', (d) => when(d.ModifyTime)],
      ]} />`}
    ${pager}`;
}
DeploymentsPage.title = 'Deployments';

function active(d) { return d.Status === 'running' || d.Status === 'paused'; }

function seconds(ns) {
  if (!ns) return '';
  const s = Math.round(ns / 1e9);
  return s >= 60 ? Math.floor(s / 60) + 'm' + (s % 60 ? (s % 60) + 's' : '') : s + 's';
}

/** One deployment, by /deployments/<id>. */
export function DeploymentPage({ id }) {
  const dep = useWatch('/v1/deployment/' + encodeURIComponent(id));
  const d = dep.data;
  const base = d ? '/v1/deployment/' : '';
  return html`<nav class="crumbs" aria-label="breadcrumb"><${Link} to="/deployments">Deployments<//> /</nav>
    <h1>Deployment <span title=${id}>${shortId(id)}</span> ${d && html`<${Status} value=${d.Status} />`}</h1>
    <${Loading} state=${dep} />
    ${d && html`<div class="toolbar">
        <${Link} to=${'/history/deployment/' + d.ID}>History of this deployment<//>
        ${active(d) && html`
          <${WriteButton} label="promote deployment" confirm=${'Promote the canaries of every group of deployment ' + shortId(d.ID) + '?'}
            onClick=${() => api.write('POST', base + 'promote/' + d.ID, { DeploymentID: d.ID, All: true })}>Promote<//>
          <${WriteButton} danger label="fail deployment" confirm=${'Mark deployment ' + shortId(d.ID) + ' failed?'}
            onClick=${() => api.write('POST', base + 'fail/' + d.ID)}>Fail<//>`}
      </div>
      <${Facts} items=${[
        ['ID', d.ID],
        ['Status', d.Status],
        ['Description', d.StatusDescription],
        ['Job', html`<${Link} to=${jobPath(d.JobID, d.Namespace)}>${d.JobID}<//> version ${d.JobVersion}`],
        ['Namespace', d.Namespace],
        ['Created', when(d.CreateTime)], ['Modified', when(d.ModifyTime)],
      ]} />
      <h2>Task groups</h2>
      ${Object.entries(d.TaskGroups || {}).sort(([x], [y]) => (x < y ? -1 : 1)).map(([g, s]) => html`<${GroupProgress} key=${g} name=${g} s=${s} />`)}
      <h2>Allocations</h2>
      <${DeploymentAllocs} id=${d.ID} />`}`;
}
DeploymentPage.title = 'Deployment';

function GroupProgress({ name, s }) {
  const desired = s.DesiredTotal || 0;
  const healthy = s.HealthyAllocs || 0;
  const barId = 'progress-' + name.replace(/[^A-Za-z0-9_-]/g, '_');
  return html`<section class="group-progress" aria-label=${'task group ' + name}>
    <h3>${name}</h3>
    <label for=${barId}>${healthy} of ${desired} healthy</label>
    <progress id=${barId} max=${desired || 1} value=${Math.min(healthy, desired || 1)}
      aria-label=${'task group ' + name + ': ' + healthy + ' of ' + desired + ' allocations healthy'}>${healthy}/${desired}</progress>
    <${Facts} items=${[
      ['Desired', desired],
      ['Placed', s.PlacedAllocs || 0],
      ['Healthy', healthy],
      ['Unhealthy', s.UnhealthyAllocs || 0],
      ['Canaries', (s.DesiredCanaries || 0) ? ((s.PlacedCanaries || []).length + ' of ' + s.DesiredCanaries + ' placed') : 'none'],
      ['Promoted', s.Promoted ? 'yes' : (s.DesiredCanaries ? 'no' : '—')],
      ['Auto revert', s.AutoRevert ? 'yes' : 'no'],
      ['Progress deadline', seconds(s.ProgressDeadline) + (when(s.RequireProgressBy) ? ', progress required by ' + when(s.RequireProgressBy) : '')],
    ]} />
  </section>`;
}

function DeploymentAllocs({ id }) {
  const allocs = useWatch('/v1/deployment/allocations/' + id);
  return html`<${Loading} state=${allocs} />${allocs.data && html`<${AllocTable} rows=${allocs.data} empty="No allocations in this deployment yet." />`}`;
}
