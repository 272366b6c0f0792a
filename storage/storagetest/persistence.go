package storagetest

import (
	"io"
	"testing"

	"github.com/hashicorp/raft"
)

// Store is a durable store holding both a raft log and raft's stable keys.
type Store interface {
	raft.LogStore
	raft.StableStore
	io.Closer
}

// PersistenceSuite checks that a durable Store keeps its log entries, their
// bounds and its stable keys across Close and reopen. open must open the
// store kept in dir, creating it if dir is empty; the suite closes every
// store it opens.
func PersistenceSuite(t *testing.T, open func(t *testing.T, dir string) Store) {
	t.Run("Empty", func(t *testing.T) {
		h := newReopener(t, open)
		h.reopen()
		checkBounds(t, h.s, 0, 0)
		checkMissing(t, h.s, 1)
		checkGetMissing(t, h.s, keyCurrentTerm)
		checkGetUint64Missing(t, h.s, keyCurrentTerm)
	})

	t.Run("LogsAndKeys", func(t *testing.T) {
		h := newReopener(t, open)
		logs := Entries(1, 100, 1)
		mustStore(t, h.s, logs)
		mustDelete(t, h.s, 1, 30)   // compaction
		mustDelete(t, h.s, 91, 100) // truncation
		mustSetUint64(t, h.s, keyCurrentTerm, 7)
		mustSetUint64(t, h.s, keyLastVoteTerm, 6)
		mustSet(t, h.s, keyLastVoteCand, []byte("node-1"))

		h.reopen()
		checkBounds(t, h.s, 31, 90)
		checkLogs(t, h.s, logs[30:90]...)
		checkMissing(t, h.s, 30, 91, 100)
		checkGetUint64(t, h.s, keyCurrentTerm, 7)
		checkGetUint64(t, h.s, keyLastVoteTerm, 6)
		checkGet(t, h.s, keyLastVoteCand, []byte("node-1"))

		more := Entries(91, 95, 7)
		mustStore(t, h.s, more)
		h.reopen()
		checkBounds(t, h.s, 31, 95)
		checkLogs(t, h.s, more...)
	})

	t.Run("AllDeleted", func(t *testing.T) {
		h := newReopener(t, open)
		mustStore(t, h.s, Entries(1, 50, 1))
		mustDelete(t, h.s, 1, 50)
		h.reopen()
		checkBounds(t, h.s, 0, 0)
		after := Entries(80, 90, 2)
		mustStore(t, h.s, after)
		h.reopen()
		checkBounds(t, h.s, 80, 90)
		checkLogs(t, h.s, after...)
	})
}

// reopener holds the store open on one directory, closing it when the test
// ends.
type reopener struct {
	t    *testing.T
	dir  string
	open func(t *testing.T, dir string) Store
	s    Store
}

func newReopener(t *testing.T, open func(t *testing.T, dir string) Store) *reopener {
	h := &reopener{t: t, dir: t.TempDir(), open: open}
	h.s = open(t, h.dir)
	t.Cleanup(func() {
		if h.s != nil {
			if err := h.s.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}
		}
	})
	return h
}

// reopen closes the store and opens it again on the same directory.
func (h *reopener) reopen() {
	h.t.Helper()
	s := h.s
	h.s = nil
	if err := s.Close(); err != nil {
		h.t.Fatalf("Close: %v", err)
	}
	h.s = h.open(h.t, h.dir)
}
