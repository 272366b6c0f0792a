// The time bar on every page: a slider over the log's indexes that moves
// the whole UI to a past state (at_index), steps event by event, marks
// where notable things happened, and, while in the past, a banner saying
// which moment is shown. The index lives in the URL, so a link
// reproduces the view.
import { html, useState, useEffect, useRef, useAtIndex, api, navigate, ago, Link } from './ui.js';

// How far back the slider's marks are looked for: the newest events of
// the log, read once when the bar opens and then followed live.
const markWindow = 50000;

/** Whether an event is worth a mark on the slider, and its label. */
export function markOf(ev) {
  const p = ev.Payload || {};
  switch (ev.Type) {
    case 'NodeStatusUpdated':
      return p.Status === 'down' ? { kind: 'node-down', label: 'node ' + String(p.ID).slice(0, 8) + ' went down' } : null;
    case 'DeploymentStatusUpdated':
      return p.Status === 'failed' ? { kind: 'deploy-failed', label: 'deployment ' + String(p.ID).slice(0, 8) + ' failed' } : null;
    case 'EvalsUpserted': {
      const b = (p.Evals || []).find((e) => e.Status === 'blocked');
      return b ? { kind: 'eval-blocked', label: 'evaluation blocked for job ' + b.JobID } : null;
    }
    default:
      return null;
  }
}

function withAt(index) {
  const q = new URLSearchParams(location.search);
  if (index > 0) q.set('at_index', String(index));
  else q.delete('at_index');
  const s = q.toString();
  return location.pathname + (s ? '?' + s : '');
}

/** Moves the UI to index (0: live), as a new history entry. */
export function travel(index) { navigate(withAt(index)); }

function useLastIndex() {
  const [last, setLast] = useState({ LastIndex: 0, Length: 0, error: null });
  useEffect(() => {
    let stop = false;
    let timer;
    const poll = async () => {
      try { const l = await api.lastIndex(); if (!stop) setLast({ ...l, error: null }); } catch (e) { if (!stop) setLast((s) => ({ ...s, error: e })); }
      if (!stop) timer = setTimeout(poll, 2000);
    };
    poll();
    return () => { stop = true; clearTimeout(timer); };
  }, []);
  return last;
}

// How often the marks are brought up to date with the log's end. Each
// look is a short read, not a stream kept open: a page has few
// connections to its server, and the pages' own reads need them.
const markEvery = 15000;

/**
 * Reads the notable events of the log's indexes (from, to]: a stream
 * filtered by topic, closed once it reaches to or goes quiet.
 */
async function scanMarks(from, to, found, signal) {
  const ctl = new AbortController();
  const stop = () => ctl.abort();
  signal.addEventListener('abort', stop);
  let quiet = setTimeout(stop, 1500);
  try {
    await api.stream('/v1/operator/log/stream', { index: from + 1, topic: ['Node', 'Deployment', 'Evaluation'] }, (frame) => {
      clearTimeout(quiet);
      quiet = setTimeout(stop, 1500);
      for (const ev of frame.Events || []) {
        const m = markOf(ev);
        if (m) found.push({ ...m, index: ev.Index, time: ev.Time });
      }
      if (frame.Index >= to) stop();
    }, ctl.signal);
  } catch (e) {
    if (!ctl.signal.aborted) throw e;
  } finally {
    clearTimeout(quiet);
    signal.removeEventListener('abort', stop);
  }
}

function useMarks(last) {
  const [marks, setMarks] = useState([]);
  const started = last > 0;
  // The log's end as the bar's poll last read it (useLastIndex).
  const lastRef = useRef(last);
  lastRef.current = last;
  useEffect(() => {
    if (!started) return undefined;
    const ctl = new AbortController();
    const found = [];
    let timer;
    let seen = Math.max(0, last - markWindow);
    const look = async () => {
      try {
        const end = lastRef.current;
        if (end > seen) {
          await scanMarks(seen, end, found, ctl.signal);
          seen = end;
          if (found.length > 500) found.splice(0, found.length - 500);
          setMarks(found.slice());
        }
      } catch (_) { return; /* no operator:read: no marks */ }
      if (!ctl.signal.aborted) timer = setTimeout(look, markEvery);
    };
    // After the page's own first reads: the marks are no part of its first screen.
    timer = setTimeout(look, 1500);
    return () => { ctl.abort(); clearTimeout(timer); };
  }, [started]);
  return marks;
}

function useEntryTime(index) {
  const [entry, setEntry] = useState(null);
  useEffect(() => {
    if (!index) { setEntry(null); return; }
    let stop = false;
    api.entryAt(index).then((e) => { if (!stop) setEntry(e); }).catch(() => {});
    return () => { stop = true; };
  }, [index]);
  return entry;
}

/** The time bar. */
export function TimeBar() {
  const at = useAtIndex();
  const last = useLastIndex();
  const marks = useMarks(last.LastIndex);
  const entry = useEntryTime(at);
  const [drag, setDrag] = useState(0);
  const [timeInput, setTimeInput] = useState('');
  const [err, setErr] = useState(null);
  const max = Math.max(last.LastIndex, at, 1);
  const shown = drag || at || max;

  const step = async (dir) => {
    setErr(null);
    try {
      if (dir < 0) {
        // From live, the step goes to the newest entry before the next
        // one: read the log's end rather than trust the last poll.
        const prev = await api.entryBefore(at || (await api.lastIndex()).LastIndex + 1);
        if (prev) travel(prev);
      } else if (at) {
        const next = await api.entryAt(at + 1);
        travel(next ? next.Index : 0);
      }
    } catch (e) { setErr(e); }
  };
  const goTime = async (e) => {
    e.preventDefault();
    setErr(null);
    try {
      const d = new Date(timeInput);
      if (isNaN(d)) throw new Error('not a time: ' + timeInput);
      const i = await api.indexAtTime(d.toISOString());
      if (!i) throw new Error('that time is before the first entry');
      travel(i);
    } catch (e2) { setErr(e2); }
  };

  return html`<section class=${'timebar' + (at ? ' past' : '')} aria-label="time travel">
    ${at ? html`<div class="banner" role="status">
        As of index <strong>${at}</strong>${entry && html`, ${new Date(entry.Time).toLocaleString()}, ${ago(new Date(entry.Time))}`}.
        Writes are disabled. <button type="button" onClick=${() => travel(0)}>Back to live</button>
      </div>` : null}
    <div class="controls">
      <button type="button" onClick=${() => step(-1)} aria-label="previous event" title="previous event">◀</button>
      <div class="track">
        <input type="range" min="1" max=${max} value=${shown} aria-label="log index shown"
          aria-valuetext=${at ? 'index ' + shown : 'live, index ' + shown}
          onInput=${(e) => setDrag(Number(e.target.value))}
          onChange=${(e) => { const v = Number(e.target.value); setDrag(0); travel(v >= last.LastIndex ? 0 : v); }} />
        <div class="marks">${marks.map((m) => html`<button type="button" class=${'mark ' + m.kind}
            style=${'left:' + (100 * (m.index - 1) / Math.max(1, max - 1)) + '%'}
            title=${m.label + ' (index ' + m.index + ')'} aria-label=${m.label + ' at index ' + m.index}
            onClick=${() => travel(m.index)}></button>`)}</div>
      </div>
      <button type="button" onClick=${() => step(1)} disabled=${!at} aria-label="next event" title="next event">▶</button>
      <span class="where">${at ? 'index ' + shown + ' of ' + max : html`<strong>live</strong> · index ${drag || max}`}</span>
      <form onSubmit=${goTime} class="goto">
        <label>At time <input type="datetime-local" step="1" value=${timeInput} onInput=${(e) => setTimeInput(e.target.value)} /></label>
        <button type="submit">Go</button>
      </form>
      ${at ? html`<button type="button" onClick=${() => travel(0)}>Live</button>` : null}
      <${Link} to="/timeline" class="small">timeline</${Link}>
    </div>
    ${last.error && last.error.denied ? html`<p class="note">The slider needs a token that may read the log (operator read): ${last.error.message}</p>`
      : (err || last.error) && html`<p class="error" role="alert">${(err || last.error).message}</p>`}
  </section>`;
}
