package storagetest

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"github.com/hashicorp/raft"
)

// Entry returns a deterministic log entry at index in term that sets every
// field: Type, Data, Extensions (on every third index, nil otherwise) and an
// AppendedAt with nanoseconds in a non-UTC zone.
func Entry(index, term uint64) *raft.Log {
	l := &raft.Log{
		Index:      index,
		Term:       term,
		Type:       raft.LogType(index % 6),
		Data:       fmt.Appendf(nil, "entry %d of term %d", index, term),
		AppendedAt: time.Unix(1_700_000_000+int64(index), int64(index)*1_001%1e9).In(time.FixedZone("UTC+1", 3600)),
	}
	if index%3 == 0 {
		l.Extensions = fmt.Appendf(nil, "ext-%d", index)
	}
	return l
}

// Entries returns Entry(i, term) for i in [first, last].
func Entries(first, last, term uint64) []*raft.Log {
	out := make([]*raft.Log, 0, last-first+1)
	for i := first; i <= last; i++ {
		out = append(out, Entry(i, term))
	}
	return out
}

// EqualLog reports how got differs from want, field by field, or "" if they
// are equal: slices by content, AppendedAt by instant.
func EqualLog(got, want *raft.Log) string {
	var diffs []string
	if got.Index != want.Index {
		diffs = append(diffs, fmt.Sprintf("Index %d, want %d", got.Index, want.Index))
	}
	if got.Term != want.Term {
		diffs = append(diffs, fmt.Sprintf("Term %d, want %d", got.Term, want.Term))
	}
	if got.Type != want.Type {
		diffs = append(diffs, fmt.Sprintf("Type %v, want %v", got.Type, want.Type))
	}
	if !bytes.Equal(got.Data, want.Data) {
		diffs = append(diffs, fmt.Sprintf("Data %q, want %q", got.Data, want.Data))
	}
	if !bytes.Equal(got.Extensions, want.Extensions) {
		diffs = append(diffs, fmt.Sprintf("Extensions %q, want %q", got.Extensions, want.Extensions))
	}
	if !got.AppendedAt.Equal(want.AppendedAt) {
		diffs = append(diffs, fmt.Sprintf("AppendedAt %v, want %v", got.AppendedAt, want.AppendedAt))
	}
	if len(diffs) == 0 {
		return ""
	}
	return fmt.Sprint(diffs)
}

// checkBounds fails t unless s's FirstIndex and LastIndex are first and last.
func checkBounds(t testing.TB, s raft.LogStore, first, last uint64) {
	t.Helper()
	gotFirst, err := s.FirstIndex()
	if err != nil {
		t.Fatalf("FirstIndex: %v", err)
	}
	gotLast, err := s.LastIndex()
	if err != nil {
		t.Fatalf("LastIndex: %v", err)
	}
	if gotFirst != first || gotLast != last {
		t.Fatalf("FirstIndex, LastIndex = %d, %d; want %d, %d", gotFirst, gotLast, first, last)
	}
}

// checkLogs fails t unless s holds exactly want at their indexes.
func checkLogs(t testing.TB, s raft.LogStore, want ...*raft.Log) {
	t.Helper()
	for _, w := range want {
		var got raft.Log
		if err := s.GetLog(w.Index, &got); err != nil {
			t.Fatalf("GetLog(%d): %v", w.Index, err)
		}
		if d := EqualLog(&got, w); d != "" {
			t.Fatalf("GetLog(%d): %s", w.Index, d)
		}
	}
}

// checkMissing fails t unless GetLog returns raft.ErrLogNotFound, unwrapped,
// for each index.
func checkMissing(t testing.TB, s raft.LogStore, indexes ...uint64) {
	t.Helper()
	for _, i := range indexes {
		var got raft.Log
		if err := s.GetLog(i, &got); err != raft.ErrLogNotFound { //nolint:errorlint // raft compares with ==
			t.Fatalf("GetLog(%d) = %v, want exactly raft.ErrLogNotFound", i, err)
		}
	}
}

// mustStore stores logs with StoreLogs.
func mustStore(t testing.TB, s raft.LogStore, logs []*raft.Log) {
	t.Helper()
	if err := s.StoreLogs(logs); err != nil {
		t.Fatalf("StoreLogs(%d entries): %v", len(logs), err)
	}
}

// mustDelete calls DeleteRange(min, max).
func mustDelete(t testing.TB, s raft.LogStore, min, max uint64) {
	t.Helper()
	if err := s.DeleteRange(min, max); err != nil {
		t.Fatalf("DeleteRange(%d, %d): %v", min, max, err)
	}
}
