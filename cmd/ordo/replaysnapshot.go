package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/ordoplane/ordo/clock"
	"github.com/ordoplane/ordo/cmd/agent"
	"github.com/ordoplane/ordo/history/export"
	"github.com/ordoplane/ordo/projections/all"
	"github.com/ordoplane/ordo/projections/fsm"
	"github.com/ordoplane/ordo/storage/archive"
	"github.com/ordoplane/ordo/storage/kv"
	"github.com/ordoplane/ordo/storage/snapshots"
)

// isSnapshotFile reports whether the file at path starts as a snapshot
// file does (storage/snapshots), rather than as a history file.
func isSnapshotFile(path string) (bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return false, err
	}
	defer f.Close()
	magic := make([]byte, len(snapshots.Magic))
	if _, err := io.ReadFull(f, magic); err != nil {
		return false, nil // too short for either: the history file's reader says why
	}
	return string(magic) == snapshots.Magic, nil
}

// loadSnapshot copies the rows of the snapshot file at path into dst, an
// empty store, checking the file whole as it goes (a file that does not
// check out leaves dst partial: discard it).
func loadSnapshot(path string, dst *kv.Store) (snapshots.Summary, error) {
	l := dst.Loader(0)
	defer l.Close()
	sum, err := snapshots.VerifyFile(path, l.Set)
	if err != nil {
		return sum, fmt.Errorf("snapshot file %s: %w", path, err)
	}
	return sum, l.Commit()
}

// openSnapshotReplay loads the snapshot file at file into r's store and
// opens the FSM over it; projections saved at another version than this
// binary's are rebuilt from the file's archive first.
func openSnapshotReplay(r *replay) error {
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	sum, err := loadSnapshot(r.file, r.store)
	if err != nil {
		return fmt.Errorf("replay: %w", err)
	}
	if r.fsm, err = fsm.New(r.store, fsm.Config{Projections: all.Projections(), Logger: quiet, AllowStale: true,
		Version: agent.Version}); err != nil {
		return err
	}
	if len(r.fsm.Stale()) > 0 {
		rb := fsm.NewRebuilder(r.fsm, fsm.RebuilderConfig{Logger: quiet, Clock: clock.System{},
			ScratchDir: filepath.Join(r.dir, "scratch")})
		if err := rb.RebuildStale(context.Background()); err != nil {
			return fmt.Errorf("replay: rebuild the projections the snapshot holds at other versions: %w", err)
		}
	}
	h := sum.Header
	first, err := archive.First(r.store)
	if err != nil {
		return err
	}
	last, err := archive.Last(r.store)
	if err != nil {
		return err
	}
	events, err := archive.Len(r.store)
	if err != nil {
		return err
	}
	r.snapshot = &sum
	r.stats = export.LoadStats{Events: events, Checksum: sum.Checksum, Header: export.Header{
		ClusterID: h.ClusterID, ClusterIDSource: "snapshot", Server: h.Server, From: 1,
		FirstIndex: first, LastIndex: last, Events: events, Created: h.Created, OrdoVersion: h.OrdoVersion}}
	return nil
}

// printSnapshotHeader describes a loaded snapshot file.
func printSnapshotHeader(w io.Writer, file string, sum snapshots.Summary, st export.LoadStats) error {
	h := sum.Header
	return printPairs(w, []pair{
		{"File", file},
		{"Kind", "snapshot (the whole state at one index)"},
		{"Format Version", fmt.Sprint(h.FormatVersion)},
		{"Cluster ID", orDash(h.ClusterID)},
		{"Saved By", orDash(h.Server)},
		{"Created", h.Created.UTC().Format(time.RFC3339)},
		{"Index", fmt.Sprint(h.Index)},
		{"Archive", fmt.Sprintf("%d events at indexes %d to %d", st.Events, st.Header.FirstIndex, st.Header.LastIndex)},
		{"Rows", fmt.Sprint(sum.Rows)},
		{"SHA-256", sum.Checksum},
	})
}
