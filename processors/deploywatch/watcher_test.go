package deploywatch_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/commands/job"
	"github.com/ordoplane/ordo/commands/job/jobspec"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/processors/deploywatch"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/deployments"
	pt "github.com/ordoplane/ordo/projections/projectionstest"
	"github.com/ordoplane/ordo/storage/kv"
)

func parse(t *testing.T, src string) events.Job {
	t.Helper()
	j, err := jobspec.ParseHCL("web.hcl", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return *j
}

// waitFor checks cond after every applied entry until it holds or the
// deadline passes.
func waitFor(t *testing.T, n *projections.Notifier, what string, cond func() bool) {
	t.Helper()
	deadline := time.After(15 * time.Second)
	for {
		_, wake := n.Applied()
		if cond() {
			return
		}
		select {
		case <-wake:
		case <-deadline:
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

func deployment(t *testing.T, store *kv.Store, id string) *deployments.Deployment {
	t.Helper()
	snap := store.Snapshot()
	defer snap.Close()
	d, err := deployments.Get(projections.NewView(snap), id)
	if err != nil && !errors.Is(err, projections.ErrNotFound) {
		t.Fatal(err)
	}
	return d
}

// recorder is a Submitter that records the commands it is given and can
// fail the first ones.
type recorder struct {
	mu    sync.Mutex
	ids   []string
	fails int
	seen  chan string
}

func (r *recorder) Run(_ context.Context, _ string, _ commands.Request, c commands.Command) (commands.Outcome, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	m, ok := c.(job.MarkDeploymentPending)
	if !ok {
		return commands.Outcome{}, nil // the deployments here have no job: nothing else is decided
	}
	id := m.ID
	if r.fails > 0 {
		r.fails--
		return commands.Outcome{}, fmt.Errorf("injected failure")
	}
	r.ids = append(r.ids, id)
	r.seen <- id
	return commands.Outcome{}, nil
}

// TestRunScansThenFollowsAndRetries starts a watcher over a store that
// already holds deployments (as a new leader finds them): it moves the
// initializing one, retries after a failure, picks up one created later,
// and stops without leaking goroutines.
func TestRunScansThenFollowsAndRetries(t *testing.T) {
	store := pt.OpenStore(t)
	f := pt.NewFSM(t, store)
	dep := func(id, status string) *events.DeploymentUpserted {
		return &events.DeploymentUpserted{Deployment: events.Deployment{ID: id, Namespace: "default", JobID: "web", Status: status}}
	}
	pt.ApplyOne(t, f, 1, pt.Entry(t, "c1", dep("d-old", events.DeploymentStatusRunning), dep("d-init", events.DeploymentStatusInitializing)))

	rec := &recorder{fails: 1, seen: make(chan string, 10)}
	w, err := deploywatch.New(deploywatch.Config{Pipeline: rec, State: f, RetryInterval: 10 * time.Millisecond,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	before := goleak.IgnoreCurrent()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	next := func() string {
		select {
		case id := <-rec.seen:
			return id
		case <-time.After(10 * time.Second):
			t.Fatal("no deployment moved")
			return ""
		}
	}
	if id := next(); id != "d-init" {
		t.Fatalf("moved %s", id)
	}
	pt.ApplyOne(t, f, 2, pt.Entry(t, "c2", dep("d-new", events.DeploymentStatusInitializing)))
	if id := next(); id != "d-new" {
		t.Fatalf("moved %s", id)
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("Run = %v", err)
	}
	rec.mu.Lock()
	if len(rec.ids) != 2 {
		t.Fatalf("moved %v", rec.ids)
	}
	rec.mu.Unlock()
	goleak.VerifyNone(t, before)
}

func TestConfig(t *testing.T) {
	if _, err := deploywatch.New(deploywatch.Config{}); err == nil {
		t.Fatal("New without a pipeline succeeded")
	}
}
