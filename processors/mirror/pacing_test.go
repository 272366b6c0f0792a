package mirror

import (
	"testing"
	"time"

	"github.com/ordoplane/ordo/clock/clocktest"
	"github.com/ordoplane/ordo/storage/waittest"
)

// TestPacedOnceCaughtUp: caught up, the mirror reads the log at most once
// a Linger, so a transaction carries what arrived meanwhile; behind, its
// chunks follow each other without waiting; after a quiet spell longer
// than a Linger, an event goes at once.
func TestPacedOnceCaughtUp(t *testing.T) {
	const linger = time.Hour // on the test's clock, which moves only when told
	l := newLog(t)
	l.namespaces(3, 1, 3)
	k := startKafka(t)
	clk := clocktest.NewClock(time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC))
	m := newMirror(t, l, k.ListenAddrs(), func(c *Config) { c.Clock, c.Linger, c.ChunkEvents = clk, linger, 5 })
	defer m.Close()
	r := run(m)
	defer r.stop(t)
	// The first read is not paced: nothing was read before.
	waittest.For(t, 30*time.Second, "the first events mirrored", func() bool { return m.Mirrored() == l.last() })

	// Caught up, new events wait for the Linger since the last read.
	before := m.Mirrored()
	l.namespaces(2, 1, 3)
	clk.BlockUntilWaiters(1)
	if got := m.Mirrored(); got != before {
		t.Fatalf("mirrored %s before the Linger was over; want %s", got, before)
	}
	// Behind: 23 events are five chunks, read without another wait.
	l.namespaces(21, 1, 3)
	clk.Advance(linger)
	waittest.For(t, 30*time.Second, "the backlog mirrored without waiting", func() bool { return m.Mirrored() == l.last() })

	// A quiet spell longer than a Linger: the next event goes at once.
	clk.Advance(2 * linger)
	l.namespaces(1, 1, 3)
	waittest.For(t, 30*time.Second, "an event after a quiet spell mirrored at once", func() bool { return m.Mirrored() == l.last() })
	verify(t, m, l)
}
