// The operator's page: the projections (rebuild, verify, the running
// job's progress, cancel), the raft peers and the leader, autopilot's
// health, a snapshot download, the history store serving past states,
// and the Kafka mirror. These read the server's own live state, which
// the time slider does not move: they are polled while the page is open.
import { html, useState, useEffect, useAtIndex, api, Loading, ErrorBox, Table, Facts, WriteButton, Status, when } from '../ui.js';

/**
 * Polls path every ms milliseconds (live: operator state has no past),
 * returning {data, error, loading}; again, when it changes, reads at once.
 */
export function usePoll(path, ms, again) {
  const [state, setState] = useState({ data: undefined, error: null, loading: true });
  useEffect(() => {
    let stop = false;
    let timer;
    const ctl = new AbortController();
    const poll = async () => {
      try {
        const a = await api.get(path, {}, { live: true, signal: ctl.signal });
        if (!stop) setState({ data: a.data, error: null, loading: false });
      } catch (e) {
        if (!stop) setState((s) => ({ data: e.status === 404 ? undefined : s.data, error: e, loading: false }));
      }
      if (!stop) timer = setTimeout(poll, ms);
    };
    poll();
    return () => { stop = true; clearTimeout(timer); ctl.abort(); };
  }, [path, ms, again]);
  return state;
}

function secs(s) {
  if (!s || s < 0) return '';
  if (s < 90) return Math.round(s) + ' s';
  if (s < 5400) return Math.round(s / 60) + ' min';
  return (s / 3600).toFixed(1) + ' h';
}

function bytes(n) {
  if (!n) return '0 B';
  const u = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  const i = Math.min(u.length - 1, Math.floor(Math.log(n) / Math.log(1024)));
  return (n / 1024 ** i).toFixed(i ? 1 : 0) + ' ' + u[i];
}

/** /operator. */
export function OperatorPage() {
  const at = useAtIndex();
  return html`<h1>Operator</h1>
    ${at ? html`<p class="tag" role="note">This page shows the server's state now: the time slider does not apply to it.</p>` : null}
    <${Projections} />
    <${Raft} />
    <${Snapshot} />
    <${HistoryStore} />
    <${Mirror} />`;
}
OperatorPage.title = 'Operator';

const running = (j) => j && (j.State === 'running' || j.State === 'queued');

function Projections() {
  const [again, setAgain] = useState(0);
  const list = usePoll('/v1/operator/projections', 3000, again);
  const job0 = list.data && list.data.Job;
  const job = usePoll('/v1/operator/projections/job', running(job0) ? 1000 : 3000, again);
  const j = job.data || job0;
  const submit = async (kind, names) => {
    await api.write('POST', '/v1/operator/projections/' + kind, { Projections: names });
    setAgain((n) => n + 1);
  };
  const rows = (list.data && list.data.Projections) || [];
  return html`<section aria-labelledby="projections-h">
    <h2 id="projections-h">Projections</h2>
    <${Loading} state=${list} />
    ${list.data && html`<div class="toolbar">
      <${WriteButton} label="rebuild every projection" confirm="Rebuild every projection from the archive? The server keeps serving meanwhile."
        onClick=${() => submit('rebuild', [])}>Rebuild all<//>
      <${WriteButton} label="verify every projection" onClick=${() => submit('verify', [])}>Verify all<//>
    </div>
    <${Table} label="projections" rows=${rows} rowKey=${(p) => p.Name} columns=${[
      ['Name', (p) => p.Name],
      ['Version', (p) => p.StoredVersion === p.Version ? p.Version : p.Version + ' (stored ' + p.StoredVersion + ')'],
      ['State', (p) => html`<${Status} value=${p.State} />`],
      ['Applied', (p) => p.Applied],
      ['Modified at', (p) => p.ModifyIndex],
      ['Progress', (p) => p.Progress ? Math.round(100 * p.Progress) + '%' : ''],
      ['Lag (events)', (p) => p.LagEvents || ''],
      ['Actions', (p) => html`<${WriteButton} label=${'rebuild ' + p.Name} onClick=${() => submit('rebuild', [p.Name])}>Rebuild<//>
        <${WriteButton} label=${'verify ' + p.Name} onClick=${() => submit('verify', [p.Name])}>Verify<//>`],
    ]} />`}
    <h3>Rebuild or verify job</h3>
    ${j ? html`<${ProjectionJob} job=${j} onCancel=${async () => { await api.write('DELETE', '/v1/operator/projections/job'); setAgain((n) => n + 1); }} />`
      : job.error && job.error.status !== 404 ? html`<${ErrorBox} error=${job.error} />`
        : html`<p class="empty">No projection job has run on this server since it started.</p>`}
  </section>`;
}

function ProjectionJob({ job: j, onCancel }) {
  const pct = j.Target ? Math.min(100, Math.round((100 * j.Events) / j.Target)) : (j.State === 'done' ? 100 : 0);
  return html`<div class="opjob">
    <${Facts} items=${[
      ['Job', j.ID + ' · ' + j.Kind + ' of ' + ((j.Projections || []).length ? j.Projections.join(', ') : 'every projection')],
      ['State', html`<${Status} value=${j.State} />${j.Phase ? ' · ' + j.Phase : ''}`],
      ['Events', j.Events + ' of ' + j.Target + (j.LagEvents ? ' · ' + j.LagEvents + ' behind' : '')],
      ['Rate', j.EventsPerSecond ? Math.round(j.EventsPerSecond) + ' events/s' : ''],
      ['ETA', running(j) ? secs(j.ETASeconds) : ''],
      ['Switch', j.SwitchSeconds ? j.SwitchSeconds.toFixed(3) + ' s (reads paused ' + (j.ReadPauseSeconds || 0).toFixed(3) + ' s)' : ''],
      ['Started', when(j.Started)], ['Finished', when(j.Finished)],
      j.Error && ['Error', html`<span class="bad">${j.Error}</span>`],
    ]} />
    <label class="progress">Progress of ${j.Kind} job ${j.ID}
      <progress max="100" value=${pct}>${pct}%</progress> ${pct}%</label>
    ${running(j) && html`<${WriteButton} danger label="cancel the projection job" confirm="Cancel the running projection job?" onClick=${onCancel}>Cancel<//>`}
    ${(j.Results || []).length > 0 && html`<${Table} label="verify results" rows=${j.Results} rowKey=${(r) => r.Projection} columns=${[
      ['Projection', (r) => r.Projection],
      ['Match', (r) => html`<${Status} value=${r.Match ? 'passing' : 'failed'} />`],
      ['Live checksum', (r) => html`<code>${r.Live}</code>`],
      ['Rebuilt checksum', (r) => html`<code>${r.Rebuilt}</code>`],
    ]} />`}
  </div>`;
}

function Raft() {
  const conf = usePoll('/v1/operator/raft/configuration', 5000);
  const leader = usePoll('/v1/status/leader', 5000);
  const health = usePoll('/v1/operator/autopilot/health', 5000);
  const hs = {};
  for (const s of (health.data && health.data.Servers) || []) hs[s.ID] = s;
  return html`<section aria-labelledby="raft-h">
    <h2 id="raft-h">Raft peers</h2>
    <${Loading} state=${conf} />
    ${leader.data !== undefined && html`<p>Leader: <strong>${leader.data || 'none'}</strong>${conf.data ? ' · applied index ' + conf.data.Index : ''}
      ${health.data ? html` · autopilot: <${Status} value=${health.data.Healthy ? 'healthy' : 'unhealthy'} />, failure tolerance ${health.data.FailureTolerance}` : null}</p>`}
    ${conf.data && html`<${Table} label="raft peers" rows=${conf.data.Servers || []} rowKey=${(s) => s.ID} columns=${[
      ['ID', (s) => s.ID],
      ['Address', (s) => s.Address],
      ['Role', (s) => (s.Leader ? 'leader' : 'follower') + (s.Voter ? ', voter' : ', non-voter')],
      ['Health', (s) => hs[s.ID] ? html`<${Status} value=${hs[s.ID].Healthy ? 'healthy' : 'unhealthy'} />` : ''],
      ['Last index', (s) => hs[s.ID] ? hs[s.ID].LastIndex : ''],
      ['Last contact', (s) => hs[s.ID] ? hs[s.ID].LastContact : ''],
    ]} />`}
  </section>`;
}

function Snapshot() {
  const [done, setDone] = useState('');
  const save = async () => {
    const name = 'ordo-' + new Date().toISOString().replace(/[:.]/g, '-') + '.snap';
    setDone('');
    await api.download('/v1/operator/snapshot', name);
    setDone('Saved ' + name + '.');
  };
  return html`<section aria-labelledby="snap-h">
    <h2 id="snap-h">Snapshot</h2>
    <p>A snapshot of the cluster's state and log, as <code>ordo operator snapshot save</code> writes it.</p>
    <${SaveButton} onClick=${save} />
    ${done && html`<span role="status"> ${done}</span>`}
  </section>`;
}

// A read that saves a file: allowed in the past too (it is not a write).
function SaveButton({ onClick }) {
  const [busy, setBusy] = useState(false);
  const [err, setErr] = useState(null);
  const run = async () => {
    setBusy(true);
    setErr(null);
    try { await onClick(); } catch (e) { setErr(e); } finally { setBusy(false); }
  };
  return html`<span class="write"><button type="button" disabled=${busy} onClick=${run}>
    ${busy ? 'Saving…' : 'Download a snapshot'}</button>${err && html`<${ErrorBox} error=${err} />`}</span>`;
}

function HistoryStore() {
  const st = usePoll('/v1/operator/history', 5000);
  const v = st.data && st.data.Versions;
  return html`<section aria-labelledby="hist-h">
    <h2 id="hist-h">History store (past states)</h2>
    ${st.error && st.error.status === 404 ? html`<p class="empty">This server serves no past states.</p>` : html`<${Loading} state=${st} />`}
    ${st.data && html`<${Facts} items=${[
      ['Applied index', st.data.Applied],
      ['Versions store', v ? 'kept' : 'not kept (past states are rebuilt from the archive)'],
      v && ['Oldest index served', v.Oldest],
      v && ['Disk', bytes(v.Bytes)],
      v && ['Lag', v.Lag + ' indexes'],
      v && ['Versions kept', v.Kept || 'all'],
      v && v.Backfill && ['Backfill', 'indexes ' + v.Backfill.From + '–' + v.Backfill.To + ', reached ' + v.Backfill.Reached + ' (' + v.Backfill.Events + ' events), since ' + when(v.Backfill.Started)],
    ]} />
    ${v && html`<${Table} label="versions store spans" rows=${v.Spans || []} rowKey=${(s) => s.From} columns=${[
      ['From', (s) => s.From], ['To', (s) => s.To], ['Projection versions', (s) => s.Tag],
      ['Serving', (s) => s.Current ? 'yes' : 'no (written by other versions)'],
    ]} />`}`}
  </section>`;
}

function Mirror() {
  const st = usePoll('/v1/operator/mirror', 3000);
  const m = st.data;
  return html`<section aria-labelledby="mirror-h">
    <h2 id="mirror-h">Kafka mirror</h2>
    <${Loading} state=${st} />
    ${m && (!m.Enabled
      ? html`<p class="empty">The Kafka mirror is not configured on this server (no <code>mirror</code> block).</p>`
      : html`<${Facts} items=${[
        ['State', html`<${Status} value=${m.Running ? 'running' : 'pending'} /> ${m.Running ? 'this server mirrors (it leads)' : 'not running on this server'}`],
        ['Brokers', (m.Brokers || []).join(', ') + (m.BrokersReachable ? ' (reachable)' : ' (unreachable)')],
        ['Topic', m.Topic + ' · ' + m.Partitions + ' partitions · format ' + m.Format],
        ['Mirrored up to', 'index ' + m.MirroredIndex + ' seq ' + m.MirroredSeq],
        ['Lag', m.LagEvents + ' events' + (m.LagSeconds ? ', oldest ' + secs(m.LagSeconds) + ' old' : '')],
        ['Mirrored since start', m.EventsMirrored + ' events'],
        ['Resumed at', 'index ' + m.ResumeIndex + ' seq ' + m.ResumeSeq],
        m.LastError && ['Last error', html`<span class="bad">${m.LastError}</span> ${when(m.LastErrorTime)}`],
      ]} />`)}
  </section>`;
}
