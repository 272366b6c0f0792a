// The timeline: the event log itself, scrolling live. Events stream from
// /v1/operator/log/stream into a plain array outside preact's state (at
// most `cap` of them, the oldest dropped), the view is refreshed at most
// once per animation frame, and only the rows in view are rendered (a
// fixed row height), so thousands of events a second do not freeze it.
// At a past index it shows the events up to that index, ending at it.
import {
  html, useState, useEffect, useRef, useMemo, useCallback, useAtIndex, api, Link, ErrorBox, NamespacePicker,
} from '../ui.js';
import { Component } from '../vendor/preact.mjs';
import { entityPath, entityParams, historyPath, entityLabel } from './history.js';

/** The event topics, as the stream's topic parameter names them. */
export const topics = ['Job', 'Allocation', 'Evaluation', 'Deployment', 'Node', 'Namespace', 'Variable', 'Service',
  'CSIVolume', 'NodeRequest', 'ACLToken', 'ACLPolicy', 'ACLRole', 'RootKey', 'Operator', 'Server', 'SchedulerConfig',
  'NodePool', 'Component'];

const rowHeight = 26; // px: .vlist .vrow
const openHeight = 260; // px: an expanded row with its payload
const cap = 100000; // events kept; the oldest are dropped past it
const span = 500; // indexes read at first, and by each "load older"
const overscan = 10; // rows rendered beyond the view, each side
const chartSeconds = 300; // the events/s chart's span

// Whether an event passes the server-side filters (used for pages read
// from /v1/operator/log, which has none): a topic of the set (none: all)
// and the namespace (events of no namespace always pass, as the stream).
function serverMatch(ev, topicSet, ns) {
  if (topicSet.size && !topicSet.has(ev.Topic)) return false;
  return !ns || !ev.Namespace || ev.Namespace === ns;
}

// The client-side filters: substrings of an entity id and of the actor.
function clientMatch(ev, entity, actor) {
  if (actor && !String(ev.Actor || '').toLowerCase().includes(actor)) return false;
  if (!entity) return true;
  if (String(ev.Key || '').toLowerCase().includes(entity)) return true;
  return (ev.Keys || []).some((k) => String(k.Value).toLowerCase().includes(entity));
}

// Reads the archived events of indexes [from, to] (to 0: to the end),
// page by page, keeping those keep accepts.
async function readRange(from, to, keep, signal) {
  const out = [];
  for (let next = from; next > 0 && (!to || next <= to);) {
    const a = await api.get('/v1/operator/log', { from: next, limit: 10000 }, { live: true, signal });
    for (const ev of a.data.Events) if ((!to || ev.Index <= to) && keep(ev)) out.push(ev);
    next = a.data.NextIndex || 0;
  }
  return out;
}

/** /timeline: the log, live (or up to the slider's index). */
export function TimelinePage() {
  const at = useAtIndex();
  const [picked, setPicked] = useState([]); // topics; none: all
  const [ns, setNs] = useState('');
  const [entity, setEntity] = useState('');
  const [actor, setActor] = useState('');
  const [follow, setFollow] = useState(true);
  const [open, setOpen] = useState(''); // the expanded row's key
  const [error, setError] = useState(null);
  const [, setFrame] = useState(0); // bumped once per animation frame with news
  const [rate, setRate] = useState(0);
  const [view, setView] = useState({ top: 0, height: 600 });
  const [older, setOlder] = useState({ busy: false, error: null });
  const list = useRef(null);
  // The buffer: not preact state, so events arriving cost no render.
  const buf = useRef({ events: [], dropped: 0, from: 0, received: 0, pending: false, prepended: 0 });
  const rates = useRef([[], []]); // the chart's [seconds, events/s]
  const followRef = useRef(follow);
  followRef.current = follow && !at;

  const topicKey = picked.join(',');
  useEffect(() => {
    const b = buf.current;
    b.events = [];
    b.dropped = 0;
    b.from = 0;
    setError(null);
    setOpen('');
    const ctl = new AbortController();
    let raf = 0;
    const flush = () => {
      if (b.pending) return;
      b.pending = true;
      raf = requestAnimationFrame(() => {
        b.pending = false;
        // Past the cap the oldest go, once a frame (not once an event);
        // a reader scrolled up keeps the rows they look at.
        if (b.events.length > cap) {
          const n = b.events.length - cap;
          b.events.splice(0, n);
          b.dropped += n;
          if (!followRef.current) b.prepended -= n;
        }
        setFrame((n) => n + 1);
      });
    };
    const add = (evs) => {
      for (const ev of evs) b.events.push(ev);
      b.received += evs.length;
      flush();
    };
    const topicSet = new Set(picked);
    (async () => {
      try {
        if (at) {
          // The past: the events up to the index shown, ending at it.
          b.from = Math.max(1, at - span + 1);
          add(await readRange(b.from, at, (ev) => serverMatch(ev, topicSet, ns), ctl.signal));
          return;
        }
        const last = await api.lastIndex();
        b.from = Math.max(1, last.LastIndex - span + 1);
        let next = b.from;
        let pause = 500;
        let failed = false;
        // Follow the stream; when it ends or fails, resume after the last
        // index seen.
        while (!ctl.signal.aborted) {
          try {
            await api.stream('/v1/operator/log/stream', { index: next, topic: picked, namespace: ns }, (frame) => {
              if (!frame.Events) return;
              if (failed) { failed = false; setError(null); }
              next = frame.Index + 1;
              add(frame.Events);
              pause = 500;
            }, ctl.signal);
            setError(null);
          } catch (e) {
            if (ctl.signal.aborted) return;
            failed = true;
            setError(e);
            if (e.denied) return;
          }
          await new Promise((r) => setTimeout(r, pause));
          pause = Math.min(pause * 2, 10000);
        }
      } catch (e) {
        if (!ctl.signal.aborted) setError(e);
      }
    })();
    return () => { ctl.abort(); cancelAnimationFrame(raf); b.pending = false; };
  }, [at, topicKey, ns]);

  // Events per second, from what arrived in the last second.
  useEffect(() => {
    let seen = buf.current.received;
    const t = setInterval(() => {
      const n = buf.current.received;
      const r = rates.current;
      r[0].push(Math.floor(Date.now() / 1000));
      r[1].push(n - seen);
      if (r[0].length > chartSeconds) { r[0].shift(); r[1].shift(); }
      setRate(n - seen);
      seen = n;
    }, 1000);
    return () => clearInterval(t);
  }, []);

  // The view's size, and keeping it when the window resizes.
  useEffect(() => {
    const el = list.current;
    if (!el) return undefined;
    const measure = () => setView({ top: el.scrollTop, height: el.clientHeight });
    measure();
    addEventListener('resize', measure);
    return () => removeEventListener('resize', measure);
  }, []);

  const b = buf.current;
  const ent = entity.trim().toLowerCase();
  const act = actor.trim().toLowerCase();
  const rows = ent || act ? b.events.filter((ev) => clientMatch(ev, ent, act)) : b.events;
  const openAt = open ? rows.findIndex((ev) => keyOf(ev) === open) : -1;
  const total = rows.length * rowHeight + (openAt >= 0 ? openHeight - rowHeight : 0);

  // After each render: to the newest row while following; at a past
  // index to the end (the row at the index); after "load older", where
  // the reader was.
  useEffect(() => {
    const el = list.current;
    if (!el) return;
    if (b.prepended) {
      el.scrollTop += b.prepended * rowHeight;
      b.prepended = 0;
    } else if ((followRef.current && total !== b.total) || (at && !b.placed)) {
      el.scrollTop = total; // the browser stops it at the end
      if (at && rows.length) b.placed = true;
    }
    b.total = total;
  });
  useEffect(() => { b.placed = false; }, [at, topicKey, ns]);

  const onScroll = (e) => {
    const el = e.currentTarget;
    const top = el.scrollTop;
    const height = el.clientHeight;
    const bottom = top + height >= el.scrollHeight - rowHeight;
    // Following, the view is the end whatever the scroll event says: the
    // scroll the follow itself makes costs no second render.
    if (followRef.current && bottom && height === view.height) return;
    setView((v) => (v.top === top && v.height === height ? v : { top, height }));
    // Only the reader's own scroll turns following off or on: rows that
    // arrive between the follow's scroll and this event move the end,
    // which is no reason to stop following.
    const byReader = performance.now() - (b.readerAt || 0) < 1000;
    if (!at && byReader && bottom !== follow) setFollow(bottom);
  };
  const readerScrolls = () => { b.readerAt = performance.now(); };

  const loadOlder = async () => {
    if (b.from <= 1) return;
    setOlder({ busy: true, error: null });
    try {
      const to = b.from - 1;
      const from = Math.max(1, b.from - span);
      const topicSet = new Set(picked);
      const evs = await readRange(from, to, (ev) => serverMatch(ev, topicSet, ns));
      const room = Math.max(0, cap - b.events.length);
      const kept = evs.slice(Math.max(0, evs.length - room));
      b.events = kept.concat(b.events);
      b.from = from;
      b.prepended += ent || act ? kept.filter((ev) => clientMatch(ev, ent, act)).length : kept.length;
      setFollow(false);
      setOlder({ busy: false, error: null });
    } catch (e) {
      setOlder({ busy: false, error: e });
    }
  };

  // The rows in view.
  const viewTop = followRef.current ? Math.max(0, total - view.height) : view.top;
  const first = Math.max(0, Math.floor(viewTop / rowHeight) - overscan);
  const last = Math.min(rows.length, Math.ceil((viewTop + view.height) / rowHeight) + overscan);
  const shown = [];
  for (let i = first; i < last; i++) shown.push(i);
  if (openAt >= 0 && (openAt < first || openAt >= last)) shown.push(openAt);
  const topOf = (i) => i * rowHeight + (openAt >= 0 && i > openAt ? openHeight - rowHeight : 0);

  const toggleTopic = (t, on) => setPicked(on ? [...picked, t].sort((x, y) => topics.indexOf(x) - topics.indexOf(y)) : picked.filter((x) => x !== t));

  const toggle = useCallback((k) => setOpen((o) => (o === k ? '' : k)), []);
  // The filters change when a person changes them, not with each frame:
  // kept as one vnode, preact skips them while events stream.
  const filters = useMemo(() => html`<div class="toolbar tl-filters">
      <details class="topics">
        <summary>Topics: ${picked.length ? picked.join(', ') : 'all'}</summary>
        <fieldset>
          <legend>Topics shown (none ticked: all)</legend>
          ${topics.map((t) => html`<label><input type="checkbox" aria-label=${'topic ' + t} checked=${picked.includes(t)}
            onChange=${(e) => toggleTopic(t, e.target.checked)} /> ${t}</label>`)}
          <button type="button" aria-label="all topics" onClick=${() => setPicked([])}>All topics</button>
        </fieldset>
      </details>
      <${NamespacePicker} value=${ns} onChange=${setNs} />
      <label>Entity id <input type="search" value=${entity} placeholder="id or part of it"
        onInput=${(e) => setEntity(e.target.value)} /></label>
      <label>Actor <input type="search" value=${actor} onInput=${(e) => setActor(e.target.value)} /></label>
      <label><input type="checkbox" checked=${follow && !at} disabled=${!!at}
        onChange=${(e) => setFollow(e.target.checked)} /> Follow newest</label>
    </div>`, [picked, ns, entity, actor, follow, at]);

  return html`<h1>Timeline</h1>
    <p class="lede">Every event of the log, newest last${at ? html`, up to index <strong>${at}</strong> (highlighted)` : ', as it is applied'}.</p>
    ${filters}
    <div class="toolbar tl-status">
      <button type="button" onClick=${loadOlder} disabled=${older.busy || b.from <= 1}>
        ${older.busy ? 'Loading older…' : 'Load older events'}</button>
      <span aria-live="off" class="tl-count">${rate} events/s · ${rows.length}${rows.length !== b.events.length ? ' of ' + b.events.length : ''} events shown
        ${b.from > 1 ? ' · from index ' + b.from : ' · from the first index'}${b.dropped ? ' · ' + b.dropped + ' oldest dropped' : ''}</span>
      ${at ? html`<span class="tag">not following: the slider is at index ${at}</span>` : null}
    </div>
    <${RateChart} data=${rates.current} tick=${rate + ':' + rates.current[0].length} />
    <${ErrorBox} error=${error || older.error} />
    <div class="vlist tl-list" ref=${list} onScroll=${onScroll} onWheel=${readerScrolls} onKeyDown=${readerScrolls}
      onPointerDown=${readerScrolls} onTouchStart=${readerScrolls} role="list" aria-label="events" tabindex="0">
      <div style=${'position:relative;height:' + total + 'px'}>
        ${shown.map((i) => html`<${Row} key=${keyOf(rows[i])} ev=${rows[i]} top=${topOf(i)} at=${at} odd=${i % 2 === 1}
          open=${i === openAt} toggle=${toggle} />`)}
      </div>
    </div>
    ${rows.length === 0 && !error && html`<p class="empty">No events${at ? ' up to index ' + at : ' yet'} for these filters.</p>`}`;
}
TimelinePage.title = 'Timeline';

function keyOf(ev) { return ev.Index + '.' + ev.Seq; }

// An event's local time of day to the millisecond, built by hand:
// toLocaleTimeString costs more than the rest of a row.
function timeOf(t) {
  const d = new Date(t);
  if (isNaN(d)) return '';
  const p = (n, w) => String(n).padStart(w, '0');
  return p(d.getHours(), 2) + ':' + p(d.getMinutes(), 2) + ':' + p(d.getSeconds(), 2) + '.' + p(d.getMilliseconds(), 3);
}

// An event's row: its index (a button that opens the payload), time,
// type, actor, its entities (each to its page and its own timeline) and
// the cluster at its index.
class Row extends Component {
  // A row already shown is left alone unless it moved or opened: each
  // frame renders only the rows that came into view.
  shouldComponentUpdate(n) {
    const p = this.props;
    return n.ev !== p.ev || n.top !== p.top || n.open !== p.open || n.at !== p.at || n.odd !== p.odd;
  }
  render(props) { return rowOf(props); }
}

function rowOf({ ev, top, open, toggle, at, odd }) {
  const onToggle = () => toggle(keyOf(ev));
  const keys = (ev.Keys || []).filter((k) => k.Kind !== 'namespace' || (ev.Keys || []).length === 1);
  const few = keys.slice(0, 4);
  const id = 'ev-' + ev.Index + '-' + ev.Seq;
  return html`<div class=${'vrow tl-row' + (odd ? ' odd' : '') + (open ? ' open' : '') + (at && ev.Index === at ? ' at' : '')} role="listitem"
      style=${'top:' + top + 'px' + (open ? ';height:' + openHeight + 'px' : '')}>
    <div class="tl-line">
      <button type="button" class="tl-toggle" onClick=${onToggle} aria-expanded=${open} aria-controls=${open ? id : undefined}
        aria-label=${(open ? 'hide' : 'show') + ' the payload of ' + ev.Type + ' at index ' + ev.Index}>${open ? '▾' : '▸'} ${ev.Index}</button>
      <span class="tl-time" title=${ev.Time}>${timeOf(ev.Time)}</span>
      <span class="tl-type">${ev.Type}</span>
      <span class="tl-actor" title="actor">${ev.Actor || ''}</span>
      <span class="tl-keys">${few.map((k) => html`<${KeyLinks} k=${k} ns=${ev.Namespace} />`)}${keys.length > few.length ? ' +' + (keys.length - few.length) + ' more' : ''}</span>
      <a class="tl-at" href=${'/ui/jobs?at_index=' + ev.Index} aria-label=${'view the cluster at index ' + ev.Index}>@${ev.Index}</a>
    </div>
    ${open && html`<div class="tl-payload" id=${id}>
      <p>${ev.Topic} · ${ev.Namespace ? 'namespace ' + ev.Namespace + ' · ' : ''}seq ${ev.Seq} · version ${ev.Version} · ${ev.Time}${ev.CorrelationID ? ' · correlation ' + ev.CorrelationID : ''}</p>
      <p>${keys.map((k) => html`<${KeyLinks} k=${k} ns=${ev.Namespace} />`)}</p>
      <pre class="json">${JSON.stringify(ev.Payload, null, 2)}</pre>
    </div>`}
  </div>`;
}

function KeyLinks({ k, ns }) {
  const page = entityPath(k.Kind, k.Value, ns);
  const hist = historyPath(k.Kind, k.Value, ns);
  const label = entityLabel(k.Kind, k.Value);
  return html`<span class="tl-key">
    ${page ? html`<${Link} to=${page} params=${entityParams(k.Kind, k.Value, ns)} title=${k.Kind + ' ' + k.Value}>${label}<//>` : html`<span title=${k.Value}>${label}</span>`}
    ${hist && html`<${Link} to=${hist} class="tl-hist" aria-label=${'timeline of ' + k.Kind + ' ' + k.Value} title=${'timeline of ' + k.Kind + ' ' + k.Value}>↻<//>`}
  </span>`;
}


// The events/s of the last few minutes, drawn by uPlot (loaded when the
// page opens; without it the counter above says the same).
class RateChart extends Component {
  componentDidMount() {
    if (!document.querySelector('link[href="/ui/vendor/uplot.css"]')) {
      const l = document.createElement('link');
      l.rel = 'stylesheet';
      l.href = '/ui/vendor/uplot.css';
      document.head.appendChild(l);
    }
    import('../vendor/uplot.mjs').then(({ default: UPlot }) => {
      if (!this.base) return;
      this.plot = new UPlot({
        width: Math.max(300, this.base.clientWidth), height: 110, legend: { show: false }, cursor: { show: false },
        scales: { x: { time: true, range: (u, min, max) => { const end = max || Math.floor(Date.now() / 1000); return [end - chartSeconds, end]; } }, y: { range: (u, min, max) => [0, Math.max(10, max)] } },
        axes: [{ values: (u, splits) => splits.map((x) => timeOf(x * 1000).slice(0, 8)) }, { size: 50 }],
        series: [{}, { label: 'events/s', stroke: '#1b5fc1', fill: 'rgba(27,95,193,.12)', width: 1.5 }],
      }, this.props.data, this.base.querySelector('.tl-chart-plot'));
    }).catch(() => { /* the counter is enough */ });
  }
  shouldComponentUpdate(n) { return n.tick !== this.props.tick; }
  componentDidUpdate() { if (this.plot) this.plot.setData(this.props.data); }
  componentWillUnmount() { if (this.plot) this.plot.destroy(); }
  render() {
    return html`<figure class="tl-chart" aria-label="events per second over the last five minutes">
      <div class="tl-chart-plot"></div>
    </figure>`;
  }
}
