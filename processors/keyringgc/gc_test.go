package keyringgc_test

import (
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/ordoplane/ordo/clock/clocktest"
	pt "github.com/ordoplane/ordo/projections/projectionstest"

	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/commands/keyring"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/processors/keyringgc"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/all"
	"github.com/ordoplane/ordo/projections/fsm"
	kp "github.com/ordoplane/ordo/projections/keyring"
	"github.com/ordoplane/ordo/storage/keystore"
	"github.com/ordoplane/ordo/storage/kv"
)

type raw []events.Payload

func (raw) Validate() error { return nil }
func (r raw) Decide(projections.View, time.Time, commands.IDs) (commands.Decision, error) {
	return commands.Decision{Events: r}, nil
}

// TestKeepsKeyOfLiveAlloc is N5's GC: an inactive key that signed a live
// allocation stays; once the allocation is terminal the key goes. The
// active key never goes; a young inactive key waits for the threshold.
func TestKeepsKeyOfLiveAlloc(t *testing.T) {
	dir := t.TempDir()
	store, err := kv.Open(filepath.Join(dir, "state"), kv.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	fsm, err := fsm.New(store, fsm.Config{Projections: all.Projections(), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer fsm.Close()
	clk := clocktest.NewClock(time.Unix(1_700_000_000, 0))
	p, _ := commands.NewPipeline(commands.PipelineConfig{Log: &pt.FSMLog{FSM: fsm}, Store: store, Applied: fsm.Applied, Clock: clk})
	defer p.Close()
	ks, _ := keystore.Open(filepath.Join(dir, "keystore"))
	kr, _ := keyring.New(keyring.Config{Keystore: ks, Store: store, Pipeline: p, Clock: clk})
	ctx := context.Background()
	old, err := kr.Initialize(ctx)
	if err != nil {
		t.Fatal(err)
	}
	run := func(c commands.Command) {
		t.Helper()
		if _, err := p.Run(ctx, "test", commands.Request{}, c); err != nil {
			t.Fatal(err)
		}
	}
	run(raw{&events.AllocsPlaced{EvalID: "e", Allocs: []events.Allocation{{ID: "a1", Namespace: "default", JobID: "web", TaskGroup: "g",
		NodeID: "n1", DesiredStatus: events.AllocDesiredRun, ClientStatus: events.AllocClientRunning, SigningKeyID: old}}}})
	_, active, err := kr.Rotate(ctx, commands.Request{}, false)
	if err != nil {
		t.Fatal(err)
	}
	gc, err := keyringgc.New(keyringgc.Config{Pipeline: p, Store: store, Threshold: time.Hour, Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	exists := func(id string) bool {
		_, err := kp.Get(projections.NewView(store), id)
		return err == nil
	}
	// Too young.
	if removed, err := gc.Collect(ctx); err != nil || len(removed) != 0 {
		t.Fatalf("young key: removed %v, %v", removed, err)
	}
	clk.Advance(2 * time.Hour)
	// Old enough, but a1 is live and was signed with it.
	if removed, err := gc.Collect(ctx); err != nil || len(removed) != 0 || !exists(old) {
		t.Fatalf("key of a live alloc: removed %v, %v", removed, err)
	}
	run(raw{&events.AllocsClientUpdated{NodeID: "n1", Updates: []events.AllocClientUpdate{{ID: "a1", ClientStatus: events.AllocClientComplete}}}})
	removed, err := gc.Collect(ctx)
	if err != nil || len(removed) != 1 || removed[0] != old || exists(old) {
		t.Fatalf("after a1 completed: removed %v, %v", removed, err)
	}
	if !exists(active) {
		t.Fatal("the active key was collected")
	}
	if del, _ := kp.Deleted(projections.NewView(store)); len(del) != 1 || del[0] != old {
		t.Fatalf("Deleted = %v", del)
	}
}
