package projectionstest

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/all"
	"github.com/ordoplane/ordo/projections/fsm"
	"github.com/ordoplane/ordo/storage/archive"
	"github.com/ordoplane/ordo/storage/kv"
	"github.com/ordoplane/ordo/storage/raftlog"
	"github.com/ordoplane/ordo/storage/storagetest"
)

// LeaderTime is the time, in Unix nanoseconds, Entry stamps entries with.
const LeaderTime int64 = 1_700_000_000_000_000_000

// OpenStore opens a state store in a new temporary directory and closes it
// when the test ends.
func OpenStore(tb testing.TB) *kv.Store { return storagetest.OpenKV(tb) }

// NewFSM returns an FSM over store maintaining projs, or every projection
// (all.Projections) when none are given. It logs nothing and registers no
// metrics.
func NewFSM(tb testing.TB, store *kv.Store, projs ...projections.Projection) *fsm.FSM {
	tb.Helper()
	f, err := TryNewFSM(store, projs...)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(f.Close)
	return f
}

// TryNewFSM is NewFSM returning the error, for tests that expect one.
func TryNewFSM(store *kv.Store, projs ...projections.Projection) (*fsm.FSM, error) {
	if len(projs) == 0 {
		projs = all.Projections()
	}
	return fsm.New(store, fsm.Config{
		Projections: projs,
		Logger:      slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
}

// Entry returns an entry for command cmd, at LeaderTime, carrying one event
// per payload with ids "<cmd>-<position>". The command id is a client's
// idempotency key, so the FSM records it and dedupes on it.
func Entry(tb testing.TB, cmd string, payloads ...events.Payload) *events.Entry {
	tb.Helper()
	e := &events.Entry{Time: LeaderTime, CommandID: cmd, Idempotent: cmd != "", Actor: "test", Events: []events.Event{}}
	for i, p := range payloads {
		ev, err := events.New(fmt.Sprintf("%s-%d", cmd, i), p)
		if err != nil {
			tb.Fatal(err)
		}
		e.Events = append(e.Events, ev)
	}
	return e
}

// Log encodes e as the committed raft log entry at index.
func Log(tb testing.TB, index uint64, e *events.Entry) raftlog.Log {
	tb.Helper()
	data, err := events.EncodeEntry(e)
	if err != nil {
		tb.Fatal(err)
	}
	return raftlog.Log{Index: index, Term: 1, Data: data}
}

// Apply applies logs through f in one call, as one raft batch, and returns
// their results, failing the test if one is not a fsm.Result.
func Apply(tb testing.TB, f *fsm.FSM, logs ...raftlog.Log) []fsm.Result {
	tb.Helper()
	out := f.Apply(logs)
	if len(out) != len(logs) {
		tb.Fatalf("Apply returned %d results for %d logs", len(out), len(logs))
	}
	res := make([]fsm.Result, len(out))
	for i, r := range out {
		rr, ok := r.(fsm.Result)
		if !ok {
			tb.Fatalf("result %d is %T, want fsm.Result", i, r)
		}
		res[i] = rr
	}
	return res
}

// ApplyOne applies e at index in its own batch and returns its result.
func ApplyOne(tb testing.TB, f *fsm.FSM, index uint64, e *events.Entry) fsm.Result {
	tb.Helper()
	return Apply(tb, f, Log(tb, index, e))[0]
}

// Checksums returns projections.Checksum of each of projs in r, by name.
func Checksums(tb testing.TB, r kv.Reader, projs []projections.Projection) map[string][32]byte {
	tb.Helper()
	out := map[string][32]byte{}
	for _, p := range projs {
		sum, err := projections.Checksum(r, p)
		if err != nil {
			tb.Fatalf("checksum %s: %v", p.Name(), err)
		}
		out[p.Name()] = sum
	}
	return out
}

// ArchiveLen returns archive.Len(r).
func ArchiveLen(tb testing.TB, r kv.Reader) uint64 {
	tb.Helper()
	n, err := archive.Len(r)
	if err != nil {
		tb.Fatal(err)
	}
	return n
}

// Archived returns every archived event of r, decoded, in commit order.
func Archived(tb testing.TB, r kv.Reader) []*events.Event {
	tb.Helper()
	var out []*events.Event
	err := archive.Scan(r, 0, 0, func(index uint64, seq uint32, data []byte) error {
		ev, err := events.DecodeEvent(data)
		if err != nil {
			return fmt.Errorf("%d/%d: %w", index, seq, err)
		}
		out = append(out, ev)
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	return out
}

// TableIndex returns the index of the last entry that changed table in r.
func TableIndex(tb testing.TB, r kv.Reader, table string) uint64 {
	tb.Helper()
	idx, err := projections.NewView(r).TableIndex(table)
	if err != nil {
		tb.Fatal(err)
	}
	return idx
}

// AppliedIndex returns the applied index stored in r.
func AppliedIndex(tb testing.TB, r kv.Reader) uint64 {
	tb.Helper()
	idx, err := projections.NewView(r).AppliedIndex()
	if err != nil {
		tb.Fatal(err)
	}
	return idx
}

// FSMLog is a commands.Proposer that applies each entry straight to an
// FSM, as a single-server raft would.
type FSMLog struct {
	mu  sync.Mutex
	FSM *fsm.FSM
}

// Append applies data as the entry after the FSM's applied index.
func (l *FSMLog) Append(_ context.Context, data []byte) (any, uint64, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	index := l.FSM.Applied() + 1
	return l.FSM.Apply([]raftlog.Log{{Index: index, Term: 1, Data: data}})[0], index, nil
}

// RestorePayload writes the rows src would save into a restore payload
// file (fsm.RestorePayload) naming index, and returns it open at
// its start, as raft would hand it to FSM.Restore.
func RestorePayload(tb testing.TB, src kv.Reader, index uint64) *os.File {
	tb.Helper()
	f, err := os.Create(filepath.Join(tb.TempDir(), "payload"))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { f.Close() })
	p, err := fsm.NewRestorePayload(f)
	if err != nil {
		tb.Fatal(err)
	}
	if err := fsm.SavedRows(src, p.Set); err != nil {
		tb.Fatal(err)
	}
	if err := p.Close(); err != nil {
		tb.Fatal(err)
	}
	if err := fsm.SetRestoreIndex(f, index); err != nil {
		tb.Fatal(err)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		tb.Fatal(err)
	}
	return f
}

// HistoryPayloads returns the payloads of entry i of a small sample
// history: a server registered at 1, then namespaces created, updated and
// deleted (seven names), two events in every fourth entry.
func HistoryPayloads(i int) []events.Payload {
	var ps []events.Payload
	switch {
	case i == 1:
		ps = append(ps, &events.ServerRegistered{ID: "server-1", RaftAddr: "127.0.0.1:4647", HTTPAddr: "127.0.0.1:4646"})
	case i%5 == 0:
		ps = append(ps, &events.NamespaceDeleted{Name: fmt.Sprintf("ns-%d", i%7)})
	default:
		ps = append(ps, &events.NamespaceUpserted{Namespace: events.Namespace{Name: fmt.Sprintf("ns-%d", i%7), Description: fmt.Sprint("at ", i)}})
	}
	if i%4 == 0 {
		ps = append(ps, &events.NamespaceUpserted{Namespace: events.Namespace{Name: fmt.Sprintf("other-%d", i), Description: "second"}})
	}
	return ps
}
