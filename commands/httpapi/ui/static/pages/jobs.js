// The jobs pages: the list of jobs with status and filters, and a job
// with its task groups, allocations, evaluations, deployments, versions
// (and the diff between them) and its definition.
import {
  html, useState, useWatch, usePagedList, NamespacePicker, Link, Loading, Status, Table, Facts, Json,
  WriteButton, shortId, jobPath, when, api, navigate, href,
} from '../ui.js';

/** GET /v1/jobs across namespaces, live, filtered and paged as the API pages it. */
export function JobsPage() {
  const [ns, setNs] = useState(new URLSearchParams(location.search).get('namespace') || '*');
  const { state, controls, pager } = usePagedList('/v1/jobs', { namespace: ns });
  return html`<h1>Jobs</h1>
    <div class="toolbar">
      <${NamespacePicker} value=${ns === '*' ? '' : ns} onChange=${(v) => setNs(v || '*')} />
      ${controls}
    </div>
    <${Loading} state=${state} />
    ${state.data && html`<${Table} label="jobs" rows=${state.data} rowKey=${(j) => j.Namespace + '/' + j.ID}
      empty="No jobs. Run one with: ordo job run docs/examples/hello.hcl"
      columns=${[
        ['Name', (j) => html`<${Link} to=${jobPath(j.ID, j.Namespace)}>${j.ID}<//>`],
        ['Namespace', (j) => j.Namespace],
        ['Type', (j) => j.Type],
        ['Priority', (j) => j.Priority],
        ['Status', (j) => html`<${Status} value=${j.Status} />`],
        ['Submitted', (j) => when(j.SubmitTime)],
      ]} />`}
    ${pager}`;
}
JobsPage.title = 'Jobs';

/** Splits the UI's "<id>@<namespace>" into the job id and its namespace. */
export function parseJobRef(ref) {
  const at = ref.lastIndexOf('@');
  return at < 0 ? { id: ref, namespace: 'default' } : { id: ref.slice(0, at), namespace: ref.slice(at + 1) };
}

const tabs = ['overview', 'allocations', 'evaluations', 'deployments', 'versions', 'definition'];

/** One job, by /jobs/<id>@<namespace>/<tab>. */
export function JobPage({ jobref, tab }) {
  const { id, namespace } = parseJobRef(jobref);
  const t = tab || 'overview';
  const base = '/v1/job/' + encodeURIComponent(id);
  const job = useWatch(base, { namespace });
  const j = job.data;
  return html`<nav class="crumbs" aria-label="breadcrumb"><${Link} to="/jobs">Jobs<//> / ${namespace} /</nav>
    <h1>${id} ${j && html`<${Status} value=${j.Stop ? 'dead (stopped)' : j.Status} />`}</h1>
    <${Loading} state=${job} />
    ${j && html`<div class="toolbar">
      <${Link} to=${'/history/job/' + encodeURIComponent(namespace + '/' + id)}>History of this job<//>
      ${j.Stop
        ? html`<${WriteButton} label="start job" onClick=${() => startJob(j)}>Start<//>`
        : html`<${WriteButton} danger label="stop job" confirm=${'Stop job ' + id + '?'}
            onClick=${() => api.write('DELETE', base, undefined, { namespace })}>Stop<//>`}
      <${WriteButton} danger label="purge job" confirm=${'Purge job ' + id + '? Its history stays in the log.'}
        onClick=${async () => { await api.write('DELETE', base, undefined, { namespace, purge: true }); navigate(href('/jobs')); }}>Purge<//>
    </div>
    <nav class="tabs" aria-label="job sections">${tabs.map((name) => html`<${Link}
      to=${jobPath(id, namespace) + (name === 'overview' ? '' : '/' + name)} aria-current=${name === t ? 'page' : undefined}>${name}<//>`)}</nav>
    ${t === 'overview' && html`<${JobOverview} job=${j} base=${base} namespace=${namespace} />`}
    ${t === 'allocations' && html`<${JobAllocations} base=${base} namespace=${namespace} />`}
    ${t === 'evaluations' && html`<${JobEvaluations} base=${base} namespace=${namespace} />`}
    ${t === 'deployments' && html`<${JobDeployments} base=${base} namespace=${namespace} />`}
    ${t === 'versions' && html`<${JobVersions} base=${base} namespace=${namespace} />`}
    ${t === 'definition' && html`<pre class="json" aria-label="job definition">${JSON.stringify(j, null, 2)}</pre>`}`}`;
}
JobPage.title = 'Job';

// Start: register the job again with Stop cleared, as `nomad job start` does.
async function startJob(j) {
  const job = { ...j, Stop: false };
  for (const k of ['Status', 'CreateIndex', 'ModifyIndex', 'JobModifyIndex', 'Version', 'SubmitTime', 'Stable']) delete job[k];
  await api.write('POST', '/v1/job/' + encodeURIComponent(j.ID), { Job: job }, { namespace: j.Namespace });
}

function JobOverview({ job, base, namespace }) {
  const summary = useWatch(base + '/summary', { namespace });
  const groups = job.TaskGroups || [];
  const counts = (summary.data && summary.data.Summary) || {};
  return html`<${Facts} items=${[
      ['Type', job.Type], ['Priority', job.Priority], ['Version', job.Version],
      ['Datacenters', (job.Datacenters || []).join(', ')], ['Node pool', job.NodePool],
      ['Submitted', when(job.SubmitTime)],
    ]} />
    <h2>Task groups</h2>
    <${Table} label="task groups" rows=${groups} rowKey=${(g) => g.Name} columns=${[
      ['Group', (g) => g.Name],
      ['Count', (g) => g.Count],
      ['Tasks', (g) => (g.Tasks || []).map((t) => t.Name + ' (' + t.Driver + ')').join(', ')],
      ['Queued', (g) => (counts[g.Name] || {}).Queued || 0],
      ['Starting', (g) => (counts[g.Name] || {}).Starting || 0],
      ['Running', (g) => (counts[g.Name] || {}).Running || 0],
      ['Failed', (g) => (counts[g.Name] || {}).Failed || 0],
      ['Complete', (g) => (counts[g.Name] || {}).Complete || 0],
      ['Lost', (g) => (counts[g.Name] || {}).Lost || 0],
    ]} />
    ${summary.data && summary.data.Children && html`<h2>Children</h2><${Facts} items=${Object.entries(summary.data.Children)} />`}
    <h2>Recent allocations</h2>
    <${JobAllocations} base=${base} namespace=${namespace} limit=${10} />`;
}

/** A table of allocations (shared with the node and deployment pages). */
export function AllocTable({ rows, empty }) {
  return html`<${Table} label="allocations" rows=${rows} rowKey=${(a) => a.ID} empty=${empty || 'No allocations.'} columns=${[
    ['ID', (a) => html`<${Link} to=${'/allocations/' + a.ID} title=${a.ID}>${shortId(a.ID)}<//>`],
    ['Name', (a) => a.Name],
    ['Job', (a) => html`<${Link} to=${jobPath(a.JobID, a.Namespace)}>${a.JobID}<//>`],
    ['Version', (a) => a.JobVersion],
    ['Client', (a) => html`<${Link} to=${'/clients/' + a.NodeID} title=${a.NodeID}>${a.NodeName || shortId(a.NodeID)}<//>`],
    ['Desired', (a) => a.DesiredStatus],
    ['Status', (a) => html`<${Status} value=${a.ClientStatus} />`],
    ['Modified', (a) => when(a.ModifyTime)],
  ]} />`;
}

function JobAllocations({ base, namespace, limit }) {
  const allocs = useWatch(base + '/allocations', { namespace, all: true });
  let rows = allocs.data || [];
  rows = [...rows].sort((a, b) => (b.CreateIndex || 0) - (a.CreateIndex || 0));
  if (limit) rows = rows.slice(0, limit);
  return html`<${Loading} state=${allocs} />${allocs.data && html`<${AllocTable} rows=${rows} />`}`;
}

/** A table of evaluations (shared with the evaluations pages). */
export function EvalTable({ rows }) {
  return html`<${Table} label="evaluations" rows=${rows} rowKey=${(e) => e.ID} empty="No evaluations." columns=${[
    ['ID', (e) => html`<${Link} to=${'/evaluations/' + e.ID} title=${e.ID}>${shortId(e.ID)}<//>`],
    ['Job', (e) => html`<${Link} to=${jobPath(e.JobID, e.Namespace)}>${e.JobID}<//>`],
    ['Triggered by', (e) => e.TriggeredBy],
    ['Priority', (e) => e.Priority],
    ['Status', (e) => html`<${Status} value=${e.Status} />`],
    ['Placement failures', (e) => (e.FailedTGAllocs && Object.keys(e.FailedTGAllocs).length) ? Object.keys(e.FailedTGAllocs).join(', ') : ''],
    ['Modified', (e) => when(e.ModifyTime)],
  ]} />`;
}

function JobEvaluations({ base, namespace }) {
  const evals = useWatch(base + '/evaluations', { namespace });
  return html`<${Loading} state=${evals} />${evals.data && html`<${EvalTable} rows=${[...evals.data].sort((a, b) => b.CreateIndex - a.CreateIndex)} />`}`;
}

function JobDeployments({ base, namespace }) {
  const deps = useWatch(base + '/deployments', { namespace });
  return html`<${Loading} state=${deps} />${deps.data && html`<${Table} label="deployments" rows=${deps.data} rowKey=${(d) => d.ID}
    empty="No deployments." columns=${[
      ['ID', (d) => html`<${Link} to=${'/deployments/' + d.ID} title=${d.ID}>${shortId(d.ID)}<//>`],
      ['Version', (d) => d.JobVersion],
      ['Status', (d) => html`<${Status} value=${d.Status} />`],
      ['Description', (d) => d.StatusDescription],
      ['Groups', (d) => Object.entries(d.TaskGroups || {}).map(([g, s]) => g + ' ' + s.HealthyAllocs + '/' + s.DesiredTotal + ' healthy').join('; ')],
    ]} />`}`;
}

function JobVersions({ base, namespace }) {
  const v = useWatch(base + '/versions', { namespace, diffs: true });
  const versions = (v.data && v.data.Versions) || [];
  const diffs = (v.data && v.data.Diffs) || [];
  return html`<${Loading} state=${v} />
    <ol class="versions" aria-label="versions">${versions.map((ver, i) => html`<li key=${ver.Version}>
      <h3>Version ${ver.Version} ${ver.Stable ? html`<span class="tag">stable</span>` : null}</h3>
      <p>${when(ver.SubmitTime)}</p>
      ${diffs[i] ? html`<${Diff} diff=${diffs[i]} />` : html`<p class="empty">No change from the version before (or the first version).</p>`}
      ${i > 0 && html`<${WriteButton} label=${'revert to version ' + ver.Version}
        onClick=${() => api.write('POST', base + '/revert', { JobID: ver.ID, JobVersion: ver.Version }, { namespace })}>Revert to this version<//>`}
    </li>`)}</ol>`;
}

/** A job diff as Nomad shapes it: fields, objects and task groups, nested. */
export function Diff({ diff }) {
  if (!diff || diff.Type === 'None') return html`<p class="empty">No changes.</p>`;
  const fields = (diff.Fields || []).filter((f) => f.Type !== 'None');
  const objects = (diff.Objects || []).filter((o) => o.Type !== 'None');
  const nested = [...(diff.TaskGroups || []), ...(diff.Tasks || [])].filter((o) => o.Type !== 'None');
  return html`<ul class="diff">
    ${fields.map((f) => html`<li class=${'diff-' + f.Type.toLowerCase()}>
      ${f.Type === 'Added' ? '+' : f.Type === 'Deleted' ? '−' : '±'} ${f.Name}: ${f.Old !== '' && html`<del>${f.Old}</del>`} ${f.New !== '' && html`<ins>${f.New}</ins>`}</li>`)}
    ${[...objects, ...nested].map((o) => html`<li class=${'diff-' + o.Type.toLowerCase()}>
      ${o.Type === 'Added' ? '+' : o.Type === 'Deleted' ? '−' : '±'} ${o.Name}<${Diff} diff=${o} /></li>`)}
  </ul>`;
}

export { Json };
