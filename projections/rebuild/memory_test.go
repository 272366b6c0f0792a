package rebuild_test

import (
	"log/slog"
	"math/rand"
	"reflect"
	"testing"

	"github.com/ordoplane/ordo/clock"
	"github.com/ordoplane/ordo/projections/fsm"
	pt "github.com/ordoplane/ordo/projections/projectionstest"
	"github.com/ordoplane/ordo/projections/rebuild"
)

// TestRebuildPastMemoryLimit: rebuilds whose rows outgrow what they keep
// in memory go on through indexed batches and end the same.
func TestRebuildPastMemoryLimit(t *testing.T) {
	defer rebuild.SetFreshRowsLimit(4 << 10)()
	rng := rand.New(rand.NewSource(13))
	store := pt.OpenStore(t)
	f, err := fsm.New(store, fsm.Config{Projections: allProjs(), AllowStale: true, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.Close)
	rb := fsm.NewRebuilder(f, fsm.RebuilderConfig{Logger: slog.New(slog.DiscardHandler), Clock: clock.System{}, ScratchDir: t.TempDir(), CatchUpLag: 1})
	t.Cleanup(rb.Close)
	applyInBatches(t, rng, f, randomLogs(t, rng, 400))
	want := pt.Checksums(t, store, allProjs())
	scratch, _ := rebuildFrom(t, store, 0) // Rebuild, past the limit
	if got := pt.Checksums(t, scratch, allProjs()); !reflect.DeepEqual(got, want) {
		t.Error("a rebuild past the memory limit differs from the live projections")
	}
	if _, err := rb.Do(t.Context(), fsm.JobRebuild, nil); err != nil {
		t.Fatal(err)
	}
	if got := pt.Checksums(t, store, allProjs()); !reflect.DeepEqual(got, want) {
		t.Error("an online rebuild past the memory limit changed the projections")
	}
	job, err := rb.Do(t.Context(), fsm.JobVerify, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range job.Results {
		if !r.Match {
			t.Errorf("verify past the memory limit: %s differs", r.Projection)
		}
	}
}
