package plan

import (
	"errors"
	"slices"
	"sync"
	"time"

	"github.com/ordoplane/ordo/processors/scheduler"
)

// TrackerConfig configures the rejection tracker (N11). The zero value is
// disabled; DefaultTrackerConfig has Nomad's numbers.
type TrackerConfig struct {
	// Enabled turns the tracker on; off by default, as in Nomad.
	Enabled bool
	// Window is how far back rejections count; default 10m.
	Window time.Duration
	// Threshold is how many rejections of one node within Window make it a
	// node to mark ineligible; default 15.
	Threshold int
	// RatePeriod and RatePerPeriod bound how many nodes may be named:
	// RatePerPeriod per RatePeriod, refilled evenly, with a burst of Burst;
	// defaults 5 per 30m, burst 10.
	RatePeriod    time.Duration
	RatePerPeriod int
	Burst         int
	// MaxNodes bounds the nodes tracked at once; the one rejected least
	// recently is forgotten first; default 512.
	MaxNodes int
}

// DefaultTrackerConfig returns the defaults, disabled.
func DefaultTrackerConfig() TrackerConfig {
	return TrackerConfig{Window: 10 * time.Minute, Threshold: 15, RatePeriod: 30 * time.Minute,
		RatePerPeriod: 5, Burst: 10, MaxNodes: 512}
}

// ErrInvalidTrackerConfig is returned for a configuration that cannot work.
var ErrInvalidTrackerConfig = errors.New("ordo: invalid plan rejection tracker config")

// Validate checks the configuration.
func (c TrackerConfig) Validate() error {
	if !c.Enabled {
		return nil
	}
	if c.Window <= 0 || c.Threshold <= 0 || c.RatePeriod <= 0 || c.RatePerPeriod <= 0 || c.Burst <= 0 || c.MaxNodes <= 0 {
		return ErrInvalidTrackerConfig
	}
	return nil
}

// Tracker counts plan rejections per node in a sliding window and names
// the nodes rejected too often, rate limited. Time is an input: every call
// takes now, so tests drive it without sleeping. It is safe for
// concurrent use: the applier counts rejections found while verifying one
// plan and those found at apply of the previous one at the same time.
type Tracker struct {
	mu     sync.Mutex
	cfg    TrackerConfig
	nodes  map[string][]time.Time // rejection times, oldest first
	tokens float64
	last   time.Time
}

// NewTracker returns a tracker with a full burst of tokens.
func NewTracker(cfg TrackerConfig) (*Tracker, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Tracker{cfg: cfg, nodes: map[string][]time.Time{}, tokens: float64(cfg.Burst)}, nil
}

// Enabled reports whether the tracker counts anything.
func (t *Tracker) Enabled() bool { return t != nil && t.cfg.Enabled }

// Add records a rejection of node at now and reports whether the node is
// now to be marked ineligible: over the threshold within the window and a
// token was left. A named node's count starts over.
func (t *Tracker) Add(node string, now time.Time) bool {
	if !t.Enabled() {
		return false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.addLocked(node, now)
}

func (t *Tracker) addLocked(node string, now time.Time) bool {
	times := t.prune(t.nodes[node], now)
	times = append(times, now)
	t.nodes[node] = times
	if _, ok := t.nodes[node]; ok && len(t.nodes) > t.cfg.MaxNodes {
		t.evict(now, node)
	}
	if len(times) < t.cfg.Threshold || !t.take(now) {
		return false
	}
	delete(t.nodes, node)
	return true
}

// Observe records every node the result rejected for a fault of its own,
// in order, and returns the ones to mark ineligible.
func (t *Tracker) Observe(r *Result, now time.Time) []string {
	if !t.Enabled() {
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []string
	for _, id := range r.RejectedNodes {
		if r.Reasons[id] == ReasonAllocElsewhere {
			continue // the plan's fault, not the node's
		}
		if t.addLocked(id, now) {
			out = append(out, id)
		}
	}
	return out
}

// Count returns the rejections of node within the window at now.
func (t *Tracker) Count(node string, now time.Time) int {
	if !t.Enabled() {
		return 0
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.prune(t.nodes[node], now))
}

func (t *Tracker) prune(times []time.Time, now time.Time) []time.Time {
	cut := now.Add(-t.cfg.Window)
	i := 0
	for i < len(times) && !times[i].After(cut) {
		i++
	}
	return times[i:]
}

// evict forgets the node rejected least recently (ties by id), never keep.
func (t *Tracker) evict(now time.Time, keep string) {
	ids := make([]string, 0, len(t.nodes))
	for id := range t.nodes {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	victim := ""
	var oldest time.Time
	for _, id := range ids {
		times := t.prune(t.nodes[id], now)
		if len(times) == 0 {
			delete(t.nodes, id)
			continue
		}
		if id == keep {
			continue
		}
		if last := times[len(times)-1]; victim == "" || last.Before(oldest) {
			victim, oldest = id, last
		}
	}
	if len(t.nodes) > t.cfg.MaxNodes && victim != "" {
		delete(t.nodes, victim)
	}
}

// take spends a rate-limit token if one is left at now.
func (t *Tracker) take(now time.Time) bool {
	if !t.last.IsZero() && now.After(t.last) {
		per := float64(t.cfg.RatePerPeriod) / float64(t.cfg.RatePeriod)
		t.tokens = min(float64(t.cfg.Burst), t.tokens+per*float64(now.Sub(t.last)))
	}
	if t.last.IsZero() || now.After(t.last) {
		t.last = now
	}
	if t.tokens < 1 {
		return false
	}
	t.tokens--
	return true
}

// Evaluator is the plan applier's pure half with its rejection tracker.
type Evaluator struct {
	Tracker *Tracker
}

// Evaluate is Evaluate plus the tracker: rejected nodes are counted at now
// and those over the threshold are named in IneligibleNodes.
func (e *Evaluator) Evaluate(plan *scheduler.Plan, st scheduler.State, now time.Time) Result {
	r := Evaluate(plan, st)
	if e.Tracker.Enabled() {
		r.IneligibleNodes = e.Tracker.Observe(&r, now)
	}
	return r
}
