// The allocations pages: every allocation across namespaces, and one
// allocation with its tasks (state, restarts, events), the resources the
// scheduler gave it, its links, Stop and Restart, and a live tail of a
// task's log.
import {
  html, useState, useEffect, useRef, useWatch, useAtIndex, usePagedList, Link, Loading, ErrorBox, Status,
  Table, Facts, WriteButton, shortId, jobPath, when, api,
} from '../ui.js';
import { AllocTable } from './jobs.js';

/** GET /v1/allocations across namespaces, live, filtered and paged. */
export function AllocationsPage() {
  const { state, controls, pager } = usePagedList('/v1/allocations', { namespace: '*' });
  return html`<h1>Allocations</h1>
    <div class="toolbar">${controls}</div>
    <${Loading} state=${state} />
    ${state.data && html`<${AllocTable} rows=${state.data} empty="No allocations. Run a job to place some." />`}
    ${pager}`;
}
AllocationsPage.title = 'Allocations';

/** A link to an object by id, shown short with the whole id on hover; '—' for none. */
export function IdLink({ to, id, label }) {
  if (!id) return '—';
  return html`<${Link} to=${to + id} title=${id}>${label || shortId(id)}<//>`;
}

// The allocation's tasks, from its task states, else its group's tasks.
function taskNames(a) {
  const names = Object.keys(a.TaskStates || {});
  if (names.length) return names.sort();
  const tg = ((a.Job && a.Job.TaskGroups) || []).find((g) => g.Name === a.TaskGroup);
  return ((tg && tg.Tasks) || []).map((t) => t.Name);
}

function terminal(a) {
  return ['complete', 'failed', 'lost'].includes(a.ClientStatus) || a.DesiredStatus !== 'run';
}

const allocTabs = ['overview', 'logs'];

/** One allocation, by /allocations/<id>/<tab>: overview or logs. */
export function AllocationPage({ id, tab }) {
  const t = tab || 'overview';
  const alloc = useWatch('/v1/allocation/' + encodeURIComponent(id));
  const a = alloc.data;
  return html`<nav class="crumbs" aria-label="breadcrumb"><${Link} to="/allocations">Allocations<//> /</nav>
    <h1>Allocation <span title=${id}>${shortId(id)}</span> ${a && html`<${Status} value=${a.ClientStatus} />`}</h1>
    <${Loading} state=${alloc} />
    ${a && html`<div class="toolbar">
      <${Link} to=${'/history/alloc/' + a.ID}>History of this allocation<//>
      ${!terminal(a) && html`<${WriteButton} label="restart allocation" confirm=${'Restart every running task of allocation ' + shortId(a.ID) + '?'}
        onClick=${() => api.write('PUT', '/v1/client/allocation/' + a.ID + '/restart', { TaskName: '' })}>Restart<//>`}
      ${a.DesiredStatus === 'run' && html`<${WriteButton} danger label="stop allocation" confirm=${'Stop allocation ' + shortId(a.ID) + '? The scheduler places a replacement.'}
        onClick=${() => api.write('POST', '/v1/allocation/' + a.ID + '/stop')}>Stop<//>`}
    </div>
    <nav class="tabs" aria-label="allocation sections">${allocTabs.map((name) => html`<${Link}
      to=${'/allocations/' + id + (name === 'overview' ? '' : '/' + name)} aria-current=${name === t ? 'page' : undefined}>${name}<//>`)}</nav>
    ${t === 'overview' && html`<${AllocOverview} a=${a} />`}
    ${t === 'logs' && html`<${LogTail} a=${a} />`}`}`;
}
AllocationPage.title = 'Allocation';

function AllocOverview({ a }) {
  const dep = a.DeploymentStatus;
  return html`<${Facts} items=${[
      ['ID', a.ID], ['Name', a.Name], ['Namespace', a.Namespace],
      ['Job', html`<${Link} to=${jobPath(a.JobID, a.Namespace)}>${a.JobID}<//> (version ${a.JobVersion})`],
      ['Task group', a.TaskGroup],
      ['Client', html`<${IdLink} to="/clients/" id=${a.NodeID} label=${a.NodeName} />`],
      ['Evaluation', html`<${IdLink} to="/evaluations/" id=${a.EvalID} />`],
      ['Deployment', html`<${IdLink} to="/deployments/" id=${a.DeploymentID} />${dep ? (dep.Healthy === true ? ' (healthy)' : dep.Healthy === false ? ' (unhealthy)' : '') + (dep.Canary ? ' canary' : '') : ''}`],
      ['Desired', a.DesiredStatus + (a.DesiredDescription ? ': ' + a.DesiredDescription : '')],
      ['Client status', a.ClientStatus + (a.ClientDescription ? ': ' + a.ClientDescription : '')],
      a.PreviousAllocation && ['Previous allocation', html`<${IdLink} to="/allocations/" id=${a.PreviousAllocation} />`],
      a.NextAllocation && ['Next allocation', html`<${IdLink} to="/allocations/" id=${a.NextAllocation} />`],
      a.FollowupEvalID && ['Follow-up evaluation', html`<${IdLink} to="/evaluations/" id=${a.FollowupEvalID} />`],
      ['Created', when(a.CreateTime)], ['Modified', when(a.ModifyTime)],
    ]} />
    <h2>Tasks</h2>
    ${taskNames(a).length === 0 && html`<p class="empty">No task has reported yet.</p>`}
    ${taskNames(a).map((name) => html`<${TaskState} key=${name} a=${a} name=${name} />`)}
    <h2>Resources</h2>
    <${AllocResources} a=${a} />`;
}

function TaskState({ a, name }) {
  const s = (a.TaskStates || {})[name] || {};
  const events = [...(s.Events || [])].sort((x, y) => (y.Time || 0) - (x.Time || 0));
  return html`<section class="task" aria-label=${'task ' + name}>
    <h3>${name} <${Status} value=${s.State || 'pending'} /> ${s.Failed ? html`<span class="tag">failed</span>` : null}</h3>
    <${Facts} items=${[
      ['Restarts', s.Restarts || 0],
      ['Started', when(s.StartedAt)],
      ['Finished', when(s.FinishedAt)],
      s.LastRestart && ['Last restart', when(s.LastRestart)],
    ]} />
    <${Table} label=${'events of task ' + name} rows=${events} empty="No events yet." columns=${[
      ['Time', (e) => when(e.Time)],
      ['Type', (e) => e.Type],
      ['Message', (e) => e.DisplayMessage || e.Message || [e.ExitCode ? 'exit code ' + e.ExitCode : '', e.Signal ? 'signal ' + e.Signal : ''].filter(Boolean).join(', ')],
    ]} />
  </section>`;
}

function mb(n) { return n ? n + ' MB' : '—'; }

/** What the scheduler gave the allocation: cpu, memory, disk and its ports. */
function AllocResources({ a }) {
  const r = a.Resources || {};
  const ar = a.AllocatedResources || {};
  const shared = ar.Shared || {};
  const tasks = Object.entries(ar.Tasks || {}).sort(([x], [y]) => (x < y ? -1 : 1));
  const nets = shared.Networks || [];
  // Ports as the scheduler gave them: the shared list, else the networks' reserved and dynamic ports.
  let ports = shared.Ports || [];
  if (!ports.length) {
    ports = nets.flatMap((n) => [...(n.ReservedPorts || []), ...(n.DynamicPorts || [])].map((p) => ({ ...p, HostIP: n.IP })));
  }
  return html`<${Facts} items=${[
      ['CPU', r.CPU ? r.CPU + ' MHz' : '—'],
      ['Memory', mb(r.MemoryMB) + (r.MemoryMaxMB ? ' (max ' + r.MemoryMaxMB + ' MB)' : '')],
      ['Disk', mb(r.DiskMB || shared.DiskMB)],
      nets.length > 0 && ['Network', nets.map((n) => (n.Mode || 'host') + (n.IP ? ' ' + n.IP : '') + (n.MBits ? ', ' + n.MBits + ' Mbit/s' : '')).join('; ')],
    ]} />
    ${tasks.length > 0 && html`<${Table} label="resources by task" rows=${tasks} rowKey=${([n]) => n} columns=${[
      ['Task', ([n]) => n],
      ['CPU', ([, t]) => ((t.Cpu && t.Cpu.CpuShares) || 0) + ' MHz'],
      ['Memory', ([, t]) => mb(t.Memory && t.Memory.MemoryMB)],
    ]} />`}
    <h3>Ports</h3>
    <${Table} label="ports" rows=${ports} rowKey=${(p) => p.Label + ':' + p.Value} empty="No ports." columns=${[
      ['Label', (p) => p.Label],
      ['Host address', (p) => (p.HostIP ? p.HostIP + ':' : '') + p.Value],
      ['Value', (p) => p.Value],
      ['Mapped to', (p) => p.To || '—'],
      ...(ports.some((p) => p.HostNetwork) ? [['Host network', (p) => p.HostNetwork || '']] : []),
    ]} />`;
}

// How much of a log the tail keeps, and asks for when it opens.
const keep = 256 << 10;

/**
 * A live tail of one task's stdout or stderr (GET /v1/client/fs/logs,
 * followed, plain), keeping the last 256 KiB and scrolling with new
 * lines while the reader is at the bottom. Logs live on the client: the
 * past has none.
 */
function LogTail({ a }) {
  const at = useAtIndex();
  const tasks = taskNames(a);
  const [task, setTask] = useState(tasks[0] || '');
  const [type, setType] = useState('stdout');
  const [text, setText] = useState('');
  const [status, setStatus] = useState({ error: null, ended: false, again: 0 });
  const pre = useRef(null);
  const stick = useRef(true);
  useEffect(() => {
    if (at || !task) return undefined;
    const ctl = new AbortController();
    let buf = '';
    setText('');
    stick.current = true;
    setStatus((s) => ({ ...s, error: null, ended: false }));
    api.streamText('/v1/client/fs/logs/' + a.ID, { task, type, follow: true, origin: 'end', offset: keep, plain: true },
      (chunk) => {
        buf += chunk;
        if (buf.length > keep) buf = buf.slice(buf.length - keep);
        setText(buf);
      }, ctl.signal)
      .then(() => { if (!ctl.signal.aborted) setStatus((s) => ({ ...s, ended: true })); })
      .catch((e) => { if (!ctl.signal.aborted) setStatus((s) => ({ ...s, error: e })); });
    return () => ctl.abort();
  }, [a.ID, task, type, at, status.again]);
  // Keep the newest line in view while the reader has not scrolled up.
  useEffect(() => {
    const el = pre.current;
    if (el && stick.current) el.scrollTop = el.scrollHeight;
  }, [text]);
  if (at) {
    return html`<p class="empty" role="status">Logs are live only: the client keeps them, not the cluster's log.
      Go back to live (the time bar's "Back to live") to read them.</p>`;
  }
  const onScroll = (e) => {
    const el = e.target;
    stick.current = el.scrollTop + el.clientHeight >= el.scrollHeight - 8;
  };
  return html`<div class="toolbar logbar">
      <label>Task <select value=${task} onChange=${(e) => setTask(e.target.value)}>
        ${tasks.map((n) => html`<option value=${n}>${n}</option>`)}
      </select></label>
      <span role="group" aria-label="stream" class="switch">
        ${['stdout', 'stderr'].map((s) => html`<button type="button" aria-pressed=${type === s ? 'true' : 'false'}
          onClick=${() => setType(s)}>${s}</button>`)}
      </span>
      ${(status.ended || status.error) && html`<span class="small">${status.ended ? 'The stream ended (the task is dead).' : 'The stream broke.'}
        <button type="button" onClick=${() => setStatus((s) => ({ ...s, again: s.again + 1 }))}>Read again</button></span>`}
    </div>
    <${ErrorBox} error=${status.error} />
    <pre class="log" ref=${pre} tabindex="0" onScroll=${onScroll}
      aria-label=${'log of task ' + task + ', ' + type}>${text || (status.ended ? '(empty)' : '')}</pre>`;
}
