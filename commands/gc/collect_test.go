package gc_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"testing"
	"time"

	"github.com/ordoplane/ordo/clock/clocktest"
	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/commands/gc"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/all"
	"github.com/ordoplane/ordo/projections/allocs"
	"github.com/ordoplane/ordo/projections/deployments"
	"github.com/ordoplane/ordo/projections/evals"
	"github.com/ordoplane/ordo/projections/fsm"
	"github.com/ordoplane/ordo/projections/jobs"
	"github.com/ordoplane/ordo/projections/nodes"
	pt "github.com/ordoplane/ordo/projections/projectionstest"
	"github.com/ordoplane/ordo/storage/kv"
)

type env struct {
	t     *testing.T
	store *kv.Store
	fsm   *fsm.FSM
	p     *commands.Pipeline
	clock *clocktest.Clock
}

func newEnv(t *testing.T) *env {
	store := pt.OpenStore(t)
	f := pt.NewFSM(t, store, all.Projections()...)
	e := &env{t: t, store: store, fsm: f, clock: clocktest.NewClock(time.Unix(1_700_000_000, 0))}
	n := 0
	p, err := commands.NewPipeline(commands.PipelineConfig{Log: &pt.FSMLog{FSM: f}, Store: store, Applied: f.Applied,
		Clock: e.clock, IDs: func() string { n++; return fmt.Sprint("id-", n) }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	e.p = p
	return e
}

// write appends payloads at the current leader time.
func (e *env) write(ps ...events.Payload) {
	e.t.Helper()
	ent := pt.Entry(e.t, "", ps...)
	ent.Time = e.clock.Now().UnixNano()
	ent.CommandID = fmt.Sprint("w", e.fsm.Applied()+1)
	if res := pt.ApplyOne(e.t, e.fsm, e.fsm.Applied()+1, ent); res.Err != nil {
		e.t.Fatal(res.Err)
	}
}

func (e *env) gc(c gc.Collect) (commands.Outcome, error) {
	return e.p.Run(context.Background(), "gc", commands.Request{}, c)
}

func (e *env) ids(table string) []string {
	e.t.Helper()
	var out []string
	if err := projections.NewView(e.store).Scan(table, "", false, func(k string, _ projections.Row) error {
		out = append(out, k)
		return nil
	}); err != nil {
		e.t.Fatal(err)
	}
	sort.Strings(out)
	return out
}

func ev(id, job, typ, status string, at int64) events.Evaluation {
	return events.Evaluation{ID: id, Namespace: "default", Type: typ, JobID: job, Status: status, CreateTime: at, ModifyTime: at,
		TriggeredBy: events.EvalTriggerJobRegister, Priority: 50}
}

func al(id, eval, job, node, client string, at int64) events.Allocation {
	return events.Allocation{ID: id, Namespace: "default", EvalID: eval, JobID: job, NodeID: node, Name: job + ".g[0]",
		TaskGroup: "g", DesiredStatus: events.AllocDesiredRun, ClientStatus: client, CreateTime: at, ModifyTime: at}
}

func spec(id, typ string) *events.JobRegistered {
	return &events.JobRegistered{Job: events.Job{ID: id, Namespace: "default", Type: typ,
		TaskGroups: []events.TaskGroup{{Name: "g", Count: 1}}}}
}

// The GC never removes anything a live job or alloc references, removes
// what is old and finished, judges age from leader times in state, and
// appends nothing when it finds nothing (N15).
func TestCollectKeepsWhatIsReferenced(t *testing.T) {
	e := newEnv(t)
	t0 := e.clock.Now().UnixNano()
	e.write(&events.NodeRegistered{Node: events.Node{ID: "n1", Name: "n1", Datacenter: "dc1", Status: events.NodeStatusReady}})
	e.write(spec("web", events.JobTypeService), spec("batch", events.JobTypeBatch))
	e.write(&events.EvalsUpserted{Evals: []events.Evaluation{
		ev("e-live", "web", events.JobTypeService, events.EvalStatusComplete, t0),  // its alloc runs
		ev("e-old", "web", events.JobTypeService, events.EvalStatusComplete, t0),   // its alloc completed
		ev("e-pend", "web", events.JobTypeService, events.EvalStatusPending, t0),   // not terminal
		ev("e-batch", "batch", events.JobTypeBatch, events.EvalStatusComplete, t0), // live batch job
	}})
	e.write(&events.AllocsPlaced{EvalID: "e-live", Allocs: []events.Allocation{al("a-run", "e-live", "web", "n1", events.AllocClientRunning, t0)}})
	e.write(&events.AllocsPlaced{EvalID: "e-old", Allocs: []events.Allocation{al("a-done", "e-old", "web", "n1", events.AllocClientComplete, t0)}})
	e.write(&events.AllocsPlaced{EvalID: "e-batch", Allocs: []events.Allocation{al("a-batch", "e-batch", "batch", "n1", events.AllocClientComplete, t0)}})

	// Younger than the thresholds: nothing is collected and nothing appended.
	e.clock.Advance(30 * time.Minute)
	before, evalIndex := e.fsm.Applied(), pt.TableIndex(t, e.store, evals.Table)
	if _, err := e.gc(gc.Collect{Thresholds: gc.DefaultThresholds()}); err != nil {
		t.Fatal(err)
	}
	if e.fsm.Applied() != before || pt.TableIndex(t, e.store, evals.Table) != evalIndex {
		t.Fatalf("a GC that found nothing appended (applied %d → %d)", before, e.fsm.Applied())
	}

	// Past eval_gc_threshold (1h): e-old and its alloc go; e-live (its alloc
	// runs), e-pend (pending) and e-batch (a live batch job) stay.
	e.clock.Advance(time.Hour)
	if _, err := e.gc(gc.Collect{Thresholds: gc.DefaultThresholds()}); err != nil {
		t.Fatal(err)
	}
	if got := e.ids(evals.Table); !reflect.DeepEqual(got, []string{"e-batch", "e-live", "e-pend"}) {
		t.Fatalf("evals = %v", got)
	}
	if got := e.ids(allocs.Table); !reflect.DeepEqual(got, []string{"a-batch", "a-run"}) {
		t.Fatalf("allocs = %v", got)
	}
	// Forced: the thresholds are ignored, so the complete batch job (dead)
	// goes with its eval and alloc; references still hold for the rest.
	if _, err := e.gc(gc.Collect{Force: true}); err != nil {
		t.Fatal(err)
	}
	if got := e.ids(evals.Table); !reflect.DeepEqual(got, []string{"e-live", "e-pend"}) {
		t.Fatalf("evals after a forced GC = %v", got)
	}
	if got := e.ids(allocs.Table); !reflect.DeepEqual(got, []string{"a-run"}) {
		t.Fatalf("allocs after a forced GC = %v", got)
	}
	if got := e.ids(jobs.Table); !reflect.DeepEqual(got, []string{"default\x00web"}) {
		t.Fatalf("jobs after a forced GC = %q", got)
	}
	if got := e.ids(nodes.Table); !reflect.DeepEqual(got, []string{"n1"}) {
		t.Fatalf("nodes = %v", got)
	}
}

// A dead job goes with its evals, allocs and deployments; a down node
// with only terminal allocs goes; a stale decision is refused at apply.
func TestCollectDeadJobAndDownNode(t *testing.T) {
	e := newEnv(t)
	t0 := e.clock.Now().UnixNano()
	e.write(&events.NodeRegistered{Node: events.Node{ID: "n1", Name: "n1", Datacenter: "dc1", Status: events.NodeStatusReady}})
	e.write(spec("web", events.JobTypeService))
	e.write(&events.EvalsUpserted{Evals: []events.Evaluation{ev("e1", "web", events.JobTypeService, events.EvalStatusComplete, t0)}})
	e.write(&events.AllocsPlaced{EvalID: "e1", Allocs: []events.Allocation{al("a1", "e1", "web", "n1", events.AllocClientRunning, t0)}})
	e.write(&events.DeploymentUpserted{Deployment: events.Deployment{ID: "d1", Namespace: "default", JobID: "web",
		Status: events.DeploymentStatusSuccessful, ModifyTime: t0}})
	e.write(&events.JobDeregistered{Namespace: "default", ID: "web"})
	e.write(&events.AllocsClientUpdated{NodeID: "n1", Updates: []events.AllocClientUpdate{{ID: "a1", ClientStatus: events.AllocClientComplete}}})
	e.write(&events.NodeStatusUpdated{ID: "n1", Status: events.NodeStatusDown})
	if j, err := jobs.Get(projections.NewView(e.store), "default", "web"); err != nil || j.Status != jobs.StatusDead {
		t.Fatalf("job = %+v, %v; want dead", j, err)
	}
	e.clock.Advance(25 * time.Hour)

	// A decision made, then the job re-registered before it applies: refused.
	c := gc.Collect{Thresholds: gc.DefaultThresholds()}
	snap := e.store.Snapshot()
	d, counts, err := c.Plan(projections.NewView(snap), e.clock.Now())
	snap.Close()
	if err != nil || counts.Jobs != 1 || counts.Nodes != 1 || counts.Deployments != 1 {
		t.Fatalf("plan = %+v, %v", counts, err)
	}
	e.write(spec("web", events.JobTypeService))
	ent := pt.Entry(t, "stale", d.Events...)
	ent.Preconditions = d.Preconditions
	if res := pt.ApplyOne(t, e.fsm, e.fsm.Applied()+1, ent); res.Err == nil {
		t.Fatal("a stale GC decision applied")
	}
	if got := e.ids(jobs.Table); len(got) != 1 {
		t.Fatalf("jobs after the refused GC = %v", got)
	}
	// Stopped again and old: everything goes.
	e.write(&events.JobDeregistered{Namespace: "default", ID: "web"})
	e.clock.Advance(5 * time.Hour)
	if _, err := e.gc(c); err != nil {
		var ce *commands.ConflictError
		if !errors.As(err, &ce) {
			t.Fatal(err)
		}
	}
	for _, table := range []string{jobs.Table, evals.Table, allocs.Table, deployments.Table, nodes.Table} {
		if got := e.ids(table); len(got) != 0 {
			t.Errorf("%s after GC = %v", table, got)
		}
	}
	pt.CheckRebuildEqualsLive(t, e.store, all.Projections()...)
}

func TestThresholdsValidate(t *testing.T) {
	var ve *commands.ValidationError
	err := gc.Collect{Thresholds: gc.Thresholds{Node: -time.Second}}.Validate()
	if !errors.As(err, &ve) || ve.Field != "node_gc_threshold" {
		t.Fatalf("Validate = %v", err)
	}
}
