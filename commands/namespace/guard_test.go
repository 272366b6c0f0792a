package namespace_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	pt "github.com/ordoplane/ordo/projections/projectionstest"

	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/commands/namespace"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/fsm"
	"github.com/ordoplane/ordo/projections/namespaces"
	"github.com/ordoplane/ordo/projections/nsguard"
	"github.com/ordoplane/ordo/storage/kv"
	"github.com/ordoplane/ordo/storage/raftlog"
)

// guardFSM is an FSM over a fresh store with every projection; commit
// appends the next entry through it.
type guardFSM struct {
	t     *testing.T
	store *kv.Store
	fsm   *fsm.FSM
	index uint64
}

func newGuardFSM(t *testing.T) *guardFSM {
	t.Helper()
	store := pt.OpenStore(t)
	return &guardFSM{t: t, store: store, fsm: pt.NewFSM(t, store)}
}

func (g *guardFSM) commit(pre []events.Precondition, ps ...events.Payload) fsm.Result {
	g.t.Helper()
	g.index++
	e := events.Entry{Time: int64(g.index), CommandID: fmt.Sprint("c", g.index), Preconditions: pre}
	for i, p := range ps {
		ev, err := events.New(fmt.Sprint("ev", g.index, i), p)
		if err != nil {
			g.t.Fatal(err)
		}
		e.Events = append(e.Events, ev)
	}
	data, err := events.EncodeEntry(&e)
	if err != nil {
		g.t.Fatal(err)
	}
	return g.fsm.Apply([]raftlog.Log{{Index: g.index, Term: 1, Data: data}})[0].(fsm.Result)
}

func (g *guardFSM) must(ps ...events.Payload) {
	g.t.Helper()
	if res := g.commit(nil, ps...); res.Err != nil {
		g.t.Fatal(res.Err)
	}
}

func (g *guardFSM) decideDelete(name string) (commands.Decision, error) {
	snap := g.store.Snapshot()
	defer snap.Close()
	return namespace.Delete{Name: name}.Decide(projections.NewView(snap), time.Unix(0, 0), noIDs)
}

func job(ns, id string) *events.JobRegistered {
	return &events.JobRegistered{Job: events.Job{ID: id, Name: id, Namespace: ns, Type: events.JobTypeService, Priority: 50,
		TaskGroups: []events.TaskGroup{{Name: "g", Count: 1}}}}
}

func variable(ns, path string) *events.VariableUpserted {
	return &events.VariableUpserted{Namespace: ns, Path: path, KeyID: "k", Data: []byte("sealed")}
}

// TestDeleteGuard (N9): a namespace holding jobs that are not dead or
// variables is not deleted, and the 409 names what remains; dead and
// purged jobs do not count; once empty, the delete goes through.
func TestDeleteGuard(t *testing.T) {
	g := newGuardFSM(t)
	g.must(upserted("team-a"), upserted("team-b"))
	g.must(job("team-a", "web"), job("team-a", "api"), job("team-a", "old"), job("team-a", "gone"), job("team-b", "other"))
	g.must(&events.JobDeregistered{Namespace: "team-a", ID: "old"}) // stopped, no allocations: dead
	g.must(&events.JobDeregistered{Namespace: "team-a", ID: "gone", Purge: true})
	g.must(variable("team-a", "db"), variable("team-a", "tls/cert"), variable("team-a", "tls/key"), variable("team-b", "x"))

	_, err := g.decideDelete("team-a")
	want := `namespace "team-a" still holds 2 jobs that are not dead (api, web) and 3 variables`
	var ce *commands.ConflictError
	if !errors.As(err, &ce) || commands.Status(err) != 409 || !strings.Contains(err.Error(), want) {
		t.Fatalf("err = %v, want a 409 saying %q", err, want)
	}

	g.must(&events.JobDeregistered{Namespace: "team-a", ID: "web", Purge: true}, &events.JobDeregistered{Namespace: "team-a", ID: "api"})
	_, err = g.decideDelete("team-a")
	if want := `namespace "team-a" still holds 3 variables`; err == nil || !strings.HasSuffix(err.Error(), want) {
		t.Fatalf("err = %v, want %q", err, want)
	}
	g.must(&events.VariableDeleted{Namespace: "team-a", Path: "db"}, &events.VariableDeleted{Namespace: "team-a", Path: "tls/cert"})
	_, err = g.decideDelete("team-a")
	if want := `namespace "team-a" still holds 1 variable`; err == nil || !strings.HasSuffix(err.Error(), want) {
		t.Fatalf("err = %v, want %q", err, want)
	}
	g.must(&events.VariableDeleted{Namespace: "team-a", Path: "tls/key"})
	dec, err := g.decideDelete("team-a")
	if err != nil {
		t.Fatalf("empty namespace: %v", err)
	}
	if res := g.commit(dec.Preconditions, dec.Events...); res.Err != nil {
		t.Fatalf("delete of an empty namespace: %v", res.Err)
	}
	if _, err := namespaces.Get(projections.NewView(g.store), "team-a"); !errors.Is(err, projections.ErrNotFound) {
		t.Fatalf("team-a after delete: %v", err)
	}
}

// TestDeleteGuardAtApply (N9): a job registered or a variable written
// after the delete was decided (on an empty namespace) but before it
// applies makes the delete fail at apply, naming what arrived; the
// namespace and what it holds survive.
func TestDeleteGuardAtApply(t *testing.T) {
	for _, tc := range []struct {
		name    string
		arrives events.Payload
		says    string
	}{
		{"job", job("team-a", "late"), `still holds 1 job that is not dead (late)`},
		{"variable", variable("team-a", "late"), `still holds 1 variable`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := newGuardFSM(t)
			g.must(upserted("team-a"))
			dec, err := g.decideDelete("team-a")
			if err != nil {
				t.Fatalf("decide on an empty namespace: %v", err)
			}
			g.must(tc.arrives) // between decide and apply
			res := g.commit(dec.Preconditions, dec.Events...)
			var re *fsm.RejectedError
			if !errors.As(res.Err, &re) || re.Precondition.Op != nsguard.EmptyOp || !strings.Contains(re.Reason, tc.says) {
				t.Fatalf("delete at apply: %v, want a namespace-empty rejection saying %q", res.Err, tc.says)
			}
			if _, err := namespaces.Get(projections.NewView(g.store), "team-a"); err != nil {
				t.Fatalf("team-a was deleted: %v", err)
			}
		})
	}
}
