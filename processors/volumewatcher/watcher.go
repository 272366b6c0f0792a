package volumewatcher

import (
	"context"
	"errors"
	"fmt"
	"github.com/ordoplane/ordo/clock"
	"github.com/ordoplane/ordo/processors/defaults"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ordoplane/ordo/commands"
	ccsi "github.com/ordoplane/ordo/commands/csi"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/processors/follow"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/csi"
	"github.com/ordoplane/ordo/projections/nodes"
)

// Submitter and State are what the watcher is given (package follow).
type (
	Submitter = follow.Submitter
	State     = follow.State
)

// Actor is the actor the watcher's commands record.
const Actor = "processor:volumewatcher"

// Detacher makes the plugin calls of the release steps. Both calls must
// be idempotent: a step is retried until it is recorded.
type Detacher interface {
	// NodeDetach unpublishes and unstages vol for the claim on node n.
	NodeDetach(ctx context.Context, n *nodes.Node, vol *csi.Volume, claim events.CSIVolumeClaim) error
	// ControllerDetach unpublishes vol from the claim's node through a
	// controller of plugin p.
	ControllerDetach(ctx context.Context, p *csi.Plugin, vol *csi.Volume, claim events.CSIVolumeClaim) error
}

// ErrNoDetacher is returned for a call when the watcher has no Detacher.
var ErrNoDetacher = errors.New("volumewatcher: no detacher configured")

type noDetacher struct{}

func (noDetacher) NodeDetach(context.Context, *nodes.Node, *csi.Volume, events.CSIVolumeClaim) error {
	return ErrNoDetacher
}

func (noDetacher) ControllerDetach(context.Context, *csi.Plugin, *csi.Volume, events.CSIVolumeClaim) error {
	return ErrNoDetacher
}

// Config configures a Watcher.
type Config struct {
	// Pipeline receives the claim updates; required.
	Pipeline Submitter
	// State is read for volumes, plugins and nodes; required.
	State State
	// Detacher makes the plugin calls; default one that fails every call
	// (claims that need none are still released).
	Detacher Detacher
	// Clock paces retries and sweeps; default clock.System.
	Clock clock.Clock
	// RetryMin and RetryMax bound the backoff of a failed call; default
	// 1s and 1m.
	RetryMin, RetryMax time.Duration
	// Sweep is the claim GC period: a full pass even without changes;
	// default 5m.
	Sweep time.Duration
	// Batch bounds the volumes one entry updates; default 256.
	Batch int
	// Logger; default slog.Default().
	Logger *slog.Logger
	// Registerer receives the metrics; nil registers none.
	Registerer prometheus.Registerer
}

// DefaultConfig returns the defaults, without the required fields.
func DefaultConfig() Config {
	return Config{Detacher: noDetacher{}, Clock: clock.System{}, RetryMin: time.Second, RetryMax: time.Minute,
		Sweep: 5 * time.Minute, Batch: 256, Logger: slog.Default()}
}

// Validate reports a Config that cannot work.
func (c Config) Validate() error {
	if err := follow.Validate("volumewatcher", c.Pipeline, c.State, 0); err != nil {
		return err
	}
	switch {
	case c.RetryMin < 0 || c.RetryMax < 0 || c.Sweep < 0 || c.Batch < 0:
		return errors.New("volumewatcher: durations and Batch must not be negative")
	}
	return nil
}

// Watcher releases past claims while this server leads.
type Watcher struct {
	cfg Config
	m   *metrics
	// retry holds, per claim (volume key and allocation), when to try its
	// failed call again and the current backoff.
	retry map[string]backoff
	// seen is when each pending past claim was first seen, for latency.
	seen map[string]time.Time
}

type backoff struct {
	at   time.Time
	wait time.Duration
}

// New returns a Watcher, registering its metrics with cfg.Registerer;
// zero fields of cfg take DefaultConfig's values.
func New(cfg Config) (*Watcher, error) {
	defaults.Fill(&cfg, DefaultConfig())
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	m, err := newMetrics(cfg.Registerer)
	if err != nil {
		return nil, err
	}
	return &Watcher{cfg: cfg, m: m, retry: map[string]backoff{}, seen: map[string]time.Time{}}, nil
}

// Name implements supervisor.Processor.
func (w *Watcher) Name() string { return "volumewatcher" }

// Run releases claims until ctx is cancelled: a pass on start, on every
// change to the volumes table, when a retry is due and every Sweep.
func (w *Watcher) Run(ctx context.Context) error {
	defer w.m.queue.Set(0)
	for {
		changed := w.cfg.State.Notifier().Table(csi.VolumesTable)
		wait, err := w.Pass(ctx)
		if ctx.Err() != nil {
			return nil
		}
		if err != nil {
			w.cfg.Logger.Warn("volume watcher pass", "err", err)
			wait = w.cfg.RetryMin
		}
		if wait <= 0 || wait > w.cfg.Sweep {
			wait = w.cfg.Sweep
		}
		select {
		case <-ctx.Done():
			return nil
		case <-changed:
		case <-w.cfg.Clock.After(wait):
		}
	}
}

// pending is one volume's past claims to step.
type pending struct {
	vol    *csi.Volume
	plugin *csi.Plugin
	claims []events.CSIVolumeClaim
}

// Pass steps every past claim as far as it goes now and records the
// steps; it returns how long until the next retry is due (0: none).
func (w *Watcher) Pass(ctx context.Context) (time.Duration, error) {
	start := w.cfg.Clock.Now()
	work, v, release, err := w.read()
	if err != nil {
		return 0, err
	}
	defer release()
	var (
		updates []ccsi.VolumeClaims
		queued  int
		next    time.Duration
		live    = map[string]bool{}
	)
	for _, p := range work {
		vc := ccsi.VolumeClaims{Namespace: p.vol.Namespace, VolumeID: p.vol.ID}
		for _, c := range p.claims {
			key := csi.Key(p.vol.Namespace, p.vol.ID) + "\x00" + c.AllocID
			live[key] = true
			if _, ok := w.seen[key]; !ok {
				w.seen[key] = start
			}
			if b, ok := w.retry[key]; ok && b.at.After(start) {
				queued++
				if d := b.at.Sub(start); next == 0 || d < next {
					next = d
				}
				continue
			}
			end, err := w.advance(ctx, v, p, c)
			if err != nil {
				d := w.backoff(key, start)
				if next == 0 || d < next {
					next = d
				}
				w.cfg.Logger.Warn("release CSI claim: will retry", "volume", p.vol.ID, "namespace", p.vol.Namespace,
					"alloc", c.AllocID, "node", c.NodeID, "state", end.State, "retry_in", d, "err", err)
			} else {
				delete(w.retry, key)
			}
			if end.State != c.State {
				vc.Claims = append(vc.Claims, end)
			}
			if end.State != events.CSIClaimFreed {
				queued++
			}
		}
		if len(vc.Claims) > 0 {
			updates = append(updates, vc)
		}
	}
	w.m.queue.Set(float64(queued))
	if err := w.record(ctx, updates); err != nil {
		return next, err
	}
	now := w.cfg.Clock.Now()
	for _, vc := range updates {
		for _, c := range vc.Claims {
			key := csi.Key(vc.Namespace, vc.VolumeID) + "\x00" + c.AllocID
			if c.State == events.CSIClaimFreed {
				w.m.latency.Observe(now.Sub(w.seen[key]).Seconds())
				w.m.freed.Inc()
				delete(w.seen, key)
				delete(live, key)
			}
		}
	}
	for key := range w.seen {
		if !live[key] {
			delete(w.seen, key)
			delete(w.retry, key)
		}
	}
	return next, nil
}

// read returns the volumes with past claims from a snapshot, and the
// snapshot's view for node lookups (valid until release).
func (w *Watcher) read() ([]pending, projections.View, func(), error) {
	snap := w.cfg.State.ReadSnapshot()
	v := projections.NewView(snap)
	var work []pending
	plugins := map[string]*csi.Plugin{}
	err := csi.ScanVolumes(v, csi.VolumeQuery{Namespace: csi.AllNamespaces}, func(vol *csi.Volume) error {
		past := vol.Past()
		if len(past) == 0 {
			return nil
		}
		p, ok := plugins[vol.PluginID]
		if !ok {
			var err error
			if p, err = csi.GetPlugin(v, vol.PluginID); errors.Is(err, projections.ErrNotFound) {
				p = nil
			} else if err != nil {
				return err
			}
			plugins[vol.PluginID] = p
		}
		work = append(work, pending{vol: vol, plugin: p, claims: past})
		return nil
	})
	if err != nil {
		snap.Close()
		return nil, v, nil, fmt.Errorf("volumewatcher: read volumes: %w", err)
	}
	return work, v, func() { snap.Close() }, nil
}

// advance steps claim c as far as it goes and returns where it got; an
// error is the call that failed.
func (w *Watcher) advance(ctx context.Context, v projections.View, p pending, c events.CSIVolumeClaim) (events.CSIVolumeClaim, error) {
	n, err := nodes.Get(v, c.NodeID)
	if errors.Is(err, projections.ErrNotFound) {
		n, err = nil, nil
	} else if err != nil {
		return c, err
	}
	for {
		step, ok := Decide(c, p.plugin, n)
		if !ok {
			return c, nil
		}
		err = nil
		switch step.Call {
		case CallNodeDetach:
			err = w.cfg.Detacher.NodeDetach(ctx, n, p.vol, c)
		case CallControllerDetach:
			err = w.cfg.Detacher.ControllerDetach(ctx, p.plugin, p.vol, c)
		}
		if step.Call != CallNone {
			result := "ok"
			if err != nil {
				result = "error"
			}
			w.m.calls.WithLabelValues(step.Call.String(), result).Inc()
		}
		if err != nil {
			return c, fmt.Errorf("%s detach: %w", step.Call, err)
		}
		c = step.Next
		if c.State == events.CSIClaimFreed {
			return c, nil
		}
	}
}

// backoff schedules claim key's next try and returns the wait.
func (w *Watcher) backoff(key string, now time.Time) time.Duration {
	b := w.retry[key]
	b.wait = min(max(b.wait*2, w.cfg.RetryMin), w.cfg.RetryMax)
	b.at = now.Add(b.wait)
	w.retry[key] = b
	w.m.retries.Inc()
	return b.wait
}

// record submits the updates, Batch volumes per entry.
func (w *Watcher) record(ctx context.Context, updates []ccsi.VolumeClaims) error {
	for len(updates) > 0 {
		n := min(len(updates), w.cfg.Batch)
		out, err := w.cfg.Pipeline.Run(ctx, "volume.claims", commands.Request{Actor: Actor}, ccsi.UpdateClaims{Volumes: updates[:n]})
		if err != nil {
			return fmt.Errorf("volumewatcher: record claim steps: %w", err)
		}
		w.cfg.Logger.Debug("CSI claim steps recorded", "volumes", n, "index", out.Index)
		updates = updates[n:]
	}
	return nil
}
