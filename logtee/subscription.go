package logtee

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"sync"
	"sync/atomic"
	"time"
)

// Options are what a subscriber asks for.
type Options struct {
	// Level is the lowest level of the records sent; the zero value is info.
	Level slog.Level
	// JSON formats lines as slog's JSON handler does; else as its text
	// handler (the agent's own output).
	JSON bool
	// Buffer is how many lines wait for the reader before further lines
	// are dropped; default DefaultBuffer.
	Buffer int
}

// Subscription receives the lines of the records at or above its level
// until Close.
type Subscription struct {
	hub     *hub
	level   slog.Level
	json    bool
	ch      chan []byte
	dropped atomic.Int64
	once    sync.Once
}

// Subscribe starts sending the lines of the records logged from now on
// to a new Subscription.
func (t *Tee) Subscribe(o Options) *Subscription {
	if o.Buffer <= 0 {
		o.Buffer = DefaultBuffer
	}
	s := &Subscription{hub: t.hub, level: o.Level, json: o.JSON, ch: make(chan []byte, o.Buffer)}
	h := t.hub
	h.mu.Lock()
	h.mu.subs[s] = struct{}{}
	h.updateMinLocked()
	h.mu.Unlock()
	h.subscribers.Inc()
	return s
}

// Lines delivers each line, ending in a newline. It is never closed:
// the reader stops reading when it closes the subscription.
func (s *Subscription) Lines() <-chan []byte { return s.ch }

// Dropped returns how many lines were dropped since the last call
// because the buffer was full, and counts from zero again.
func (s *Subscription) Dropped() int64 { return s.dropped.Swap(0) }

// DroppedLine is the line that tells the reader n lines were dropped, in
// its format, at warn level.
func (s *Subscription) DroppedLine(n int64) []byte {
	r := slog.NewRecord(time.Now(), slog.LevelWarn,
		fmt.Sprintf("monitor: %d log lines dropped: the reader fell behind", n), 0)
	r.AddAttrs(slog.Int64("dropped", n))
	return format(context.Background(), s.json, nil, r)
}

// Close stops the subscription; later records are not sent to it. Safe
// to call more than once.
func (s *Subscription) Close() {
	s.once.Do(func() {
		h := s.hub
		h.mu.Lock()
		delete(h.mu.subs, s)
		h.updateMinLocked()
		h.mu.Unlock()
		h.subscribers.Dec()
	})
}

// updateMinLocked recomputes the lowest level a subscriber asks for.
func (h *hub) updateMinLocked() {
	m := int64(math.MaxInt64)
	for s := range h.mu.subs {
		m = min(m, int64(s.level))
	}
	h.min.Store(m)
}
