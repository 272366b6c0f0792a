package projections_test

import (
	"context"
	"errors"
	"math/rand"
	"reflect"
	"testing"

	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/all"
	pt "github.com/ordoplane/ordo/projections/projectionstest"
)

// TestReplayInStepsEqualsRebuild replays an archive into one store in
// several steps, each continuing from the last, and checks each step
// against a from-scratch Rebuild to the same index and the applied index.
func TestReplayInStepsEqualsRebuild(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	src := pt.OpenStore(t)
	f := pt.NewFSM(t, src)
	applyInBatches(t, rng, f, randomLogs(t, rng, 1500))
	projs := all.Projections()

	dst := pt.OpenStore(t)
	for _, to := range []uint64{1, 2, 400, 401, 999, 1500} {
		st, err := projections.Replay(context.Background(), src, dst, projs, to, nil)
		if err != nil {
			t.Fatalf("Replay to %d: %v", to, err)
		}
		if st.Last != to || pt.AppliedIndex(t, dst) != to {
			t.Fatalf("Replay to %d: Last %d, applied %d", to, st.Last, pt.AppliedIndex(t, dst))
		}
		ref := pt.OpenStore(t)
		if _, err := projections.Rebuild(src, ref, projs, to, nil); err != nil {
			t.Fatal(err)
		}
		if got, want := pt.Checksums(t, dst, projs), pt.Checksums(t, ref, projs); !reflect.DeepEqual(got, want) {
			t.Fatalf("Replay in steps to %d differs from Rebuild to %d", to, to)
		}
	}
	if got, want := pt.Checksums(t, dst, projs), pt.Checksums(t, src, projs); !reflect.DeepEqual(got, want) {
		t.Fatal("Replay to the end differs from the live projections")
	}
	if _, err := projections.Replay(context.Background(), src, dst, projs, 10, nil); !errors.Is(err, projections.ErrReplayBehind) {
		t.Fatalf("Replay backwards = %v, want ErrReplayBehind", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := projections.Replay(ctx, src, pt.OpenStore(t), projs, 1500, nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("Replay with a cancelled context = %v", err)
	}
}
