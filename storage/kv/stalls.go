package kv

import (
	"strings"
	"sync"
	"time"

	"github.com/cockroachdb/pebble"

	"github.com/ordoplane/ordo/clock"
)

// stalls counts the store's write stalls: the times Pebble held writes
// back because too many memtables waited for a flush or level 0 had too
// many sublevels, and how long they lasted. Pebble reports a stall's
// begin and end from its own goroutines.
type stalls struct {
	clock clock.Clock
	mu    sync.Mutex
	since time.Time // zero: no stall in progress
	cause string
	count map[string]int64
	total time.Duration
}

func newStalls(c clock.Clock) *stalls { return &stalls{clock: c, count: map[string]int64{}} }

// listener returns the Pebble event hooks that feed s.
func (s *stalls) listener() *pebble.EventListener {
	return &pebble.EventListener{WriteStallBegin: s.begin, WriteStallEnd: s.end}
}

// stallCause names Pebble's reason for a stall: "memtables", "l0" or
// "other".
func stallCause(reason string) string {
	switch {
	case strings.Contains(reason, "memtable"):
		return "memtables"
	case strings.Contains(reason, "L0"):
		return "l0"
	}
	return "other"
}

func (s *stalls) begin(info pebble.WriteStallBeginInfo) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cause = stallCause(info.Reason)
	s.count[s.cause]++
	s.since = s.clock.Now()
}

func (s *stalls) end() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.since.IsZero() {
		s.total += s.clock.Now().Sub(s.since)
		s.since = time.Time{}
	}
}

// WriteStalls is what the store's write stalls were so far.
type WriteStalls struct {
	// Count is the stalls begun, by cause: "memtables" (too many waiting
	// for a flush), "l0" (too many level-0 sublevels), "other".
	Count map[string]int64
	// Duration is their time held, a stall in progress included.
	Duration time.Duration
}

// Total returns how many stalls began, of any cause.
func (w WriteStalls) Total() int64 {
	var n int64
	for _, c := range w.Count {
		n += c
	}
	return n
}

func (s *stalls) read() WriteStalls {
	s.mu.Lock()
	defer s.mu.Unlock()
	w := WriteStalls{Count: make(map[string]int64, len(s.count)), Duration: s.total}
	for k, v := range s.count {
		w.Count[k] = v
	}
	if !s.since.IsZero() {
		w.Duration += s.clock.Now().Sub(s.since)
	}
	return w
}

// WriteStalls returns the store's write stalls since it opened.
func (s *Store) WriteStalls() WriteStalls { return s.stalls.read() }
