package fsm_test

import (
	"bufio"
	"bytes"
	"context"
	"math/rand"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/fsm"
	"github.com/ordoplane/ordo/projections/namespaces"
	pt "github.com/ordoplane/ordo/projections/projectionstest"
	"github.com/ordoplane/ordo/storage/kv"
	"github.com/ordoplane/ordo/storage/waittest"
)

// The child process is this test binary running TestRebuildCrashChild with
// these variables set.
const (
	envRebuildChild = "ORDO_REBUILD_CRASH_CHILD" // the scenario
	envRebuildDir   = "ORDO_REBUILD_CRASH_DIR"
)

// killMe is what the child prints when it is mid-rebuild, ready to die.
const killMe = "rebuild in progress: kill me"

// crashSet is the projection set of the "startup" scenario: namespaces at
// a new version.
func crashSet(scenario string) []projections.Projection {
	if scenario == "startup" {
		return []projections.Projection{bumpedProj{namespaces.Projection{}}, allProjs()[1]}
	}
	return allProjs()
}

// TestRebuildCrashChild is the process TestRebuildCrash kills with SIGKILL
// halfway through a rebuild: an operator's rebuild of every projection
// (while it builds, or halfway through its switch), or the rebuild a
// version change triggers on start.
func TestRebuildCrashChild(t *testing.T) {
	scenario := os.Getenv(envRebuildChild)
	if scenario == "" {
		t.Skip("the process TestRebuildCrash kills; run only as its child")
	}
	store, err := kv.Open(os.Getenv(envRebuildDir), kv.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	f, err := fsm.New(store, fsm.Config{Projections: crashSet(scenario), AllowStale: true, Logger: discard()})
	if err != nil {
		t.Fatal(err)
	}
	rb := fsm.NewRebuilder(f, fsm.RebuilderConfig{Logger: discard()})
	if scenario == "switch" {
		// Die between the switch's ingest and the batch that follows it.
		store.SetReplaceHook(func() error {
			os.Stdout.WriteString("\n" + killMe + "\n")
			select {}
		})
	}
	fsm.SetRebuildHook(rb, func(p fsm.RebuildProgress) {
		if scenario != "switch" && p.Phase == fsm.PhaseBuilding && p.Events > 0 {
			// Make the half-built shadow durable, so the reopen finds it.
			if err := store.Flush(); err != nil {
				t.Error(err)
			}
			os.Stdout.WriteString("\n" + killMe + "\n")
			select {} // wait for SIGKILL
		}
	})
	switch scenario {
	case "startup":
		err = rb.RebuildStale(context.Background())
	default:
		_, err = rb.Do(context.Background(), fsm.JobRebuild, nil)
	}
	t.Fatalf("the rebuild ended (%v) without being killed", err)
}

// TestRebuildCrash kills a process with SIGKILL halfway through a rebuild
// and reopens its store: the half-built shadow is discarded, the live
// projections are as they were (an operator's rebuild) or stale (a
// version change; a switch killed after its ingest), nothing half-built
// serves, and the rebuild run again ends equal to a from-scratch one.
// Each scenario starts from a copy of one store of 400 random entries
// (a rebuild is killed at its first progress, whatever the history's
// length).
func TestRebuildCrash(t *testing.T) {
	history := t.TempDir()
	store, err := kv.Open(history, kv.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewSource(21))
	f := pt.NewFSM(t, store)
	applyInBatches(t, rng, f, randomLogs(t, rng, 400))
	f.Close()
	before := pt.Checksums(t, store, allProjs())
	if err := store.Close(); err != nil {
		t.Fatal(err)
	}
	for _, scenario := range []string{"operator", "startup", "switch"} {
		t.Run(scenario, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.CopyFS(dir, os.DirFS(history)); err != nil {
				t.Fatal(err)
			}

			runChild(t, scenario, dir)

			if !hasScratch(t, dir) {
				t.Fatal("the killed rebuild left no scratch store: it was not killed mid-rebuild")
			}
			store, err := kv.Open(dir, kv.DefaultConfig())
			if err != nil {
				t.Fatal(err)
			}
			defer store.Close()
			set := crashSet(scenario)
			f2, rb := openFSM(t, store, nil, set...)
			if hasScratch(t, dir) || hasPrefix(t, store, "sh/") {
				t.Error("the half-built projections survived the reopen")
			}
			// The live projections are untouched by the half-built rebuild.
			for name, sum := range pt.Checksums(t, store, allProjs()) {
				if w := before[name]; sum != w {
					t.Errorf("projection %s changed by the killed rebuild: %x, was %x", name, sum[:8], w[:8])
				}
			}
			switch scenario {
			case "switch":
				// The ingest deleted the stored versions; the batch that
				// writes them back never ran.
				if len(f2.Stale()) != len(set) {
					t.Fatalf("stale after a crash mid-switch: %v, want every projection", f2.Stale())
				}
				if err := rb.RebuildStale(t.Context()); err != nil {
					t.Fatal(err)
				}
			case "startup":
				if len(f2.Stale()) != 1 {
					t.Fatalf("stale after the crash: %v, want namespaces", f2.Stale())
				}
				if err := rb.RebuildStale(t.Context()); err != nil {
					t.Fatal(err)
				}
			default:
				if !hasPrefix(t, store, "rb/") {
					t.Fatal("the operator's rebuild left no marker to resume from")
				}
				ctx, stop := context.WithCancel(t.Context())
				defer stop()
				done := make(chan error, 1)
				go func() { done <- rb.Run(ctx) }()
				waittest.For(t, 30*time.Second, "the interrupted rebuild to resume and finish", func() bool {
					return !hasPrefix(t, store, "rb/")
				})
				stop()
				if err := <-done; err != nil {
					t.Fatal(err)
				}
				if j, ok := rb.Job(); !ok || j.State != fsm.JobDone {
					t.Fatalf("resumed job: %+v", j)
				}
			}
			checkAgainstScratch(t, store, set)
			if keys := localKeys(t, store); len(keys) != 0 {
				t.Errorf("shadow or markers left: %v", keys)
			}
		})
	}
}

// runChild runs TestRebuildCrashChild on dir and kills it with SIGKILL once
// it reports a rebuild in progress.
func runChild(t *testing.T, scenario, dir string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestRebuildCrashChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), envRebuildChild+"="+scenario, envRebuildDir+"="+dir)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ready := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if strings.Contains(sc.Text(), killMe) {
				ready <- true
				return
			}
		}
		ready <- false
	}()
	select {
	case ok := <-ready:
		if !ok {
			cmd.Wait()
			t.Fatalf("child ended before its rebuild began: %s", stderr.String())
		}
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("child never reported a rebuild in progress: %s", stderr.String())
	}
	if err := cmd.Process.Kill(); err != nil { // SIGKILL
		t.Fatal(err)
	}
	cmd.Wait()
}

// hasScratch reports whether the store in dir holds a scratch store (a
// rebuild's, running or killed).
func hasScratch(t *testing.T, dir string) bool {
	t.Helper()
	dirs, err := kv.ScratchStores(dir)
	if err != nil {
		t.Fatal(err)
	}
	return len(dirs) > 0
}

func hasPrefix(t *testing.T, r kv.Reader, prefix string) bool {
	t.Helper()
	found := false
	err := r.Scan([]byte(prefix), kv.PrefixEnd([]byte(prefix)), false, func(_, _ []byte) error {
		found = true
		return kv.ErrStop
	})
	if err != nil {
		t.Fatal(err)
	}
	return found
}
