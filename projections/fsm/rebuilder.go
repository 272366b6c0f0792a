package fsm

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ordoplane/ordo/clock"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/rebuild"
	"github.com/ordoplane/ordo/storage/archive"
	"github.com/ordoplane/ordo/storage/kv"
)

// ErrRebuildBusy is returned when a rebuild or verify is asked for while
// another is queued or running on this server.
var ErrRebuildBusy = errors.New("ordo: a projection rebuild or verify is already running")

// UnknownProjectionError names a projection the server does not maintain.
type UnknownProjectionError struct{ Name string }

func (e *UnknownProjectionError) Error() string {
	return fmt.Sprintf("no projection named %q", e.Name)
}

// Job kinds.
const (
	// JobStartup rebuilds the stale projections before the server serves.
	JobStartup = "startup"
	// JobRebuild is an operator's online rebuild.
	JobRebuild = "rebuild"
	// JobVerify rebuilds into scratch space and compares checksums.
	JobVerify = "verify"
)

// Job states.
const (
	JobQueued  = "queued"
	JobRunning = "running"
	JobDone    = "done"
	JobFailed  = "failed"
	// JobCancelled: an operator cancelled it (Rebuilder.Cancel); what it
	// built was discarded and the live projections are as they were.
	JobCancelled = "cancelled"
)

// ErrParallelism is a job's parallelism below -1 (SubmitParallel).
var ErrParallelism = errors.New("parallelism must be -1 (all at once), 0 (the server's default) or a positive count")

// ErrJobCancelled ends a job an operator cancelled.
var ErrJobCancelled = errors.New("ordo: the projection job was cancelled")

// Ended reports whether the job has ended: done, failed or cancelled.
func (j Job) Ended() bool {
	return j.State == JobDone || j.State == JobFailed || j.State == JobCancelled
}

// projections.Projection states.
const (
	// StateReady: the projection serves and the FSM applies to it.
	StateReady = "ready"
	// StateStale: written by another version; waiting for its rebuild.
	StateStale = "stale"
	// StateRebuilding: a rebuild of it runs (the live one serves, unless
	// it is stale).
	StateRebuilding = "rebuilding"
)

// Job is one rebuild or verify, as the operator API shows it.
type Job struct {
	ID          uint64
	Kind        string
	Projections []string
	State       string
	Phase       string `json:",omitempty"`
	// Events is how many archived events were replayed so far and Target
	// how many there are to replay (it grows while an online rebuild
	// catches up with new writes).
	Events, Target uint64
	LagEvents      uint64
	// Parallelism is how many of the projections the job replays at once
	// while the server serves (see RebuilderConfig.Parallelism).
	Parallelism int `json:",omitempty"`
	// Index is the last index replayed; Head the applied index aimed for.
	Index, Head     uint64
	EventsPerSecond float64
	ETASeconds      float64
	// SwitchSeconds is how long the switch took, from the start of its
	// phase to the rebuilt projections serving: the FSM applies nothing
	// meanwhile, so writes wait that long (0 until it is done).
	SwitchSeconds float64 `json:",omitempty"`
	// ReadPauseSeconds is the part of the switch during which reads
	// waited too: the rebuilt rows' ingest and the batch that follows it.
	ReadPauseSeconds float64        `json:",omitempty"`
	Started          time.Time      `json:",omitzero"`
	Finished         time.Time      `json:",omitzero"`
	Error            string         `json:",omitempty"`
	Results          []VerifyResult `json:",omitempty"`
}

// VerifyResult compares one projection's live checksum with a rebuild's.
type VerifyResult struct {
	Projection    string
	Live, Rebuilt string
	Match         bool
}

// ProjectionStatus is one projection as `ordo operator projections list`
// shows it.
type ProjectionStatus struct {
	Name string
	// Version is the code's; StoredVersion the one the store holds.
	Version, StoredVersion int
	State                  string
	// Applied is the index the projection reflects: the FSM's applied
	// index, or, while it is rebuilt, the last index the rebuild replayed.
	Applied uint64
	// ModifyIndex is the last index that changed one of its tables.
	ModifyIndex uint64
	// Progress is the fraction of the archive a rebuild replayed (0..1);
	// LagEvents how many events it is behind the head.
	Progress  float64 `json:",omitempty"`
	LagEvents uint64  `json:",omitempty"`
	Checksum  string  `json:",omitempty"`
}

// RebuilderConfig configures a Rebuilder.
type RebuilderConfig struct {
	// Logger; default slog.Default().
	Logger *slog.Logger
	// Registerer receives the rebuild metrics; nil registers none.
	Registerer prometheus.Registerer
	// Clock stamps jobs and measures their rate and ETA; nil reports
	// neither.
	Clock clock.Clock
	// ScratchDir holds Verify's scratch stores (a temporary directory in
	// it, removed afterwards); default os.TempDir().
	ScratchDir string
	// Parallelism is how many projections an operator's rebuild or verify
	// replays at once while the server applies entries, unless the job
	// asks otherwise (SubmitParallel): 0 means GOMAXPROCS-1, at least 1,
	// which leaves the FSM, raft and the API a core; -1 every projection
	// at once. While the server applies nothing (see Busy) every
	// projection replays at once. A startup rebuild, before the server
	// serves, and the last entries of a switch, which writes wait for, use
	// every core.
	Parallelism int
	// Busy reports whether the server is applying entries, for
	// Parallelism; default: the FSM's applied index moved within the last
	// second by Clock (without a Clock: always).
	Busy func() bool
	// CatchUpLag is how many entries behind the applied index an online
	// rebuild may be when it takes the FSM's apply lock to replay the rest
	// and switch: what writes wait for. Default 1024.
	CatchUpLag uint64
}

// Rebuilder runs the rebuilds and verifies of one FSM's projections, one
// at a time, and reports their progress (Job, Status, metrics).
type Rebuilder struct {
	fsm     *FSM
	cfg     RebuilderConfig
	log     *slog.Logger
	metrics *rebuildMetrics
	queue   chan uint64
	// runMu serialises jobs.
	runMu sync.Mutex
	mu    struct {
		sync.Mutex
		nextID  uint64
		current *Job // queued or running
		last    *Job
		// building maps a projection being rebuilt to its progress.
		building map[string]RebuildProgress
		// eventsSeen is what the metrics counted of the running job.
		eventsSeen uint64
		rateFrom   rateMark
		// switchFrom is when the running job's switch began.
		switchFrom time.Time
		// cancel ends the running job (Cancel); the job whose ID is
		// cancelQueued (a queued one) ends as soon as it starts.
		cancel       context.CancelCauseFunc
		cancelQueued uint64
	}
}

type rateMark struct {
	at     time.Time
	events uint64
}

// NewRebuilder returns the Rebuilder of f; it also reports the rebuilds
// f runs itself (a restored snapshot's stale projections).
func NewRebuilder(f *FSM, cfg RebuilderConfig) *Rebuilder {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.CatchUpLag == 0 {
		cfg.CatchUpLag = 1024
	}
	if cfg.Parallelism == 0 {
		cfg.Parallelism = max(1, runtime.GOMAXPROCS(0)-1)
	}
	r := &Rebuilder{fsm: f, cfg: cfg, log: cfg.Logger, queue: make(chan uint64, 1)}
	r.mu.building = map[string]RebuildProgress{}
	r.metrics = newRebuildMetrics(cfg.Registerer, f.projs)
	f.setObserver(r.observe)
	r.updateStateMetrics()
	return r
}

// Close unregisters the metrics.
func (r *Rebuilder) Close() {
	r.fsm.setObserver(nil)
	r.metrics.unregister()
}

func (r *Rebuilder) now() time.Time {
	if r.cfg.Clock == nil {
		return time.Time{}
	}
	return r.cfg.Clock.Now()
}

// resolve returns the named projections in apply order; none names all.
func (r *Rebuilder) resolve(list []string) ([]projections.Projection, error) {
	if len(list) == 0 {
		return r.fsm.Projections(), nil
	}
	want := map[string]bool{}
	for _, n := range list {
		want[n] = true
	}
	var out []projections.Projection
	for _, p := range r.fsm.projs {
		if want[p.Name()] {
			out = append(out, p)
			delete(want, p.Name())
		}
	}
	for _, n := range list {
		if want[n] {
			return nil, &UnknownProjectionError{Name: n}
		}
	}
	return out, nil
}

// RebuildStale rebuilds the FSM's stale projections (Config.AllowStale)
// and returns when they serve; nothing else may apply meanwhile (the agent
// calls it before raft starts). With none stale it returns at once.
func (r *Rebuilder) RebuildStale(ctx context.Context) error {
	stale := r.fsm.Stale()
	if len(stale) == 0 {
		return nil
	}
	r.log.Warn("projections were written by another version: rebuilding them from the archive before serving", "stale", fmt.Sprint(stale))
	job, err := r.Do(ctx, JobStartup, projections.Names(staleProjs(stale)))
	if err != nil {
		return err
	}
	r.log.Info("projections rebuilt", "projections", fmt.Sprint(job.Projections), "events", job.Events)
	return nil
}

// Submit queues a job (JobRebuild or JobVerify) of the named projections
// (none: all) for Run and returns it: ErrRebuildBusy while another is
// queued or running, an *UnknownProjectionError for a name the server
// lacks.
func (r *Rebuilder) Submit(kind string, list []string) (Job, error) {
	return r.SubmitParallel(kind, list, 0)
}

// SubmitParallel is Submit with how many projections the job replays at
// once while the server serves: 0 the Rebuilder's Parallelism, -1 all of
// them, n > 0 at most n.
func (r *Rebuilder) SubmitParallel(kind string, list []string, parallel int) (Job, error) {
	if kind != JobRebuild && kind != JobVerify {
		return Job{}, fmt.Errorf("projections: unknown job kind %q", kind)
	}
	if parallel < -1 {
		return Job{}, fmt.Errorf("%d: %w", parallel, ErrParallelism)
	}
	projs, err := r.resolve(list)
	if err != nil {
		return Job{}, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.mu.current != nil {
		return Job{}, ErrRebuildBusy
	}
	r.mu.nextID++
	j := &Job{ID: r.mu.nextID, Kind: kind, Projections: projections.Names(projs), State: JobQueued, Parallelism: r.parallelism(parallel, len(projs))}
	r.mu.current = j
	r.queue <- j.ID
	return *j, nil
}

// idleAfter is how long the FSM must have applied nothing for a rebuild
// to take every core (RebuilderConfig.Busy).
const idleAfter = time.Second

// busy returns the job's test of whether the server applies entries:
// RebuilderConfig.Busy, else whether the FSM's applied index moved within
// idleAfter by the Rebuilder's clock, starting from the index when the job
// began; without a clock, always (the limit always holds).
func (r *Rebuilder) busy() func() bool {
	if r.cfg.Busy != nil {
		return r.cfg.Busy
	}
	if r.cfg.Clock == nil {
		return nil // lanes.limit: always busy
	}
	var mu sync.Mutex
	index, moved := r.fsm.Applied(), time.Time{}
	return func() bool {
		mu.Lock()
		defer mu.Unlock()
		t := r.cfg.Clock.Now()
		if i := r.fsm.Applied(); i != index {
			index, moved = i, t
		}
		return !moved.IsZero() && t.Sub(moved) < idleAfter
	}
}

// parallelism resolves a job's parallelism (SubmitParallel) for n
// projections: how many replay at once, at most n.
func (r *Rebuilder) parallelism(asked, n int) int {
	if asked == 0 {
		asked = r.cfg.Parallelism
	}
	if asked < 0 || asked > n {
		return n
	}
	return asked
}

// Run runs the queued jobs until ctx ends. It first queues again the
// operators' rebuilds a stop interrupted.
func (r *Rebuilder) Run(ctx context.Context) error {
	if pending := r.fsm.pendingRebuilds(); len(pending) > 0 {
		if _, err := r.Submit(JobRebuild, pending); err != nil {
			r.log.Warn("an interrupted projection rebuild waits for the next start", "projections", fmt.Sprint(pending), "err", err)
		} else {
			r.log.Warn("resuming projection rebuilds a stop interrupted", "projections", fmt.Sprint(pending))
		}
	}
	for {
		select {
		case <-ctx.Done():
			return nil
		case id := <-r.queue:
			r.mu.Lock()
			j := r.mu.current
			r.mu.Unlock()
			if j == nil || j.ID != id {
				continue
			}
			if _, err := r.run(ctx, j); err != nil && ctx.Err() == nil {
				r.log.Error("projection job failed", "kind", j.Kind, "projections", fmt.Sprint(j.Projections), "err", err)
			}
		}
	}
}

// Do runs a job (JobStartup, JobRebuild or JobVerify) of the named
// projections (none: all) now and returns it when it ends, the offline
// CLI's way; ErrRebuildBusy while another is queued or running.
func (r *Rebuilder) Do(ctx context.Context, kind string, list []string) (Job, error) {
	projs, err := r.resolve(list)
	if err != nil {
		return Job{}, err
	}
	r.mu.Lock()
	if r.mu.current != nil {
		r.mu.Unlock()
		return Job{}, ErrRebuildBusy
	}
	r.mu.nextID++
	parallel := r.parallelism(0, len(projs))
	if kind == JobStartup {
		parallel = len(projs) // before the server serves: every core
	}
	j := &Job{ID: r.mu.nextID, Kind: kind, Projections: projections.Names(projs), State: JobQueued, Parallelism: parallel}
	r.mu.current = j
	r.mu.Unlock()
	return r.run(ctx, j)
}

// run executes j, which is r.mu.current.
func (r *Rebuilder) run(ctx context.Context, j *Job) (Job, error) {
	r.runMu.Lock()
	defer r.runMu.Unlock()
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	projs, err := r.resolve(j.Projections)
	now := r.now()
	r.mu.Lock()
	j.State, j.Started = JobRunning, now
	r.mu.eventsSeen = 0
	r.mu.rateFrom = rateMark{at: now}
	r.mu.switchFrom = time.Time{}
	r.mu.cancel = cancel
	if r.mu.cancelQueued == j.ID {
		r.mu.cancelQueued = 0
		cancel(ErrJobCancelled)
	}
	r.mu.Unlock()
	var results []VerifyResult
	if err == nil {
		switch j.Kind {
		case JobStartup:
			err = r.fsm.rebuildOnline(ctx, projs, r.cfg.CatchUpLag, j.Parallelism, nil, r.fsm.observer())
		case JobRebuild:
			err = r.rebuild(ctx, projs, j.Parallelism)
		case JobVerify:
			results, err = r.verify(ctx, projs, j.Parallelism)
		default:
			err = fmt.Errorf("projections: unknown job kind %q", j.Kind)
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.mu.cancel = nil
	for _, p := range projs {
		delete(r.mu.building, p.Name())
		r.metrics.lag.WithLabelValues(p.Name()).Set(0)
	}
	j.Finished, j.Results = r.now(), results
	j.State = JobDone
	switch {
	case err != nil && errors.Is(context.Cause(ctx), ErrJobCancelled):
		err = ErrJobCancelled
		j.State, j.Error, j.Results = JobCancelled, err.Error(), nil
		r.log.Warn("projection job cancelled", "job", j.ID, "kind", j.Kind, "projections", fmt.Sprint(j.Projections))
	case err != nil:
		j.State, j.Error = JobFailed, err.Error()
	}
	r.mu.current, r.mu.last = nil, j
	r.updateStateMetricsLocked()
	return *j, err
}

// Cancel ends the queued or running rebuild or verify and returns it as
// it stood (its state turns JobCancelled once it has stopped; see Job):
// a rebuild's scratch store is deleted and its markers dropped, so the live
// projections stay as they were and a restart does not resume it. A
// rebuild already switching may finish first. False when no job is queued
// or running.
func (r *Rebuilder) Cancel() (Job, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	j := r.mu.current
	if j == nil {
		return Job{}, false
	}
	if r.mu.cancel != nil {
		r.mu.cancel(ErrJobCancelled)
	} else {
		r.mu.cancelQueued = j.ID
	}
	return *j, true
}

func (r *Rebuilder) rebuild(ctx context.Context, projs []projections.Projection, parallel int) error {
	if err := r.fsm.markRebuild(projs); err != nil {
		return err
	}
	err := r.fsm.rebuildOnline(ctx, projs, r.cfg.CatchUpLag, parallel, r.busy(), r.fsm.observer())
	if err != nil && (ctx.Err() == nil || errors.Is(context.Cause(ctx), ErrJobCancelled)) {
		// A failure that is not a stop would fail again on every start;
		// an operator who cancelled does not want it resumed.
		if uerr := r.fsm.unmarkRebuild(projs); uerr != nil {
			r.log.Error("drop rebuild markers", "err", uerr)
		}
	}
	return err
}

// verify rebuilds projs from a consistent snapshot's archive into a
// scratch store and compares each with the snapshot's live projection:
// the checksums read the scratch store as the lanes left it, copied
// nowhere.
func (r *Rebuilder) verify(ctx context.Context, projs []projections.Projection, parallel int) ([]VerifyResult, error) {
	snap := r.fsm.store.Snapshot()
	defer snap.Close()
	applied, err := projections.NewView(snap).AppliedIndex()
	if err != nil {
		return nil, err
	}
	dst, err := kv.OpenScratchIn(r.cfg.ScratchDir)
	if err != nil {
		return nil, fmt.Errorf("verify scratch space: %w", err)
	}
	defer dst.Close()
	prog := RebuildProgress{Projections: projections.Names(projs), Phase: PhaseBuilding, Head: applied}
	if target, err := archive.Len(snap); err == nil {
		prog.Target = target
	}
	_, err = rebuild.BuildInto(ctx, snap, dst, projs, applied, parallel, r.busy(), func(st rebuild.Stats) {
		prog.Events, prog.Index = st.Events, st.Last
		r.observeJob(prog)
	})
	if err != nil {
		return nil, err
	}
	out := make([]VerifyResult, len(projs))
	for i, p := range projs {
		live, err := projections.Checksum(snap, p)
		if err != nil {
			return nil, err
		}
		rebuilt, err := projections.Checksum(dst, p)
		if err != nil {
			return nil, err
		}
		out[i] = VerifyResult{Projection: p.Name(), Live: hex.EncodeToString(live[:]), Rebuilt: hex.EncodeToString(rebuilt[:]), Match: live == rebuilt}
	}
	return out, nil
}

// observe receives a rebuild's progress: the FSM's rebuilds report here.
func (r *Rebuilder) observe(p RebuildProgress) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, n := range p.Projections {
		if p.Phase == PhaseDone || p.Phase == PhaseFailed {
			delete(r.mu.building, n)
		} else {
			r.mu.building[n] = p
		}
		r.metrics.lag.WithLabelValues(n).Set(float64(p.LagEvents()))
	}
	if p.Events < r.mu.eventsSeen {
		r.mu.eventsSeen = 0 // another rebuild (a restore's) began
	}
	if p.Events > r.mu.eventsSeen {
		for _, n := range p.Projections {
			r.metrics.events.WithLabelValues(n).Add(float64(p.Events - r.mu.eventsSeen))
		}
		r.mu.eventsSeen = p.Events
	}
	if p.Phase != PhaseFailed {
		r.observeJobLocked(p)
	}
	r.updateStateMetricsLocked()
}

// observeJob records p as the running job's progress.
func (r *Rebuilder) observeJob(p RebuildProgress) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.observeJobLocked(p)
}

func (r *Rebuilder) observeJobLocked(p RebuildProgress) {
	j := r.mu.current
	if j == nil || j.State != JobRunning {
		return
	}
	j.Phase, j.Events, j.Target, j.LagEvents, j.Index, j.Head = p.Phase, p.Events, p.Target, p.LagEvents(), p.Index, p.Head
	if r.cfg.Clock == nil {
		return
	}
	now := r.cfg.Clock.Now()
	switch {
	case p.Phase == PhaseSwitching && r.mu.switchFrom.IsZero():
		r.mu.switchFrom = now
	case p.Phase == PhaseDone && !r.mu.switchFrom.IsZero():
		j.SwitchSeconds, j.ReadPauseSeconds = now.Sub(r.mu.switchFrom).Seconds(), p.ReadPause.Seconds()
		r.metrics.pause.WithLabelValues("writes").Set(j.SwitchSeconds)
		r.metrics.pause.WithLabelValues("reads").Set(j.ReadPauseSeconds)
		r.log.Info("projections switched live", "job", j.ID, "projections", j.Projections,
			"switch_seconds", j.SwitchSeconds, "read_pause_seconds", j.ReadPauseSeconds)
	}
	if el := now.Sub(r.mu.rateFrom.at).Seconds(); el > 0 && p.Events > r.mu.rateFrom.events {
		j.EventsPerSecond = float64(p.Events-r.mu.rateFrom.events) / el
		j.ETASeconds = float64(p.LagEvents()) / j.EventsPerSecond
	}
}

// Job returns the queued or running job, else the last one; false when
// there has been none.
func (r *Rebuilder) Job() (Job, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	j := r.mu.current
	if j == nil {
		j = r.mu.last
	}
	if j == nil {
		return Job{}, false
	}
	out := *j
	out.Projections = append([]string(nil), j.Projections...)
	out.Results = append([]VerifyResult(nil), j.Results...)
	return out, true
}

// Status returns every projection's state, in apply order, with its
// checksum when checksums is set (a scan of every row).
func (r *Rebuilder) Status(checksums bool) ([]ProjectionStatus, error) {
	snap := r.fsm.store.Snapshot()
	defer snap.Close()
	v := projections.NewView(snap)
	applied, err := v.AppliedIndex()
	if err != nil {
		return nil, err
	}
	stale := map[string]bool{}
	for _, s := range r.fsm.Stale() {
		stale[s.Projection.Name()] = true
	}
	r.mu.Lock()
	building := make(map[string]RebuildProgress, len(r.mu.building))
	for k, p := range r.mu.building {
		building[k] = p
	}
	r.mu.Unlock()
	out := make([]ProjectionStatus, 0, len(r.fsm.projs))
	for _, p := range r.fsm.projs {
		st := ProjectionStatus{Name: p.Name(), Version: p.Version(), State: StateReady, Applied: applied}
		if st.StoredVersion, err = projections.StoredVersion(snap, p.Name()); err != nil {
			return nil, err
		}
		for _, t := range p.Tables() {
			idx, err := v.TableIndex(t)
			if err != nil {
				return nil, err
			}
			st.ModifyIndex = max(st.ModifyIndex, idx)
		}
		if stale[p.Name()] {
			st.State = StateStale
		}
		if b, ok := building[p.Name()]; ok {
			st.State, st.Applied, st.LagEvents = StateRebuilding, b.Index, b.LagEvents()
			if b.Target > 0 {
				st.Progress = min(1, float64(b.Events)/float64(b.Target))
			}
		}
		if checksums {
			sum, err := projections.Checksum(snap, p)
			if err != nil {
				return nil, err
			}
			st.Checksum = hex.EncodeToString(sum[:])
		}
		out = append(out, st)
	}
	return out, nil
}

func (r *Rebuilder) updateStateMetrics() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.updateStateMetricsLocked()
}

func (r *Rebuilder) updateStateMetricsLocked() {
	stale := map[string]bool{}
	for _, s := range r.fsm.Stale() {
		stale[s.Projection.Name()] = true
	}
	for _, p := range r.fsm.projs {
		state := StateReady
		if stale[p.Name()] {
			state = StateStale
		}
		if _, ok := r.mu.building[p.Name()]; ok {
			state = StateRebuilding
		}
		for _, s := range []string{StateReady, StateStale, StateRebuilding} {
			v := 0.0
			if s == state {
				v = 1
			}
			r.metrics.state.WithLabelValues(p.Name(), s).Set(v)
		}
	}
}
