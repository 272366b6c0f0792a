package backup

import (
	"bytes"
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections/all"
	"github.com/ordoplane/ordo/projections/fsm"
	"github.com/ordoplane/ordo/projections/projectionstest"
)

// TestNewerSnapshotFileIsRefused: a file saved by a build whose registry
// is newer than the restoring server's is refused as invalid, naming both
// builds, before anything reaches raft; the saving build accepts it.
func TestNewerSnapshotFileIsRefused(t *testing.T) {
	src := newState(t, 10)
	file, _ := save(t, src.store)

	var older []events.Type
	for _, ty := range events.Types() {
		if ty.Name != "NamespaceUpserted" {
			older = append(older, ty)
		}
	}
	f, err := fsm.New(projectionstest.OpenStore(t), fsm.Config{Projections: all.Projections(),
		Version: "0.0.1", EventTypes: older, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	_, _, err = writeCheckedPayload(payloadFile(t), bytes.NewReader(file), f.CheckSavedRow)
	if !errors.Is(err, ErrInvalid) || !errors.Is(err, fsm.ErrDowngrade) ||
		!strings.Contains(err.Error(), "ordo 0.0.1") || !strings.Contains(err.Error(), "event type NamespaceUpserted") {
		t.Fatalf("a newer build's file: %v", err)
	}
	if _, _, err := writeCheckedPayload(payloadFile(t), bytes.NewReader(file), src.fsm.CheckSavedRow); err != nil {
		t.Fatalf("the saving build's own file: %v", err)
	}
}
