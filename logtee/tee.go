package logtee

import (
	"bytes"
	"context"
	"log/slog"
	"math"
	"sync"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
)

// DefaultBuffer is how many lines a subscriber's buffer holds before
// further lines are dropped.
const DefaultBuffer = 512

// Tee is a slog.Handler that passes records to the handler it wraps and
// copies them, formatted, to its subscribers.
type Tee struct {
	next slog.Handler
	hub  *hub
	// ops are the WithAttrs and WithGroup calls that derived this handler,
	// in order, replayed on the subscribers' formatters.
	ops []op
}

var _ slog.Handler = (*Tee)(nil)

// op is one WithAttrs (group == "") or WithGroup call.
type op struct {
	group string
	attrs []slog.Attr
}

// hub holds the subscribers every handler derived from one New shares.
type hub struct {
	// min is the lowest level a subscriber asks for; math.MaxInt64 with none.
	min atomic.Int64
	mu  struct {
		sync.RWMutex
		subs map[*Subscription]struct{}
	}
	subscribers prometheus.Gauge
	dropped     prometheus.Counter
}

// New returns a Tee writing to next as next would alone.
func New(next slog.Handler) *Tee {
	h := &hub{
		subscribers: prometheus.NewGauge(prometheus.GaugeOpts{Name: "ordo_agent_monitor_subscribers",
			Help: "Readers of the agent's log (GET /v1/agent/monitor) connected now."}),
		dropped: prometheus.NewCounter(prometheus.CounterOpts{Name: "ordo_agent_monitor_dropped_lines_total",
			Help: "Log lines not sent to a monitor reader whose buffer was full."}),
	}
	h.mu.subs = map[*Subscription]struct{}{}
	h.min.Store(math.MaxInt64)
	return &Tee{next: next, hub: h}
}

// Register registers the tee's metrics with r.
func (t *Tee) Register(r prometheus.Registerer) error {
	for _, c := range []prometheus.Collector{t.hub.subscribers, t.hub.dropped} {
		if err := r.Register(c); err != nil {
			return err
		}
	}
	return nil
}

// Enabled implements slog.Handler: the wrapped handler's level, or lower
// when a subscriber asks for lower.
func (t *Tee) Enabled(ctx context.Context, l slog.Level) bool {
	return int64(l) >= t.hub.min.Load() || t.next.Enabled(ctx, l)
}

// Handle implements slog.Handler: the wrapped handler gets r if it
// enables r's level, and every subscriber at or below r's level a line.
func (t *Tee) Handle(ctx context.Context, r slog.Record) error {
	var err error
	if t.next.Enabled(ctx, r.Level) {
		err = t.next.Handle(ctx, r)
	}
	if int64(r.Level) >= t.hub.min.Load() {
		t.publish(ctx, r)
	}
	return err
}

// WithAttrs implements slog.Handler.
func (t *Tee) WithAttrs(attrs []slog.Attr) slog.Handler {
	if len(attrs) == 0 {
		return t
	}
	return &Tee{next: t.next.WithAttrs(attrs), hub: t.hub, ops: append(t.ops[:len(t.ops):len(t.ops)], op{attrs: attrs})}
}

// WithGroup implements slog.Handler.
func (t *Tee) WithGroup(name string) slog.Handler {
	if name == "" {
		return t
	}
	return &Tee{next: t.next.WithGroup(name), hub: t.hub, ops: append(t.ops[:len(t.ops):len(t.ops)], op{group: name})}
}

// publish formats r once per format some subscriber wants and offers the
// line to each subscriber whose level r reaches, never waiting.
func (t *Tee) publish(ctx context.Context, r slog.Record) {
	t.hub.mu.RLock()
	defer t.hub.mu.RUnlock()
	var lines [2][]byte // text, JSON
	for s := range t.hub.mu.subs {
		if r.Level < s.level {
			continue
		}
		f := 0
		if s.json {
			f = 1
		}
		if lines[f] == nil {
			lines[f] = format(ctx, s.json, t.ops, r)
		}
		select {
		case s.ch <- lines[f]:
		default:
			s.dropped.Add(1)
			t.hub.dropped.Inc()
		}
	}
}

// format renders r as slog's text or JSON handler would, with the
// attributes and groups ops added.
func format(ctx context.Context, json bool, ops []op, r slog.Record) []byte {
	var buf bytes.Buffer
	opts := &slog.HandlerOptions{Level: slog.Level(math.MinInt)}
	var h slog.Handler = slog.NewTextHandler(&buf, opts)
	if json {
		h = slog.NewJSONHandler(&buf, opts)
	}
	for _, o := range ops {
		if o.group != "" {
			h = h.WithGroup(o.group)
		} else {
			h = h.WithAttrs(o.attrs)
		}
	}
	_ = h.Handle(ctx, r) // writing to a bytes.Buffer does not fail
	return buf.Bytes()
}
