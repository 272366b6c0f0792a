package rebuild_test

import (
	"context"
	"errors"
	"math/rand"
	"reflect"
	"testing"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/all"
	"github.com/ordoplane/ordo/projections/namespaces"
	pt "github.com/ordoplane/ordo/projections/projectionstest"
	"github.com/ordoplane/ordo/projections/rebuild"
)

// TestReplayInStepsEqualsRebuild replays an archive into one store in
// several steps, each continuing from the last, and checks each step
// against a from-scratch Rebuild to the same index and the applied index.
func TestReplayInStepsEqualsRebuild(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	src := pt.OpenStore(t)
	f := pt.NewFSM(t, src)
	applyInBatches(t, rng, f, randomLogs(t, rng, 600))
	projs := all.Projections()

	dst := pt.OpenStore(t)
	for _, to := range []uint64{1, 2, 200, 201, 399, 600} {
		st, err := rebuild.Replay(context.Background(), src, dst, projs, to, nil)
		if err != nil {
			t.Fatalf("Replay to %d: %v", to, err)
		}
		if st.Last != to || pt.AppliedIndex(t, dst) != to {
			t.Fatalf("Replay to %d: Last %d, applied %d", to, st.Last, pt.AppliedIndex(t, dst))
		}
		ref := pt.OpenStore(t)
		if _, err := rebuild.Rebuild(src, ref, projs, to, nil); err != nil {
			t.Fatal(err)
		}
		if got, want := pt.Checksums(t, dst, projs), pt.Checksums(t, ref, projs); !reflect.DeepEqual(got, want) {
			t.Fatalf("Replay in steps to %d differs from Rebuild to %d", to, to)
		}
	}
	if got, want := pt.Checksums(t, dst, projs), pt.Checksums(t, src, projs); !reflect.DeepEqual(got, want) {
		t.Fatal("Replay to the end differs from the live projections")
	}
	if _, err := rebuild.Replay(context.Background(), src, dst, projs, 10, nil); !errors.Is(err, rebuild.ErrReplayBehind) {
		t.Fatalf("Replay backwards = %v, want ErrReplayBehind", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := rebuild.Replay(ctx, src, pt.OpenStore(t), projs, 600, nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("Replay with a cancelled context = %v", err)
	}
}

// peeker is a projection that reads the namespaces table when it applies.
type peeker struct{}

func (peeker) Name() string     { return "peeker" }
func (peeker) Version() int     { return 1 }
func (peeker) Tables() []string { return []string{"peeks"} }
func (peeker) Apply(tx *projections.Tx, ev *events.Event) error {
	if _, err := tx.Get(namespaces.Table, "default"); err != nil && !errors.Is(err, projections.ErrNotFound) {
		return err
	}
	return tx.Put("peeks", ev.ID, []byte("x"))
}

// TestReplaySomeProjections replays one projection alone: its tables end
// as a replay of all leaves them, and a projection reading a table it
// does not own fails with ErrForeignTable.
func TestReplaySomeProjections(t *testing.T) {
	rng := rand.New(rand.NewSource(5))
	src := pt.OpenStore(t)
	applyInBatches(t, rng, pt.NewFSM(t, src), randomLogs(t, rng, 300))
	ns := namespaces.Projection{}
	dst := pt.OpenStore(t)
	if _, err := rebuild.Replay(context.Background(), src, dst, []projections.Projection{ns}, 300, nil); err != nil {
		t.Fatal(err)
	}
	if got, want := pt.Checksums(t, dst, []projections.Projection{ns}), pt.Checksums(t, src, []projections.Projection{ns}); !reflect.DeepEqual(got, want) {
		t.Fatal("namespaces replayed alone differ from the live projection")
	}
	_, err := rebuild.Replay(context.Background(), src, pt.OpenStore(t), []projections.Projection{peeker{}}, 300, nil)
	if !errors.Is(err, rebuild.ErrForeignTable) {
		t.Fatalf("a projection reading another's table replayed alone: %v", err)
	}
	// Projections replay on lanes of their own, concurrently: reading
	// another's table is refused even when its owner is replayed too.
	_, err = rebuild.Replay(context.Background(), src, pt.OpenStore(t), []projections.Projection{ns, peeker{}}, 300, nil)
	if !errors.Is(err, rebuild.ErrForeignTable) {
		t.Fatalf("a projection reading another's table, its owner replayed too: %v", err)
	}
}

func TestKeyTable(t *testing.T) {
	for key, want := range map[string]string{"t/jobs\x00default\x00web": "jobs", "t/jobs\x00": "jobs", "ti/allocs": "allocs", "t/x": "x"} {
		if got, ok := projections.KeyTable([]byte(key)); !ok || got != want {
			t.Errorf("KeyTable(%q) = %q, %v; want %q", key, got, ok, want)
		}
	}
	for _, key := range []string{"meta/applied", "log/\x00\x00", "pm/jobs", "cmd/x", ""} {
		if got, ok := projections.KeyTable([]byte(key)); ok {
			t.Errorf("KeyTable(%q) = %q, want none", key, got)
		}
	}
}
