package fsm

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"io"

	"github.com/ordoplane/ordo/projections/internal/layout"
	"github.com/ordoplane/ordo/storage/kv"
)

// restoreMagic starts the snapshot payload of an operator's restore
// (RestorePayload) where snapshotMagic starts a raft snapshot's; both are
// followed by an index.
const restoreMagic = "ordo-rst-1\n"

// RestoreIndexOffset is where a restore payload holds the index its state
// is installed at (8 bytes, big-endian): SetRestoreIndex writes it once
// the index raft installs the payload at is known.
const RestoreIndexOffset = int64(len(restoreMagic))

// SavedRows calls fn with every key of r a saved state carries, in key
// order: what a raft snapshot carries (the archive, the projections and
// their metadata), not what is local to one server (isLocal).
func SavedRows(r kv.Reader, fn func(k, v []byte) error) error {
	return withoutLocal{r}.Scan(nil, nil, false, fn)
}

// RestorePayload writes the raft snapshot payload that installs a saved
// state on every server (raftlog.Node.Restore): each server's FSM.Restore
// replaces its store with the payload's rows and records the payload's
// index as its applied index, whatever index the saved state stood at,
// unless it has applied that index already (a restart, or a server that
// installed it before).
type RestorePayload struct {
	bw *bufio.Writer
	ew *kv.ExportWriter
}

// NewRestorePayload writes the payload's header to w, with index 0 until
// SetRestoreIndex writes it.
func NewRestorePayload(w io.Writer) (*RestorePayload, error) {
	bw := bufio.NewWriterSize(w, 1<<20)
	var idx [8]byte
	if _, err := bw.WriteString(restoreMagic); err != nil {
		return nil, err
	}
	if _, err := bw.Write(idx[:]); err != nil {
		return nil, err
	}
	ew, err := kv.NewExportWriter(bw)
	if err != nil {
		return nil, err
	}
	return &RestorePayload{bw: bw, ew: ew}, nil
}

// Set adds a row of the saved state. What is local to a server, the
// saved applied index and the saved state's own last restore are
// dropped: the restore records its own.
func (p *RestorePayload) Set(k, v []byte) error {
	if layout.IsLocal(k) || bytes.Equal(k, layout.AppliedKey) || bytes.Equal(k, layout.RestoredKey) {
		return nil
	}
	return p.ew.Set(k, v)
}

// Close flushes the payload; it does not close the underlying writer.
func (p *RestorePayload) Close() error {
	if err := p.ew.Close(); err != nil {
		return err
	}
	return p.bw.Flush()
}

// SetRestoreIndex writes index into the restore payload held by w.
func SetRestoreIndex(w io.WriterAt, index uint64) error {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], index)
	if _, err := w.WriteAt(b[:], RestoreIndexOffset); err != nil {
		return fmt.Errorf("restore payload: %w", err)
	}
	return nil
}
