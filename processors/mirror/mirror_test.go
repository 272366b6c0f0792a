package mirror

import (
	"errors"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/ordoplane/ordo/clock"
	"github.com/ordoplane/ordo/storage/waittest"
)

func TestMirrorsEveryEventOnce(t *testing.T) {
	l := newLog(t)
	l.namespaces(200, 5, 37)
	k := startKafka(t)
	m := newMirror(t, l, k.ListenAddrs(), func(c *Config) { c.ChunkEvents = 128 })
	r := run(m)
	waittest.For(t, 30*time.Second, "the backlog mirrored", func() bool { return m.Mirrored() == l.last() })
	l.namespaces(50, 3, 37)
	waittest.For(t, 30*time.Second, "new events mirrored", func() bool { return m.Mirrored() == l.last() })
	r.stop(t)
	rep := verify(t, m, l)
	if rep.Records != 1150 || rep.Checked != 1150 || rep.Pending != 0 {
		t.Fatalf("report %+v, want 1150 records", rep)
	}
}

// TestKilledAndRestartedAtRandom kills the mirror (its context cancelled
// mid-transaction, as a crash or a lost leadership would) at random points
// while events keep arriving, and runs two mirrors at once for a while, as
// a deposed leader that has not noticed yet would: the topic still holds
// every event exactly once, each partition in log order.
func TestKilledAndRestartedAtRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(6, 6))
	l := newLog(t)
	k := startKafka(t)
	small := func(c *Config) { c.ChunkEvents = 1 + rng.IntN(200) }
	m := newMirror(t, l, k.ListenAddrs(), small)
	defer m.Close()
	r := run(m)
	for round := range 8 {
		l.namespaces(20+rng.IntN(80), 1+rng.IntN(7), 50)
		time.Sleep(time.Duration(rng.IntN(30)) * time.Millisecond) // a random point, not a timing assertion
		r.stop(t)
		if round%4 == 3 {
			// A zombie: the old mirror keeps running beside the new one.
			z := newMirror(t, l, k.ListenAddrs(), small)
			zr := run(z)
			l.namespaces(30, 3, 50)
			time.Sleep(time.Duration(rng.IntN(30)) * time.Millisecond)
			zr.stop(t)
		}
		r = run(m)
	}
	waittest.For(t, 60*time.Second, "everything mirrored", func() bool { return m.Mirrored() == l.last() })
	r.stop(t)
	rep := verify(t, m, l)
	if rep.Pending != 0 || uint64(rep.Checked) != l.length {
		t.Fatalf("report %+v, want all %d events", rep, l.length)
	}
}

// TestKafkaDownThenCatchesUp fails every produce for a while: appends go on
// untouched, the mirror backs off and, once Kafka answers, catches up.
func TestKafkaDownThenCatchesUp(t *testing.T) {
	l := newLog(t)
	k := startKafka(t)
	m := newMirror(t, l, k.ListenAddrs(), func(c *Config) { c.Timeout = time.Second })
	defer m.Close()
	r := run(m)
	defer r.stop(t)
	l.namespaces(10, 2, 5)
	waittest.For(t, 30*time.Second, "first events mirrored", func() bool { return m.Mirrored() == l.last() })

	var down atomic.Bool
	down.Store(true)
	k.ControlKey(int16(kmsg.Produce), func(req kmsg.Request) (kmsg.Response, error, bool) {
		k.KeepControl()
		if !down.Load() {
			return nil, nil, false
		}
		return nil, errors.New("kafka is down"), true
	})
	start := time.Now()
	l.namespaces(150, 4, 50) // the log does not wait for the mirror
	t.Logf("600 events appended in %v while Kafka was down", time.Since(start))
	if m.Mirrored() == l.last() {
		t.Fatal("mirrored while every produce fails")
	}
	waittest.For(t, 30*time.Second, "a failed session", func() bool { return m.Status(t.Context()).LastError != "" })
	if st := m.Status(t.Context()); st.LagEvents == 0 || st.LagSeconds <= 0 {
		t.Fatalf("status while down: %+v, want lag", st)
	}
	down.Store(false)
	waittest.For(t, 60*time.Second, "catch up", func() bool { return m.Mirrored() == l.last() })
	if st := m.Status(t.Context()); st.LagEvents != 0 || !st.BrokersReachable {
		t.Fatalf("status after catching up: %+v", st)
	}
	verify(t, m, l)
}

// TestSensitiveFieldNeverReachesTopic mirrors events of a type with a
// sensitive field and reads every record back.
func TestSensitiveFieldNeverReachesTopic(t *testing.T) {
	for _, format := range []string{FormatJSON, FormatMsgpack} {
		t.Run(format, func(t *testing.T) {
			l := newLog(t)
			l.append(&secretIssued{Name: "ci", Secret: secretValue}, &secretIssued{Name: "deploy", Secret: secretValue})
			l.namespaces(3, 2, 2)
			l.append(&secretIssued{Name: "ci", Secret: secretValue})
			k := startKafka(t)
			m := newMirror(t, l, k.ListenAddrs(), func(c *Config) { c.Format = format })
			defer m.Close()
			r := run(m)
			waittest.For(t, 30*time.Second, "mirrored", func() bool { return m.Mirrored() == l.last() })
			r.stop(t)
			n := 0
			_, err := ReadTopic(t.Context(), m.Settings(), func(tr TopicRecord) error {
				n++
				assertNoSecret(t, &kgo.Record{Key: []byte(tr.Key), Value: tr.Value})
				for k, v := range tr.Headers {
					if strings.Contains(v, secretValue) {
						t.Fatalf("secret in header %s", k)
					}
				}
				return nil
			})
			if err != nil || n != 9 {
				t.Fatalf("read %d records, %v; want 9", n, err)
			}
			verify(t, m, l)
		})
	}
}

// waitsClock is the system clock whose After records the waits asked
// for at least min (the retries' backoffs) and answers each after a
// millisecond.
type waitsClock struct {
	clock.System
	min   time.Duration
	mu    sync.Mutex
	waits []time.Duration
}

func (c *waitsClock) After(d time.Duration) <-chan time.Time {
	if d >= c.min {
		c.mu.Lock()
		c.waits = append(c.waits, d)
		c.mu.Unlock()
		d = time.Millisecond
	}
	return time.After(d)
}

// TestBackoffRestartsAfterProgress: a session that committed before it
// failed is retried after the least backoff, however many sessions failed
// before it; only failures in a row without a commit wait longer. Every
// third produce request fails, so each session commits a little and dies.
func TestBackoffRestartsAfterProgress(t *testing.T) {
	l := newLog(t)
	k := startKafka(t)
	var mu sync.Mutex
	commits, kills := 0, 0
	k.ControlKey(int16(kmsg.EndTxn), func(req kmsg.Request) (kmsg.Response, error, bool) {
		k.KeepControl()
		mu.Lock()
		defer mu.Unlock()
		if commits++; commits%3 == 0 {
			// An answer the client does not retry: the session ends.
			kills++
			resp := req.ResponseKind().(*kmsg.EndTxnResponse)
			resp.ErrorCode = kerr.InvalidTxnState.Code
			return resp, nil, true
		}
		return nil, nil, false
	})
	const minBackoff = 10 * time.Millisecond
	clk := &waitsClock{min: minBackoff}
	m := newMirror(t, l, k.ListenAddrs(), func(c *Config) {
		c.ChunkEvents, c.Clock, c.Linger = 5, clk, time.Millisecond
		c.MinBackoff, c.MaxBackoff = minBackoff, time.Hour
	})
	defer m.Close()
	l.namespaces(40, 2, 20)
	r := run(m)
	waittest.For(t, 60*time.Second, "everything mirrored", func() bool { return m.Mirrored() == l.last() })
	r.stop(t)
	clk.mu.Lock()
	defer clk.mu.Unlock()
	mu.Lock()
	defer mu.Unlock()
	t.Logf("%d retries, %d commits refused", len(clk.waits), kills)
	if len(clk.waits) < 5 {
		t.Fatalf("%d retries (%d commits refused); the test needs sessions that die", len(clk.waits), kills)
	}
	for i, w := range clk.waits {
		if w > 4*minBackoff {
			t.Fatalf("retry %d of %d waited %s (all: %v); a session that committed restarts the backoff at %s",
				i+1, len(clk.waits), w, clk.waits, minBackoff)
		}
	}
}
