package mirror

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/storage/archive"
	"github.com/ordoplane/ordo/storage/kv"
)

// notifier stands in for the FSM's: Applied and a channel closed on change.
type notifier struct {
	mu    sync.Mutex
	index uint64
	ch    chan struct{}
}

func newNotifier() *notifier { return &notifier{ch: make(chan struct{})} }

func (n *notifier) Applied() (uint64, <-chan struct{}) {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.index, n.ch
}

func (n *notifier) publish(index uint64) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.index = index
	close(n.ch)
	n.ch = make(chan struct{})
}

// log is an archive the test appends to as the FSM would.
type log struct {
	t      testing.TB
	store  *kv.Store
	notify *notifier
	index  uint64
	length uint64
	time   time.Time
}

func newLog(t testing.TB) *log {
	t.Helper()
	s, err := kv.Open(t.TempDir(), kv.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return &log{t: t, store: s, notify: newNotifier(), time: time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)}
}

// append commits one entry of payloads at the next index.
func (l *log) append(payloads ...events.Payload) uint64 {
	l.t.Helper()
	l.index++
	l.time = l.time.Add(time.Millisecond)
	e := events.Entry{Time: l.time.UnixNano(), CommandID: fmt.Sprint("cmd-", l.index), Actor: "test"}
	for i, p := range payloads {
		ev, err := events.New(fmt.Sprintf("ev-%d-%d", l.index, i), p)
		if err != nil {
			l.t.Fatal(err)
		}
		e.Events = append(e.Events, ev)
	}
	e.Stamp(l.index)
	b := l.store.Batch()
	for i := range e.Events {
		data, err := events.EncodeEvent(&e.Events[i])
		if err != nil {
			l.t.Fatal(err)
		}
		if err := archive.Append(b, l.index, uint32(i), data); err != nil {
			l.t.Fatal(err)
		}
	}
	l.length += uint64(len(e.Events))
	if err := archive.SetCounters(b, l.length, l.index); err != nil {
		l.t.Fatal(err)
	}
	if err := b.Commit(); err != nil {
		l.t.Fatal(err)
	}
	l.notify.publish(l.index)
	return l.index
}

// namespaces appends n entries of per events each, upserting namespaces
// ns-0 … ns-(names-1) in turn, so every name gets many events.
func (l *log) namespaces(n, per, names int) {
	l.t.Helper()
	k := 0
	for range n {
		ps := make([]events.Payload, per)
		for j := range ps {
			ps[j] = &events.NamespaceUpserted{Namespace: events.Namespace{Name: fmt.Sprint("ns-", k%names),
				Description: fmt.Sprint("rev ", k)}}
			k++
		}
		l.append(ps...)
	}
}

// last returns the position of the last appended event.
func (l *log) last() Position {
	var p Position
	_ = archive.Scan(l.store, l.index, 0, func(i uint64, s uint32, _ []byte) error {
		p = Position{i, s}
		return nil
	})
	return p
}

// startKafka starts a one-broker kfake cluster on a loopback port.
func startKafka(t testing.TB, opts ...kfake.Opt) *kfake.Cluster {
	t.Helper()
	c, err := kfake.NewCluster(append([]kfake.Opt{kfake.NumBrokers(1)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

func quiet() *slog.Logger {
	if os.Getenv("MIRROR_TEST_LOG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

// newMirror builds a mirror of l into the cluster at addrs.
func newMirror(t testing.TB, l *log, addrs []string, change func(*Config)) *Mirror {
	t.Helper()
	cfg := Config{Settings: Settings{Brokers: addrs, Topic: "ordo.events", Partitions: 4, Timeout: 5 * time.Second},
		Store: l.store, Applied: l.notify.Applied, Logger: quiet(),
		MinBackoff: 10 * time.Millisecond, MaxBackoff: 200 * time.Millisecond}
	if change != nil {
		change(&cfg)
	}
	m, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// running is a mirror's Run in a goroutine.
type running struct {
	cancel context.CancelFunc
	done   chan error
}

func run(m *Mirror) *running {
	ctx, cancel := context.WithCancel(context.Background())
	r := &running{cancel: cancel, done: make(chan error, 1)}
	go func() { r.done <- m.Run(ctx) }()
	return r
}

func (r *running) stop(t testing.TB) {
	t.Helper()
	r.cancel()
	select {
	case <-r.done:
	case <-time.After(30 * time.Second):
		t.Fatal("mirror did not stop")
	}
}

// verify runs Verify and fails t on any finding.
func verify(t testing.TB, m *Mirror, l *log) Report {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	rep, err := Verify(ctx, m.Settings(), l.store, VerifyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK {
		t.Fatalf("verify: %+v", rep)
	}
	return rep
}

type recordHolder struct{ r kgo.Record }

// decodeAll returns every archived event of l.
func decodeAll(t testing.TB, l *log) []*events.Event {
	t.Helper()
	var out []*events.Event
	err := archive.Scan(l.store, 0, 0, func(_ uint64, _ uint32, data []byte) error {
		ev, err := events.DecodeEvent(data)
		out = append(out, ev)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
