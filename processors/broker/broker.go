package broker

import (
	"container/heap"
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ordoplane/ordo/clock"
	"github.com/ordoplane/ordo/events"
)

// ErrDisabled is returned while the broker is disabled (this server does not lead).
var ErrDisabled = errors.New("ordo: eval broker is disabled")

// ErrNotOutstanding is returned when acking or nacking an eval that is not
// in flight with that token.
var ErrNotOutstanding = errors.New("ordo: eval is not outstanding")

// Config configures a Broker.
type Config struct {
	// NackTimeout is how long a worker may hold an eval without acking it;
	// default 60s.
	NackTimeout time.Duration
	// DeliveryLimit is how many times an eval is delivered before it fails; default 3.
	DeliveryLimit int
	// InitialNackDelay and SubsequentNackDelay delay the redelivery of a
	// nacked eval after its first and later nacks; default 1s and 20s.
	InitialNackDelay, SubsequentNackDelay time.Duration
	// Registerer receives the broker's gauges; nil registers none.
	Registerer prometheus.Registerer
	// Clock times nack timeouts and delayed evals; default clock.System.
	Clock clock.Clock
}

// DefaultConfig returns the defaults.
func DefaultConfig() Config {
	return Config{NackTimeout: 60 * time.Second, DeliveryLimit: 3,
		InitialNackDelay: time.Second, SubsequentNackDelay: 20 * time.Second, Clock: clock.System{}}
}

// Validate reports a Config that cannot work.
func (c Config) Validate() error {
	if c.NackTimeout <= 0 || c.DeliveryLimit <= 0 || c.InitialNackDelay < 0 || c.SubsequentNackDelay < 0 {
		return fmt.Errorf("broker: invalid config %+v", c)
	}
	return nil
}

type jobKey struct{ ns, id string }

type unacked struct {
	eval  *events.Evaluation
	token string
	timer clock.Timer
}

// Broker is the eval broker.
type Broker struct {
	cfg     Config
	metrics *metrics

	mu struct {
		sync.Mutex
		enabled    bool
		seq        uint64
		ready      map[string]*evalHeap // by scheduler type
		waiting    map[jobKey]*evalHeap // behind the job's eval in flight
		inflight   map[jobKey]string    // job → eval id ready or unacked
		unack      map[string]*unacked
		deliveries map[string]int
		delayed    map[string]clock.Timer
		failed     []*events.Evaluation
		wake       chan struct{}
		// reset closes when the broker is reset, ending NackWait's watchers.
		reset chan struct{}
	}
}

// New returns a disabled Broker; a nil Clock takes clock.System.
func New(cfg Config) (*Broker, error) {
	if cfg.Clock == nil {
		cfg.Clock = clock.System{}
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	b := &Broker{cfg: cfg, metrics: newMetrics(cfg.Registerer)}
	b.resetLocked()
	return b, nil
}

// Close unregisters the broker's metrics.
func (b *Broker) Close() { b.metrics.unregister() }

func (b *Broker) resetLocked() {
	for _, u := range b.mu.unack {
		u.timer.Stop()
	}
	for _, t := range b.mu.delayed {
		t.Stop()
	}
	b.mu.ready = map[string]*evalHeap{}
	b.mu.waiting = map[jobKey]*evalHeap{}
	b.mu.inflight = map[jobKey]string{}
	b.mu.unack = map[string]*unacked{}
	b.mu.deliveries = map[string]int{}
	b.mu.delayed = map[string]clock.Timer{}
	b.mu.failed = nil
	if b.mu.wake != nil {
		close(b.mu.wake)
	}
	b.mu.wake = make(chan struct{})
	if b.mu.reset != nil {
		close(b.mu.reset)
	}
	b.mu.reset = make(chan struct{})
}

// SetEnabled turns the broker on (leadership gained) or off (lost);
// turning it off drops every eval.
func (b *Broker) SetEnabled(on bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !on {
		b.resetLocked()
	}
	b.mu.enabled = on
	b.updateGaugesLocked()
}

// Enabled reports whether the broker takes evals.
func (b *Broker) Enabled() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.mu.enabled
}

// Enqueue adds a pending eval. A terminal or blocked eval, or one already
// known, is ignored. An eval with WaitUntil after now waits until then.
func (b *Broker) Enqueue(ev *events.Evaluation, now time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.mu.enabled || ev.Status != events.EvalStatusPending || b.knownLocked(ev.ID) {
		return
	}
	if ev.WaitUntil > now.UnixNano() {
		ev := ev
		b.mu.delayed[ev.ID] = b.cfg.Clock.AfterFunc(time.Duration(ev.WaitUntil-now.UnixNano()), func() {
			b.mu.Lock()
			defer b.mu.Unlock()
			if _, ok := b.mu.delayed[ev.ID]; ok {
				delete(b.mu.delayed, ev.ID)
				b.addLocked(ev)
			}
		})
		b.updateGaugesLocked()
		return
	}
	b.addLocked(ev)
}

func (b *Broker) knownLocked(id string) bool {
	if _, ok := b.mu.unack[id]; ok {
		return true
	}
	if _, ok := b.mu.delayed[id]; ok {
		return true
	}
	for _, h := range b.mu.ready {
		if h.contains(id) {
			return true
		}
	}
	for _, h := range b.mu.waiting {
		if h.contains(id) {
			return true
		}
	}
	return false
}

// addLocked makes ev ready, or queues it behind its job's eval in flight.
func (b *Broker) addLocked(ev *events.Evaluation) {
	b.mu.seq++
	item := &item{eval: ev, seq: b.mu.seq}
	k := jobKey{ev.Namespace, ev.JobID}
	if cur, busy := b.mu.inflight[k]; busy && cur != ev.ID {
		h := b.mu.waiting[k]
		if h == nil {
			h = &evalHeap{}
			b.mu.waiting[k] = h
		}
		heap.Push(h, item)
		b.updateGaugesLocked()
		return
	}
	b.mu.inflight[k] = ev.ID
	h := b.mu.ready[ev.Type]
	if h == nil {
		h = &evalHeap{}
		b.mu.ready[ev.Type] = h
	}
	heap.Push(h, item)
	close(b.mu.wake)
	b.mu.wake = make(chan struct{})
	b.updateGaugesLocked()
}

// Dequeue waits for a ready eval of one of types and returns it with a
// token for Ack/Nack.
func (b *Broker) Dequeue(ctx context.Context, types []string) (*events.Evaluation, string, error) {
	for {
		b.mu.Lock()
		if !b.mu.enabled {
			b.mu.Unlock()
			return nil, "", ErrDisabled
		}
		if ev, token, ok := b.popLocked(types); ok {
			b.mu.Unlock()
			return ev, token, nil
		}
		wake := b.mu.wake
		b.mu.Unlock()
		select {
		case <-ctx.Done():
			return nil, "", ctx.Err()
		case <-wake:
		}
	}
}

func (b *Broker) popLocked(types []string) (*events.Evaluation, string, bool) {
	var best *evalHeap
	for _, t := range types {
		h := b.mu.ready[t]
		if h == nil || h.Len() == 0 {
			continue
		}
		if best == nil || (*h)[0].before((*best)[0]) {
			best = h
		}
	}
	if best == nil {
		return nil, "", false
	}
	ev := heap.Pop(best).(*item).eval
	b.mu.deliveries[ev.ID]++
	b.mu.seq++
	token := fmt.Sprintf("%s-%d", ev.ID, b.mu.seq)
	id := ev.ID
	u := &unacked{eval: ev, token: token}
	u.timer = b.cfg.Clock.AfterFunc(b.cfg.NackTimeout, func() { _ = b.Nack(id, token) })
	b.mu.unack[id] = u
	b.updateGaugesLocked()
	return ev, token, true
}

// Ack marks the eval done: the next eval of its job becomes ready.
func (b *Broker) Ack(id, token string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	u, ok := b.mu.unack[id]
	if !ok || u.token != token {
		return fmt.Errorf("ack %s: %w", id, ErrNotOutstanding)
	}
	u.timer.Stop()
	delete(b.mu.unack, id)
	delete(b.mu.deliveries, id)
	b.releaseJobLocked(u.eval)
	b.updateGaugesLocked()
	return nil
}

// releaseJobLocked lets the next waiting eval of ev's job become ready.
func (b *Broker) releaseJobLocked(ev *events.Evaluation) {
	k := jobKey{ev.Namespace, ev.JobID}
	if b.mu.inflight[k] == ev.ID {
		delete(b.mu.inflight, k)
	}
	if h := b.mu.waiting[k]; h != nil && h.Len() > 0 {
		next := heap.Pop(h).(*item).eval
		if h.Len() == 0 {
			delete(b.mu.waiting, k)
		}
		b.addLocked(next)
	}
}

// Nack returns the eval for redelivery after a delay, or fails it once it
// reached the delivery limit.
func (b *Broker) Nack(id, token string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	u, ok := b.mu.unack[id]
	if !ok || u.token != token {
		return fmt.Errorf("nack %s: %w", id, ErrNotOutstanding)
	}
	u.timer.Stop()
	delete(b.mu.unack, id)
	n := b.mu.deliveries[id]
	if n >= b.cfg.DeliveryLimit {
		delete(b.mu.deliveries, id)
		b.mu.failed = append(b.mu.failed, u.eval)
		b.metrics.failed.Inc()
		b.releaseJobLocked(u.eval)
		close(b.mu.wake)
		b.mu.wake = make(chan struct{})
		b.updateGaugesLocked()
		return nil
	}
	delay := b.cfg.InitialNackDelay
	if n > 1 {
		delay = b.cfg.SubsequentNackDelay
	}
	ev := u.eval
	// The job stays in flight while the eval waits to be redelivered.
	b.mu.delayed[id] = b.cfg.Clock.AfterFunc(delay, func() {
		b.mu.Lock()
		defer b.mu.Unlock()
		if _, ok := b.mu.delayed[id]; !ok {
			return
		}
		delete(b.mu.delayed, id)
		b.readyAgainLocked(ev)
	})
	b.updateGaugesLocked()
	return nil
}

// NackWait returns an eval the worker could not schedule yet (its state is
// behind the eval, N2): it is redelivered after delay, or as soon as early
// closes, whichever comes first. It does not count against the delivery limit.
func (b *Broker) NackWait(id, token string, delay time.Duration, early <-chan struct{}) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	u, ok := b.mu.unack[id]
	if !ok || u.token != token {
		return fmt.Errorf("nack %s: %w", id, ErrNotOutstanding)
	}
	u.timer.Stop()
	delete(b.mu.unack, id)
	b.mu.deliveries[id]--
	ev := u.eval
	stop := make(chan struct{})
	release := func() {
		b.mu.Lock()
		defer b.mu.Unlock()
		if _, ok := b.mu.delayed[id]; !ok {
			return
		}
		delete(b.mu.delayed, id)
		close(stop)
		b.readyAgainLocked(ev)
	}
	b.mu.delayed[id] = b.cfg.Clock.AfterFunc(delay, release)
	reset := b.mu.reset
	go func() {
		select {
		case <-early:
			release()
		case <-stop:
		case <-reset:
		}
	}()
	b.updateGaugesLocked()
	return nil
}

// readyAgainLocked puts an eval whose job is still in flight back in the
// ready queue.
func (b *Broker) readyAgainLocked(ev *events.Evaluation) {
	b.mu.seq++
	h := b.mu.ready[ev.Type]
	if h == nil {
		h = &evalHeap{}
		b.mu.ready[ev.Type] = h
	}
	heap.Push(h, &item{eval: ev, seq: b.mu.seq})
	close(b.mu.wake)
	b.mu.wake = make(chan struct{})
	b.updateGaugesLocked()
}

// Remove drops the evals ids names from the broker (they were deleted
// from the state): from the ready, waiting and delayed queues, letting the
// next eval of a job whose turn it was become ready. An eval a worker
// holds (unacked) stays with it: its plan is refused at apply (the plan
// commit requires the eval to exist) and the worker acks it. Remove
// returns how many evals it dropped.
func (b *Broker) Remove(ids []string) int {
	if len(ids) == 0 {
		return 0
	}
	set := make(map[string]struct{}, len(ids))
	for _, id := range ids {
		set[id] = struct{}{}
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	var dropped []*events.Evaluation
	for id := range set {
		if t, ok := b.mu.delayed[id]; ok {
			t.Stop()
			delete(b.mu.delayed, id)
			delete(b.mu.deliveries, id)
			dropped = append(dropped, &events.Evaluation{ID: id})
		}
	}
	filter := func(h *evalHeap) {
		kept := (*h)[:0]
		for _, it := range *h {
			if _, gone := set[it.eval.ID]; gone {
				delete(b.mu.deliveries, it.eval.ID)
				dropped = append(dropped, it.eval)
				continue
			}
			kept = append(kept, it)
		}
		clear((*h)[len(kept):])
		*h = kept
		heap.Init(h)
	}
	for k, h := range b.mu.waiting {
		filter(h)
		if h.Len() == 0 {
			delete(b.mu.waiting, k)
		}
	}
	for _, h := range b.mu.ready {
		filter(h)
	}
	// A job whose turn was a dropped eval passes to its next waiting eval.
	for k, id := range b.mu.inflight {
		if _, gone := set[id]; !gone {
			continue
		}
		if _, held := b.mu.unack[id]; held {
			continue
		}
		b.releaseJobLocked(&events.Evaluation{ID: id, Namespace: k.ns, JobID: k.id})
	}
	if len(dropped) > 0 {
		b.metrics.removed.Add(float64(len(dropped)))
		b.updateGaugesLocked()
	}
	return len(dropped)
}

// DequeueFailed returns the evals that exceeded the delivery limit since
// the last call.
func (b *Broker) DequeueFailed() []*events.Evaluation {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := b.mu.failed
	b.mu.failed = nil
	return out
}

// Stats counts the evals the broker holds.
type Stats struct {
	Ready, Unacked, Waiting, Delayed, Failed int
}

// Stats returns the broker's counts.
func (b *Broker) Stats() Stats {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.statsLocked()
}

func (b *Broker) statsLocked() Stats {
	s := Stats{Unacked: len(b.mu.unack), Delayed: len(b.mu.delayed), Failed: len(b.mu.failed)}
	for _, h := range b.mu.ready {
		s.Ready += h.Len()
	}
	for _, h := range b.mu.waiting {
		s.Waiting += h.Len()
	}
	return s
}

func (b *Broker) updateGaugesLocked() { b.metrics.set(b.statsLocked()) }
