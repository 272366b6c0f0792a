package fsm

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/storage/raftlog"
)

// ErrHalted is wrapped by a *HaltError: the FSM stopped applying.
var ErrHalted = errors.New("ordo: fsm halted")

// ErrUnknownPrecondition is an entry's precondition whose operation this
// build does not have: a newer ordo's leader wrote it.
var ErrUnknownPrecondition = errors.New("ordo: precondition operation unknown to this build")

// HaltError is why an FSM stopped applying entries: an entry holds an
// event of a type this build does not know, or of a newer version than it
// knows (a newer ordo wrote it), or a snapshot from a newer ordo was
// installed. Applying on, or skipping the entry, would leave this server's
// projections different from every other's, so it applies nothing more
// until a build that knows the entry is started on the data directory.
type HaltError struct {
	// Index is the entry that was not applied (or the snapshot's index).
	Index uint64
	// Build is this build's ordo version.
	Build string
	// Err is the cause: it wraps events.ErrUnknownType,
	// events.ErrFutureVersion, ErrUnknownPrecondition or ErrDowngrade.
	Err error
}

func (e *HaltError) Error() string {
	return fmt.Sprintf("fsm halted at index %d: %v: this build (ordo %s) cannot apply it and applies nothing more; "+
		"start a newer ordo on this data directory", e.Index, e.Err, e.Build)
}

// Unwrap returns the cause and ErrHalted.
func (e *HaltError) Unwrap() []error { return []error{ErrHalted, e.Err} }

// compatState is what the FSM knows of its build, and whether it halted.
type compatState struct {
	build build
	// halt, once set, is why the FSM stopped applying; it is never
	// cleared.
	halt   atomic.Pointer[HaltError]
	once   sync.Once
	halted chan struct{}
	reg    prometheus.Registerer
	gauge  prometheus.Gauge
}

func newCompat(cfg Config) *compatState {
	c := &compatState{build: newBuild(cfg), halted: make(chan struct{}), reg: cfg.Registerer,
		gauge: prometheus.NewGauge(prometheus.GaugeOpts{Name: "ordo_fsm_halted",
			Help: "1 once the FSM stopped applying entries: an entry or snapshot this build cannot read (see /v1/agent/health)."})}
	if c.reg != nil {
		c.reg.MustRegister(c.gauge)
	}
	return c
}

func (c *compatState) unregister() {
	if c.reg != nil {
		c.reg.Unregister(c.gauge)
	}
}

// Halt returns why the FSM stopped applying entries, nil while it
// applies.
func (f *FSM) Halt() *HaltError { return f.compat.halt.Load() }

// Halted is closed when the FSM stops applying entries (Halt says why).
// The agent leaves the raft cluster then.
func (f *FSM) Halted() <-chan struct{} { return f.compat.halted }

// haltWith stops the FSM for good: every later Apply commits nothing and
// answers each entry with the error, snapshots are refused. The first
// halt's reason is kept.
func (f *FSM) haltWith(index uint64, err error) *HaltError {
	h := &HaltError{Index: index, Build: f.compat.build.version, Err: err}
	if !f.compat.halt.CompareAndSwap(nil, h) {
		return f.compat.halt.Load()
	}
	f.compat.gauge.Set(1)
	f.log.Error("fsm halted: this build cannot apply what the log holds; no entry will be applied until a newer ordo runs on this data directory",
		"index", index, "build", f.compat.build.version, "err", err)
	f.compat.once.Do(func() { close(f.compat.halted) })
	return h
}

// haltResults answers each of logs with h, for raft's proposers.
func haltResults(logs []raftlog.Log, h *HaltError) []any {
	out := make([]any, len(logs))
	for i, l := range logs {
		out[i] = Result{Index: l.Index, Err: h}
	}
	return out
}

// unknownEventError is an entry holding an event this build cannot read:
// it halts the FSM (haltOn) instead of failing the server or being
// rejected.
type unknownEventError struct{ err error }

func (e *unknownEventError) Error() string { return e.err.Error() }
func (e *unknownEventError) Unwrap() error { return e.err }

// checkKnown returns an *unknownEventError when entry holds an event whose
// type the registry lacks, or at a newer version than it knows, or a
// precondition whose operation no check implements. Entries are built by
// the leader, never by a client: what this build does not know a newer
// ordo wrote, and every server of that ordo applies it.
func checkKnown(entry *events.Entry) error {
	for i, p := range entry.Preconditions {
		switch p.Op {
		case events.Exists, events.Absent, events.ModifyIndex, events.GroupOp:
			continue
		}
		if _, ok := projections.RegisteredCheck(p.Op); !ok {
			return &unknownEventError{fmt.Errorf("precondition %d (%q on %s): %w", i, p.Op, p.Table, ErrUnknownPrecondition)}
		}
	}
	for i := range entry.Events {
		ev := &entry.Events[i]
		t, ok := events.Lookup(ev.Type)
		switch {
		case !ok:
			return &unknownEventError{fmt.Errorf("event %d (%s v%d): %w", i, ev.Type, ev.Version, events.ErrUnknownType)}
		case ev.Version > t.Version:
			return &unknownEventError{fmt.Errorf("event %d (%s v%d, this build knows v%d): %w", i, ev.Type, ev.Version, t.Version, events.ErrFutureVersion)}
		}
	}
	return nil
}

// haltOn halts the FSM when err is an entry's unknown event
// (checkKnown), and reports whether it did.
func (f *FSM) haltOn(index uint64, err error) bool {
	var u *unknownEventError
	if !errors.As(err, &u) {
		return false
	}
	f.haltWith(index, u.err)
	return true
}
