// The evaluations pages: every evaluation across namespaces, and one
// evaluation with its facts, why placements failed (worded as `ordo eval
// status` words them), its related evals and allocations, and "Explain
// this decision": the recorded plan next to the scheduler's re-run on
// the same state (GET /v1/debug/reschedule), with their diff.
import {
  html, useState, useWatch, usePagedList, Link, Loading, ErrorBox, Status, Table, Facts, shortId, jobPath, when, api,
} from '../ui.js';
import { AllocTable, EvalTable } from './jobs.js';
import { IdLink } from './allocations.js';

/** GET /v1/evaluations across namespaces, live, filtered and paged. */
export function EvaluationsPage() {
  const { state, controls, pager } = usePagedList('/v1/evaluations', { namespace: '*' });
  return html`<h1>Evaluations</h1>
    <div class="toolbar">${controls}</div>
    <${Loading} state=${state} />
    ${state.data && html`<${EvalTable} rows=${state.data} />`}
    ${pager}`;
}
EvaluationsPage.title = 'Evaluations';

function plural(n, word) { return n + ' ' + word + (n === 1 ? '' : 's'); }

function sortedEntries(m) { return Object.entries(m || {}).sort(([x], [y]) => (x < y ? -1 : 1)); }

/**
 * Why one group's placements failed, most telling first, in the words of
 * Nomad's (and `ordo eval status`'s) "Placement Failure" lines.
 */
export function metricLines(m) {
  const out = [];
  if (!m.NodesEvaluated) out.push('No nodes were eligible for evaluation');
  for (const [dc, n] of sortedEntries(m.NodesAvailable)) if (n === 0) out.push(`No nodes are available in datacenter "${dc}"`);
  for (const [c, n] of sortedEntries(m.ClassFiltered)) out.push(`Class "${c}" filtered ${plural(n, 'node')}`);
  for (const [c, n] of sortedEntries(m.ConstraintFiltered)) out.push(`Constraint "${c}" filtered ${plural(n, 'node')}`);
  if (m.NodesExhausted > 0) out.push(`Resources exhausted on ${plural(m.NodesExhausted, 'node')}`);
  for (const [c, n] of sortedEntries(m.ClassExhausted)) out.push(`Class "${c}" exhausted on ${plural(n, 'node')}`);
  for (const [d, n] of sortedEntries(m.DimensionExhausted)) out.push(`Dimension "${d}" exhausted on ${plural(n, 'node')}`);
  for (const q of m.QuotaExhausted || []) out.push(`Quota limit hit "${q}"`);
  return out;
}

/** The counts of an AllocMetric. */
function MetricCounts({ m }) {
  const avail = sortedEntries(m.NodesAvailable).map(([dc, n]) => dc + ': ' + n).join(', ');
  const counts = plural(m.NodesEvaluated || 0, 'node') + ' evaluated, ' + (m.NodesFiltered || 0) + ' filtered, ' +
    (m.NodesExhausted || 0) + ' exhausted' + (m.NodesInPool ? ', ' + m.NodesInPool + ' in the pool' : '') +
    (avail ? '; available by datacenter ' + avail : '');
  return html`<p class="small">${counts}</p>`;
}

/**
 * The nodes one placement of the re-run scored (Result.Scores): each
 * scorer's value and the final score, best first, the chosen node marked.
 */
export function NodeScores({ ps, r }) {
  if (!ps || !(ps.Nodes || []).length) return null;
  const scorers = [...new Set(ps.Nodes.flatMap((n) => Object.keys(n.Scores || {})))].sort();
  const rows = [...ps.Nodes].sort((a, b) => b.FinalScore - a.FinalScore);
  return html`<${Table} label=${'node scores of ' + ps.AllocName} rows=${rows} rowKey=${(n) => n.NodeID} columns=${[
    ['Node', (n) => html`<${Link} to=${'/clients/' + n.NodeID} title=${n.NodeID}>${n.NodeName || nodeName(r, n.NodeID)}<//>`],
    ...scorers.map((k) => [k, (n) => (n.Scores && k in n.Scores ? Number(n.Scores[k]).toFixed(3) : '')]),
    ['Final score', (n) => Number(n.FinalScore).toFixed(3)],
    ['Chosen', (n) => (n.NodeID === ps.Chosen ? html`<strong>chosen</strong>` : '')],
  ]} />`;
}

/** The placement failures of an eval or plan: group by group, reasons as lines. */
export function PlacementFailures({ failed }) {
  const groups = sortedEntries(failed);
  if (!groups.length) return null;
  return html`<ul class="failures">${groups.map(([tg, m0]) => {
    const m = m0 || {};
    return html`<li key=${tg}><strong>Task Group "${tg}"</strong> (failed to place ${plural((m.CoalescedFailures || 0) + 1, 'allocation')}):
      <ul>${metricLines(m).map((l) => html`<li>${l}</li>`)}</ul>
      <${MetricCounts} m=${m} /></li>`;
  })}</ul>`;
}

/** One evaluation, by /evaluations/<id>. */
export function EvaluationPage({ id }) {
  const ev = useWatch('/v1/evaluation/' + encodeURIComponent(id), { related: true });
  const e = ev.data;
  return html`<nav class="crumbs" aria-label="breadcrumb"><${Link} to="/evaluations">Evaluations<//> /</nav>
    <h1>Evaluation <span title=${id}>${shortId(id)}</span> ${e && html`<${Status} value=${e.Status} />`}</h1>
    <${Loading} state=${ev} />
    ${e && html`<div class="toolbar"><${Link} to=${'/history/eval/' + e.ID}>History of this evaluation<//></div>
      <${Facts} items=${[
        ['ID', e.ID],
        ['Status', e.Status + (e.StatusDescription ? ': ' + e.StatusDescription : '')],
        ['Type', e.Type],
        ['Triggered by', e.TriggeredBy],
        ['Job', html`<${Link} to=${jobPath(e.JobID, e.Namespace)}>${e.JobID}<//>`],
        ['Namespace', e.Namespace],
        ['Node', html`<${IdLink} to="/clients/" id=${e.NodeID} />`],
        ['Deployment', html`<${IdLink} to="/deployments/" id=${e.DeploymentID} />`],
        ['Priority', e.Priority],
        e.Wait ? ['Wait', (e.Wait / 1e9) + 's'] : null,
        when(e.WaitUntil) && ['Wait until', when(e.WaitUntil)],
        ['Previous eval', html`<${IdLink} to="/evaluations/" id=${e.PreviousEval} />`],
        ['Next eval', html`<${IdLink} to="/evaluations/" id=${e.NextEval} />`],
        ['Blocked eval', html`<${IdLink} to="/evaluations/" id=${e.BlockedEval} />`],
        ['Snapshot index', e.SnapshotIndex || '—'],
        ['Created', when(e.CreateTime)], ['Modified', when(e.ModifyTime)],
        ['Create index', e.CreateIndex], ['Modify index', e.ModifyIndex],
      ]} />
      ${e.QueuedAllocations && Object.keys(e.QueuedAllocations).length > 0 && html`<h2>Queued allocations</h2>
        <${Facts} items=${sortedEntries(e.QueuedAllocations)} />`}
      <h2>Placement failures</h2>
      ${e.FailedTGAllocs && Object.keys(e.FailedTGAllocs).length
        ? html`<${PlacementFailures} failed=${e.FailedTGAllocs} />`
        : html`<p class="empty">None: every placement this evaluation asked for was made.</p>`}
      <${Explain} id=${e.ID} />
      <h2>Related evaluations</h2>
      <${EvalTable} rows=${e.RelatedEvals || []} />
      <h2>Allocations</h2>
      <${EvalAllocs} id=${e.ID} />`}`;
}
EvaluationPage.title = 'Evaluation';

function EvalAllocs({ id }) {
  const allocs = useWatch('/v1/evaluation/' + id + '/allocations');
  return html`<${Loading} state=${allocs} />${allocs.data && html`<${AllocTable} rows=${allocs.data} empty="This evaluation placed no allocations." />`}`;
}

/**
 * "Explain this decision": re-runs the eval's recorded decision on the
 * state it was made on. A read of the archive (it writes nothing), so it
 * works while the UI shows the past too; the answer does not depend on the
 * slider, so it is asked of the live archive.
 */
function Explain({ id }) {
  const [state, setState] = useState({ loading: false, data: null, error: null });
  const run = async () => {
    setState({ loading: true, data: null, error: null });
    try {
      const a = await api.get('/v1/debug/reschedule/' + id, {}, { live: true });
      setState({ loading: false, data: a.data, error: null });
    } catch (err) {
      setState({ loading: false, data: null, error: err });
    }
  };
  return html`<section class="explain" aria-label="explain this decision">
    <h2>Why this decision</h2>
    <p><button type="button" onClick=${run} disabled=${state.loading}>Explain this decision</button>
      <span class="small"> re-runs the scheduler on the state the decision was made on, and compares.</span></p>
    ${state.loading && html`<p class="loading" aria-live="polite">Re-running the scheduler…</p>`}
    ${state.error && (state.error.status === 409
      ? html`<p class="empty" role="status">No decision to explain: ${state.error.message}</p>`
      : html`<${ErrorBox} error=${state.error} />`)}
    ${state.data && html`<${Rerun} r=${state.data} />`}
  </section>`;
}

// The node of an allocation, named as the re-run names it.
function nodeName(r, id) { return (r.Nodes && r.Nodes[id]) || shortId(id); }

function sideRows(rec, re, key) {
  const m = new Map();
  for (const x of rec || []) m.set(key(x), { id: key(x), rec: x });
  for (const x of re || []) m.set(key(x), { ...(m.get(key(x)) || { id: key(x) }), re: x });
  return [...m.values()];
}

/**
 * One re-run (GET /v1/debug/reschedule's answer): the plans side by side,
 * the diff, the scheduler's reasons.
 */
export function Rerun({ r }) {
  const rec = r.Recorded || {};
  const re = r.Recomputed || {};
  const placed = (a) => (a ? a.Name + ' on ' + nodeName(r, a.NodeID) : '—');
  const differs = (row, f) => (f(row.rec) !== f(row.re) ? html` <strong class="differs">differs</strong>` : '');
  const updated = (u) => {
    if (!u) return '—';
    const a = (r.Allocs || {})[u.ID] || {};
    return (a.Name || shortId(u.ID)) + (a.NodeID ? ' on ' + nodeName(r, a.NodeID) : '') + ': ' + u.DesiredStatus +
      (u.ClientStatus ? ', client ' + u.ClientStatus : '') + (u.DesiredDescription ? ' (' + u.DesiredDescription + ')' : '');
  };
  const placements = sideRows(rec.Placements, re.Placements, (a) => a.ID);
  const stops = sideRows(rec.Stops, re.Stops, (u) => u.ID);
  const updates = sideRows(rec.Updates, re.Updates, (u) => u.ID);
  const groups = [...new Set([...Object.keys(rec.QueuedAllocations || {}), ...Object.keys(re.QueuedAllocations || {})])].sort();
  // The deployment a plan creates (the one it acts under is not logged
  // with the plan, so it is not compared).
  const deployment = (p) => (p.Deployment ? 'created ' + shortId(p.Deployment.ID) + ' (' + p.Deployment.Status + ')' : 'none');
  const other = [
    ['Deployment created', deployment(rec), deployment(re)],
    ['Follow-up evals', (rec.FollowUps || []).map((e) => shortId(e.ID) + ' ' + when(e.WaitUntil)).join(', ') || 'none',
      (re.FollowUps || []).map((e) => shortId(e.ID) + ' ' + when(e.WaitUntil)).join(', ') || 'none'],
    ['Blocked eval', rec.CreateBlockedEval ? 'created' : 'none', re.CreateBlockedEval ? 'created' : 'none'],
    ...groups.map((g) => ['Queued in ' + g, String((rec.QueuedAllocations || {})[g] || 0), String((re.QueuedAllocations || {})[g] || 0)]),
  ];
  const changes = r.Diff || [];
  const sideOf = (c) => (c.Recorded && !c.Recomputed ? 'removed' : !c.Recorded && c.Recomputed ? 'added' : 'changed');
  const recomputedMetrics = (re.Placements || []).filter((a) => a.Metrics);
  const scoresOf = new Map((r.Scores || []).map((ps) => [ps.AllocName, ps])); // the last try of each name
  return html`<div class="rerun">
    <${Facts} items=${[
      ['Snapshot index', r.SnapshotIndex],
      ['Result', r.Equal ? 'the re-run reproduces the recorded plan' : 'the re-run differs from the recorded plan (' + plural(changes.length, 'difference') + ')'],
    ]} />
    ${r.Trigger && (r.Trigger.Updates || []).length > 0 && html`<h3>Triggered by (committed with the eval at ${r.Trigger.Index}; not re-run)</h3>
      <ul>${r.Trigger.Updates.map((u) => html`<li>${updated(u)}</li>`)}</ul>`}
    <h3>Placements</h3>
    <${Table} label="placements, recorded and recomputed" rows=${placements} rowKey=${(x) => x.id} empty="None on either side." columns=${[
      ['Allocation', (x) => html`<${IdLink} to="/allocations/" id=${x.id} />`],
      ['Task group', (x) => (x.rec || x.re).TaskGroup],
      ['Recorded', (x) => placed(x.rec)],
      ['Recomputed', (x) => html`${placed(x.re)}${differs(x, placed)}`],
    ]} />
    <h3>Stops</h3>
    <${Table} label="stops, recorded and recomputed" rows=${stops} rowKey=${(x) => x.id} empty="None on either side." columns=${[
      ['Allocation', (x) => html`<${IdLink} to="/allocations/" id=${x.id} />`],
      ['Recorded', (x) => updated(x.rec)],
      ['Recomputed', (x) => html`${updated(x.re)}${differs(x, updated)}`],
    ]} />
    <h3>Updates</h3>
    <${Table} label="updates, recorded and recomputed" rows=${updates} rowKey=${(x) => x.id} empty="None on either side." columns=${[
      ['Allocation', (x) => html`<${IdLink} to="/allocations/" id=${x.id} />`],
      ['Recorded', (x) => updated(x.rec)],
      ['Recomputed', (x) => html`${updated(x.re)}${differs(x, updated)}`],
    ]} />
    <h3>Deployment, follow-up and blocked evals</h3>
    <${Table} label="other outcomes, recorded and recomputed" rows=${other} rowKey=${(x) => x[0]} columns=${[
      ['Item', (x) => x[0]], ['Recorded', (x) => x[1]],
      ['Recomputed', (x) => html`${x[2]}${x[1] !== x[2] ? html` <strong class="differs">differs</strong>` : ''}`],
    ]} />
    <h3>Diff</h3>
    ${changes.length === 0
      ? html`<p class="nodiff" role="status">No difference: the recomputed plan equals the recorded one.</p>`
      : html`<ul class="diff rerun-diff">${changes.map((c, i) => html`<li key=${i} class=${'diff-' + (sideOf(c) === 'added' ? 'added' : sideOf(c) === 'removed' ? 'deleted' : 'edited')}>
          ${sideOf(c) === 'added' ? '+' : sideOf(c) === 'removed' ? '−' : '±'} ${c.Kind} ${c.Kind === 'placement' || c.Kind === 'stop' || c.Kind === 'update'
            ? html`<${IdLink} to="/allocations/" id=${c.ID} />` : c.ID}:
          ${sideOf(c) === 'added' ? ' recomputed, not recorded' : sideOf(c) === 'removed' ? ' recorded, not recomputed' : ' differs'}
          ${(c.Fields || []).length > 0 && html`<${Table} label=${'fields of ' + c.Kind + ' ' + shortId(c.ID)} rows=${c.Fields} rowKey=${(f) => f.Name}
            columns=${[['Field', (f) => f.Name], ['Recorded', (f) => f.Recorded || '—'], ['Recomputed', (f) => f.Recomputed || '—']]} />`}
        </li>`)}</ul>`}
    ${(r.EarlierAttempts || []).length > 0 && html`<h3>Earlier attempts (refused in part by the plan applier; not re-run)</h3>
      <ul>${r.EarlierAttempts.map((c) => html`<li>committed at index ${c.Index}: ${plural((c.Placements || []).length, 'placement')},
        ${(c.Updates || []).length} stops/updates, ${plural((c.Evals || []).length, 'eval')}</li>`)}</ul>`}
    <h3>What the re-run's scheduler saw</h3>
    ${recomputedMetrics.length === 0 && !(re.FailedTGAllocs && Object.keys(re.FailedTGAllocs).length)
      ? html`<p class="empty">The re-run placed nothing and reports no failure.</p>` : null}
    ${recomputedMetrics.length > 0 && html`<ul class="metrics">${recomputedMetrics.map((a) => html`<li key=${a.ID}>
      ${a.Name} placed on ${nodeName(r, a.NodeID)}: <${MetricCounts} m=${a.Metrics} />
      ${metricLines(a.Metrics).length > 0 && html`<ul>${metricLines(a.Metrics).filter((l) => !l.startsWith('No nodes were eligible')).map((l) => html`<li>${l}</li>`)}</ul>`}
      <${NodeScores} ps=${scoresOf.get(a.Name)} r=${r} />
    </li>`)}</ul>`}
    ${re.FailedTGAllocs && Object.keys(re.FailedTGAllocs).length > 0 && html`<h4>Placement failures in the re-run</h4>
      <${PlacementFailures} failed=${re.FailedTGAllocs} />`}
  </div>`;
}
