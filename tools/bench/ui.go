package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"slices"
	"sync/atomic"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/ordoplane/ordo/cmd/agent"
	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/commands/namespace"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/test/browser"
)

// The ui figures' sizes (issue 36's benchmark: 10,000 jobs, a log of
// 1,000,000 events, the timeline following 5,000 events/s).
var (
	uiEvents     = flag.Int("ui-events", 1_000_000, "events in the log of the ui figures' server")
	uiJobs       = flag.Int("ui-jobs", 10_000, "jobs the ui figures' server holds (part of -ui-events)")
	uiEntry      = flag.Int("ui-entry-events", 1000, "events per entry of the ui figures' bulk seed (the last -ui-tail entries hold one each)")
	uiTail       = flag.Int("ui-tail", 2000, "entries of one event that end the ui figures' log (what the timeline reads first)")
	uiRate       = flag.Int("ui-rate", 5000, "events/s written while the ui figures' timeline follows")
	uiRateBatch  = flag.Int("ui-rate-events", 1, "events per write of the -ui-rate load (1: namespace.apply commands; more: entries of that many namespace upserts)")
	uiFollow     = flag.Duration("ui-follow", 10*time.Second, "how long the ui figures measure the timeline following -ui-rate")
	uiLoads      = flag.Int("ui-loads", 5, "loads of each page the ui first-screen figures time")
	uiNamespaces = 10 // team-0…team-9: the jobs' and the namespace events' namespaces
)

// uiSeed is the bench's command that appends the events it is given, many
// to an entry: the ui figures' log is built of a few thousand such writes
// through the leader's pipeline (raft, the FSM, the archive), as any
// write is.
type uiSeed struct{ ps []events.Payload }

func (uiSeed) Validate() error { return nil }

func (c uiSeed) Decide(projections.View, time.Time, commands.IDs) (commands.Decision, error) {
	return commands.Decision{Events: c.ps}, nil
}

// uiProbe is installed in every document the tab loads, before the page's
// own scripts: it records, in window.__bench, when (performance.now(),
// from the navigation's start) the first row of the jobs table and of the
// timeline is in the document and laid out, checked on every animation
// frame; it counts the frames; and it keeps the duration of every long
// task (the 'longtask' entries, tasks of 50 ms or more).
const uiProbe = `(() => {
  const b = window.__bench = { first: {}, longs: [], frames: 0, noLongtask: '' };
  try {
    new PerformanceObserver((l) => { for (const e of l.getEntries()) b.longs.push(e.duration); })
      .observe({ type: 'longtask', buffered: true });
  } catch (e) { b.noLongtask = String(e); }
  const sels = { jobs: 'main table tbody tr', timeline: '.vrow' };
  const tick = () => {
    b.frames++;
    for (const k in sels) {
      if (b.first[k] !== undefined) continue;
      const el = document.querySelector(sels[k]);
      if (el && el.getClientRects().length > 0) b.first[k] = performance.now();
    }
    requestAnimationFrame(tick);
  };
  requestAnimationFrame(tick);
})()`

// uiRows measures the web UI (issue 36) in a headless Chromium driven
// through the DevTools protocol (test/browser), against one server in
// this process holding jobs jobs in a log of n events: the time from
// navigation start to the first row of the jobs table, and of the
// timeline, over loads loads each (median and max), then the timeline
// following rate events/s for follow: its frames per second and its long
// tasks.
func uiRows(n, jobs, perEntry, tail, rate, perWrite int, follow time.Duration, loads int) ([]row, error) {
	a, stop, err := startServer("ui")
	if err != nil {
		return nil, err
	}
	defer stop()
	start := time.Now()
	built, err := uiLog(a, n, jobs, perEntry, tail)
	if err != nil {
		return nil, err
	}
	seeded := time.Since(start)
	fmt.Fprintf(os.Stderr, "bench: ui log of %d events (%d jobs) built in %s, last index %d\n",
		built, jobs, seeded.Round(time.Millisecond), a.FSM().Applied())
	settle(a.Store())
	// The server's own work after the build (time travel's versions
	// store, the projections' background work) is not the UI's: wait, up
	// to 2 minutes, until the process uses under a tenth of a core.
	prev := cpuTime()
	took := waitQuiet(2*time.Minute, func() bool {
		now := cpuTime()
		busy := now-prev > quietEvery/10
		prev = now
		return busy
	})
	fmt.Fprintf(os.Stderr, "bench: ui server idle after %.1f s\n", took.Seconds())

	b, err := browser.Start(context.Background(), 1400, 900)
	if err != nil {
		return nil, err
	}
	defer b.Close()
	tab := b.Tab()
	if err := uiInstallProbe(tab); err != nil {
		return nil, err
	}
	base := "http://" + a.HTTPAddr() + "/ui"
	label := fmt.Sprintf("%d jobs, log of %d events", jobs, built)
	rows := []row{
		{fmt.Sprintf("ui: log built (%d jobs, the rest namespace upserts; entries of %d events through the pipeline, the last %d of one)",
			jobs, perEntry, tail), float64(built), "events"},
		{"ui: log built, time", seeded.Seconds(), "s"},
	}
	for _, p := range []struct{ name, path, key string }{
		{"jobs page", "/jobs", "jobs"},
		{"timeline", "/timeline", "timeline"},
	} {
		var firsts []float64
		var longest float64
		for range loads {
			// Each load in a tab of its own, as a user opens the page:
			// a load in the tab that showed a page before it waits,
			// for a second or more, for a connection to the server
			// (Chromium's 6 to a host on HTTP/1.1; the previous page's
			// long polls and streams held them; stderr shows it).
			t, closeTab := b.NewTab()
			err := uiInstallProbe(t)
			var first, long float64
			if err == nil {
				first, long, err = uiFirstScreen(t, base+p.path, p.key)
			}
			closeTab()
			if err != nil {
				return nil, fmt.Errorf("%s: %w", p.name, err)
			}
			firsts = append(firsts, first)
			longest = max(longest, long)
		}
		slices.Sort(firsts)
		rows = append(rows,
			row{fmt.Sprintf("ui: %s first screen (navigation start to the first row, a new tab each load), %s, median of %d loads", p.name, label, loads), firsts[len(firsts)/2], "ms"},
			row{fmt.Sprintf("ui: %s first screen, max of %d loads", p.name, loads), firsts[len(firsts)-1], "ms"},
			row{fmt.Sprintf("ui: %s load, longest task (any of %d loads)", p.name, loads), longest, "ms"})
	}
	followRows, err := uiFollowing(tab, a, base+"/timeline", rate, perWrite, follow)
	if err != nil {
		return nil, err
	}
	return append(rows, followRows...), nil
}

// uiInstallProbe installs uiProbe in every document tab loads.
func uiInstallProbe(tab context.Context) error {
	if _, err := chromedp.Call(tab, page.AddScriptToEvaluateOnNewDocument,
		page.AddScriptToEvaluateOnNewDocumentParams{Source: uiProbe}); err != nil {
		return fmt.Errorf("install the probe: %w", err)
	}
	return nil
}

// uiLog appends n events to a's log: uiNamespaces namespaces, jobs job
// registrations, namespace upserts in entries of perEntry events, and
// last tail entries of one namespace upsert each (the timeline reads the
// log's last 500 indexes first: they look like a busy cluster's, not like
// the seed's). It returns how many events it appended.
func uiLog(a *agent.Agent, n, jobs, perEntry, tail int) (int, error) {
	ctx := context.Background()
	var ps []events.Payload
	for i := range uiNamespaces {
		ps = append(ps, &events.NamespaceUpserted{Namespace: events.Namespace{Name: fmt.Sprint("team-", i), Description: "bench"}})
	}
	if _, err := a.Pipeline().Run(ctx, "bench.ui_seed", commands.Request{Actor: "bench"}, uiSeed{ps}); err != nil {
		return 0, err
	}
	total := len(ps)
	// The jobs, 250 to an entry (a job's payload is a few hundred bytes).
	var jobEntries [][]events.Payload
	for j := 0; j < jobs; j += 250 {
		var ps []events.Payload
		for k := j; k < j+250 && k < jobs; k++ {
			ps = append(ps, &events.JobRegistered{Job: uiJob(k)})
		}
		jobEntries = append(jobEntries, ps)
	}
	if err := uiWrite(a, len(jobEntries), 4, func(i int) []events.Payload { return jobEntries[i] }); err != nil {
		return 0, fmt.Errorf("jobs: %w", err)
	}
	total += jobs
	bulk := max(0, n-total-tail)
	upsert := func(i int) events.Payload {
		return &events.NamespaceUpserted{Namespace: events.Namespace{Name: fmt.Sprint("team-", i%uiNamespaces),
			Description: "bench", Meta: map[string]string{"i": fmt.Sprint(i)}}}
	}
	entries := (bulk + perEntry - 1) / perEntry
	err := uiWrite(a, entries, 4, func(e int) []events.Payload {
		ps := make([]events.Payload, 0, perEntry)
		for i := e * perEntry; i < (e+1)*perEntry && i < bulk; i++ {
			ps = append(ps, upsert(i))
		}
		return ps
	})
	if err != nil {
		return 0, fmt.Errorf("bulk: %w", err)
	}
	total += bulk
	if err := uiWrite(a, tail, 64, func(i int) []events.Payload { return []events.Payload{upsert(bulk + i)} }); err != nil {
		return 0, fmt.Errorf("tail: %w", err)
	}
	return total + tail, nil
}

// uiWrite runs the seed command with entry(i)'s events for i in [0, n),
// inFlight at once.
func uiWrite(a *agent.Agent, n, inFlight int, entry func(i int) []events.Payload) error {
	return parallel(inFlight, n, func(i int) error {
		_, err := a.Pipeline().Run(context.Background(), "bench.ui_seed", commands.Request{Actor: "bench"}, uiSeed{entry(i)})
		return err
	})
}

// uiJob is the ui figures' job i: a service job of one group, in one of
// the team namespaces.
func uiJob(i int) events.Job {
	return events.Job{ID: fmt.Sprintf("web-%05d", i), Name: fmt.Sprintf("web-%05d", i), Namespace: fmt.Sprint("team-", i%uiNamespaces),
		Type: events.JobTypeService, Priority: 50, Datacenters: []string{"dc1"}, NodePool: "default",
		SubmitTime: time.Now().UnixNano(),
		TaskGroups: []events.TaskGroup{{Name: "web", Count: 2, Tasks: []events.Task{{Name: "server", Driver: "exec",
			Resources: &events.Resources{CPU: 100, MemoryMB: 64}}}}}}
}

// uiProbeState is window.__bench.
type uiProbeState struct {
	First      map[string]float64 `json:"first"`
	Longs      []float64          `json:"longs"`
	Frames     int                `json:"frames"`
	NoLongtask string             `json:"noLongtask"`
}

// uiState reads window.__bench in the tab.
func uiState(tab context.Context) (uiProbeState, error) {
	var st uiProbeState
	err := uiEval(tab, `window.__bench || null`, &st)
	return st, err
}

// uiFirstScreen loads url in the tab (after about:blank, so each load is
// a new document) and waits for the probe to see the first row of page
// key; it returns that time from navigation start, and the longest task
// of the load until then, in ms.
func uiFirstScreen(tab context.Context, url, key string) (first, longest float64, err error) {
	ctx, cancel := context.WithTimeout(tab, time.Minute)
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.Navigate("about:blank"), chromedp.Navigate(url)); err != nil {
		return 0, 0, err
	}
	deadline := time.Now().Add(time.Minute)
	for {
		st, err := uiState(tab)
		if err != nil {
			return 0, 0, err
		}
		if st.NoLongtask != "" {
			return 0, 0, fmt.Errorf("no long task observer in the page: %s", st.NoLongtask)
		}
		if f, ok := st.First[key]; ok {
			for _, l := range st.Longs {
				longest = max(longest, l)
			}
			var slow []string // the load's slowest requests answered, for whoever reads stderr
			_ = uiEval(tab, `performance.getEntriesByType('resource')
			  .sort((x, y) => y.duration - x.duration).slice(0, 4)
			  .map((e) => e.initiatorType + ' ' + e.name.replace(location.origin, '') + ' ' + Math.round(e.startTime) + '+' + Math.round(e.duration) + ' ms')
			  .concat(performance.getEntriesByType('navigation').map((e) => 'document: fetch ' + Math.round(e.fetchStart) +
			    ', connect ' + Math.round(e.connectStart) + ', request ' + Math.round(e.requestStart) + ', response ' + Math.round(e.responseStart) + '-' + Math.round(e.responseEnd) + ' ms'))`, &slow)
			fmt.Fprintf(os.Stderr, "bench: ui %s first row at %.0f ms; slowest requests done: %q\n", url, f, slow)
			return f, longest, nil
		}
		if time.Now().After(deadline) {
			return 0, 0, fmt.Errorf("no first row in %s within a minute", url)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// uiFollowing opens the timeline at url, then writes rate namespace
// upserts a second (through the pipeline, perWrite to an entry: 1 is a
// namespace.apply command; rate/perWrite/4 writers, paced) for d while
// the page follows, and returns the rate achieved, the
// page's frames per second, its long tasks over 200 ms and the longest,
// and how far behind the server the page's last row was at the end.
func uiFollowing(tab context.Context, a *agent.Agent, url string, rate, perWrite int, d time.Duration) ([]row, error) {
	if _, _, err := uiFirstScreen(tab, url, "timeline"); err != nil {
		return nil, err
	}
	if err := uiEval(tab, `(() => { const b = window.__bench; b.frames = 0; b.longs = []; b.t0 = performance.now(); return 0 })()`, nil); err != nil {
		return nil, err
	}
	// Enough writers that each waits 250 ms between its writes: a write
	// acked within that keeps the pace, on a busy machine too.
	perWrite = max(1, perWrite)
	writes := max(1, rate/perWrite) // a second
	writers := max(64, writes/4)
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	var acked, failed atomic.Int64
	interval := time.Duration(float64(time.Second) * float64(writers) / float64(writes))
	start := time.Now()
	paced(ctx, writers, interval, func(c, n int) { // cluster.go
		var err error
		if perWrite == 1 {
			cmd := namespace.Apply{Name: fmt.Sprint("team-", (c+n)%uiNamespaces), Description: fmt.Sprintf("load %d-%d", c, n)}
			_, err = a.Pipeline().Run(context.Background(), "namespace.apply", commands.Request{Actor: "bench"}, cmd)
		} else {
			ps := make([]events.Payload, perWrite)
			for i := range ps {
				ps[i] = &events.NamespaceUpserted{Namespace: events.Namespace{Name: fmt.Sprint("team-", (c+n+i)%uiNamespaces),
					Description: fmt.Sprintf("load %d-%d-%d", c, n, i)}}
			}
			_, err = a.Pipeline().Run(context.Background(), "bench.ui_seed", commands.Request{Actor: "bench"}, uiSeed{ps})
		}
		if err == nil {
			acked.Add(int64(perWrite))
		} else {
			failed.Add(1)
		}
	})
	elapsed := time.Since(start)
	var page struct {
		Frames  int       `json:"frames"`
		Elapsed float64   `json:"elapsed"`
		Longs   []float64 `json:"longs"`
		Last    string    `json:"last"`
		Count   string    `json:"count"`
		Follow  bool      `json:"follow"`
	}
	err := uiEval(tab, `(() => { const b = window.__bench; const rows = [...document.querySelectorAll('.vrow .tl-toggle')];
	  return { frames: b.frames, elapsed: performance.now() - b.t0, longs: b.longs,
	    last: rows.length ? rows[rows.length - 1].innerText : '', count: (document.querySelector('.tl-count') || {}).innerText || '',
	    follow: [...document.querySelectorAll('label')].some((l) => l.innerText.includes('Follow newest') && l.querySelector('input:checked')) } })()`, &page)
	if err != nil {
		return nil, err
	}
	lastIndex := a.FSM().Applied()
	var shown uint64
	fmt.Sscanf(page.Last, "▸ %d", &shown)
	if shown == 0 {
		fmt.Sscanf(page.Last, "%d", &shown)
	}
	over, longest := 0, 0.0
	for _, l := range page.Longs {
		longest = max(longest, l)
		if l > 200 {
			over++
		}
	}
	achieved := float64(acked.Load()) / elapsed.Seconds()
	fmt.Fprintf(os.Stderr, "bench: ui follow: %d events acked, %d failed, in %s; page: %d frames in %.0f ms, %d long tasks, last row %q, %q, following %v; server at %d\n",
		acked.Load(), failed.Load(), elapsed.Round(time.Millisecond), page.Frames, page.Elapsed, len(page.Longs), page.Last, page.Count, page.Follow, lastIndex)
	label := fmt.Sprintf("target %d events/s, %d an entry, %s", rate, perWrite, d)
	return []row{
		{fmt.Sprintf("ui: timeline following writes (namespace upserts through the pipeline, in process), %s: achieved", label), achieved, "events/s"},
		{"ui: timeline following, frames per second in the page", float64(page.Frames) / (page.Elapsed / 1000), "fps"},
		{"ui: timeline following, long tasks over 200 ms", float64(over), "count"},
		{"ui: timeline following, long tasks (50 ms or more)", float64(len(page.Longs)), "count"},
		{"ui: timeline following, longest task", longest, "ms"},
		{"ui: timeline following, the page's last row behind the server's last index at the end", float64(lastIndex) - float64(shown), "indexes"},
		{"ui: timeline following, the page's \"Follow newest\" still ticked at the end (1 yes, 0 no)", b2f(page.Follow), "bool"},
	}, nil
}

// uiEval evaluates expr in the tab, into out when out is not nil.
func uiEval(tab context.Context, expr string, out any) error {
	ctx, cancel := context.WithTimeout(tab, 10*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[json.RawMessage](expr))
	if err != nil || out == nil {
		return err
	}
	return json.Unmarshal(v, out)
}

// b2f is 1 for true, 0 for false.
func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
