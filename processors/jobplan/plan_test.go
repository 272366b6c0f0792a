package jobplan_test

import (
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/commands/job"
	"github.com/ordoplane/ordo/commands/job/jobspec"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/processors/jobplan"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/fsm"
	pt "github.com/ordoplane/ordo/projections/projectionstest"
	"github.com/ordoplane/ordo/storage/kv"
)

var now = time.Unix(1_700_000_000, 0).UTC()

type cluster struct {
	t     *testing.T
	store *kv.Store
	fsm   *fsm.FSM
	index uint64
	ids   int
}

func newCluster(t *testing.T) *cluster {
	store := pt.OpenStore(t)
	return &cluster{t: t, store: store, fsm: pt.NewFSM(t, store)}
}

func (c *cluster) view() projections.View {
	snap := c.store.Snapshot()
	c.t.Cleanup(func() { snap.Close() })
	return projections.NewView(snap)
}

func (c *cluster) apply(ps ...events.Payload) {
	c.t.Helper()
	c.index++
	if res := pt.ApplyOne(c.t, c.fsm, c.index, pt.Entry(c.t, fmt.Sprintf("c%d", c.index), ps...)); res.Err != nil {
		c.t.Fatal(res.Err)
	}
}

func (c *cluster) register(j events.Job) {
	c.t.Helper()
	cmd := &job.Register{Job: j}
	if err := cmd.Validate(); err != nil {
		c.t.Fatal(err)
	}
	dec, err := cmd.Decide(c.view(), now, func() string { c.ids++; return fmt.Sprintf("id-%d", c.ids) })
	if err != nil {
		c.t.Fatal(err)
	}
	c.apply(dec.Events...)
}

func (c *cluster) node(id string, cpu int) {
	c.apply(&events.NodeRegistered{Node: events.Node{ID: id, Name: id, Datacenter: "dc1", NodePool: "default",
		Resources: events.NodeResources{CPU: cpu, MemoryMB: 8192, DiskMB: 10000},
		Drivers:   map[string]events.DriverInfo{"exec": {Detected: true, Healthy: true}}, Status: events.NodeStatusReady}})
}

// running places n running allocations of web's group g at version 0.
func (c *cluster) running(n int) {
	var as []events.Allocation
	for i := range n {
		as = append(as, events.Allocation{ID: fmt.Sprintf("a%d", i), Namespace: "default", EvalID: "e0",
			Name: fmt.Sprintf("web.g[%d]", i), NodeID: "n1", JobID: "web", TaskGroup: "g",
			Resources: events.Resources{CPU: 100, MemoryMB: 64}, DesiredStatus: events.AllocDesiredRun,
			ClientStatus: events.AllocClientRunning})
	}
	c.apply(&events.AllocsPlaced{EvalID: "e0", Allocs: as})
}

func webJob(t *testing.T, count, cpu int, command string) events.Job {
	t.Helper()
	j, err := jobspec.ParseHCL("web.hcl", fmt.Appendf(nil, `job "web" {
  type = "batch"
  group "g" {
    count = %d
    task "t" {
      driver = "exec"
      config { command = %q }
      resources {
        cpu    = %d
        memory = 64
      }
    }
  }
}`, count, command, cpu))
	if err != nil {
		t.Fatal(err)
	}
	return *j
}

func (c *cluster) plan(j events.Job) *jobplan.Response {
	c.t.Helper()
	before := pt.ArchiveLen(c.t, c.store)
	resp, err := jobplan.Plan(c.view(), &j, jobplan.Options{Diff: true, Now: now})
	if err != nil {
		c.t.Fatal(err)
	}
	if after := pt.ArchiveLen(c.t, c.store); after != before {
		c.t.Fatalf("a plan changed the archive: %d events, then %d", before, after)
	}
	return resp
}

func TestPlanNewJob(t *testing.T) {
	c := newCluster(t)
	c.node("n1", 4000)
	resp := c.plan(webJob(t, 3, 100, "/bin/true"))
	g := resp.Annotations.DesiredTGUpdates["g"]
	if g == nil || *g != (jobplan.DesiredUpdates{Place: 3}) || !resp.Annotations.Changes() {
		t.Fatalf("annotations = %+v", g)
	}
	if resp.Index != 0 || len(resp.FailedTGAllocs) != 0 || len(resp.CreatedEvals) != 0 {
		t.Fatalf("response = %+v", resp)
	}
	if d := resp.Diff; d.Type != jobplan.DiffAdded || len(d.TaskGroups) != 1 || d.TaskGroups[0].Type != jobplan.DiffAdded ||
		d.TaskGroups[0].Updates["create"] != 3 {
		t.Fatalf("diff = %+v", d)
	}
}

func TestPlanCountChange(t *testing.T) {
	c := newCluster(t)
	c.node("n1", 4000)
	c.register(webJob(t, 3, 100, "/bin/true"))
	c.running(3)
	jmi := uint64(2) // the registration's entry

	// Unchanged: nothing to do, no diff.
	same := c.plan(webJob(t, 3, 100, "/bin/true"))
	if g := same.Annotations.DesiredTGUpdates["g"]; *g != (jobplan.DesiredUpdates{Ignore: 3}) || same.Annotations.Changes() {
		t.Fatalf("unchanged: %+v", g)
	}
	if same.Index != jmi || same.Diff.Type != jobplan.DiffNone {
		t.Fatalf("unchanged: index %d, diff %+v", same.Index, same.Diff)
	}

	up := c.plan(webJob(t, 5, 100, "/bin/true"))
	if g := up.Annotations.DesiredTGUpdates["g"]; *g != (jobplan.DesiredUpdates{Place: 2, InPlaceUpdate: 3}) {
		t.Fatalf("scale up: %+v", g)
	}
	tg := up.Diff.TaskGroups[0]
	if up.Diff.Type != jobplan.DiffEdited || tg.Type != jobplan.DiffEdited || len(tg.Fields) != 1 ||
		!reflect.DeepEqual(*tg.Fields[0], jobplan.FieldDiff{Type: jobplan.DiffEdited, Name: "Count", Old: "3", New: "5"}) {
		t.Fatalf("scale up diff: %+v %+v", up.Diff, tg.Fields)
	}

	down := c.plan(webJob(t, 2, 100, "/bin/true"))
	if g := down.Annotations.DesiredTGUpdates["g"]; *g != (jobplan.DesiredUpdates{Stop: 1, InPlaceUpdate: 2}) {
		t.Fatalf("scale down: %+v", g)
	}

	// A task change replaces every allocation.
	cmd := c.plan(webJob(t, 3, 100, "/bin/false"))
	if g := cmd.Annotations.DesiredTGUpdates["g"]; *g != (jobplan.DesiredUpdates{DestructiveUpdate: 3}) {
		t.Fatalf("task change: %+v", g)
	}
	td := cmd.Diff.TaskGroups[0].Tasks[0]
	if td.Type != jobplan.DiffEdited || len(td.Objects) != 1 || td.Objects[0].Name != "Config" ||
		!reflect.DeepEqual(*td.Objects[0].Fields[0], jobplan.FieldDiff{Type: jobplan.DiffEdited, Name: "command", Old: "/bin/true", New: "/bin/false"}) {
		t.Fatalf("task diff: %+v", td)
	}

	// So does a change of the job's meta, which the tasks see as
	// NOMAD_META_* (as Nomad's plan says).
	meta := webJob(t, 3, 100, "/bin/true")
	meta.Meta = map[string]string{"release": "2"}
	if g := c.plan(meta).Annotations.DesiredTGUpdates["g"]; *g != (jobplan.DesiredUpdates{DestructiveUpdate: 3}) {
		t.Fatalf("job meta change: %+v", g)
	}
}

func TestPlanCannotFit(t *testing.T) {
	c := newCluster(t)
	c.node("n1", 1000)
	resp := c.plan(webJob(t, 2, 800, "/bin/true"))
	g := resp.Annotations.DesiredTGUpdates["g"]
	m := resp.FailedTGAllocs["g"]
	if *g != (jobplan.DesiredUpdates{Place: 2}) || m == nil || m.NodesExhausted == 0 && m.CoalescedFailures == 0 {
		t.Fatalf("annotations %+v, failed %+v", g, m)
	}
	if len(resp.CreatedEvals) != 1 || resp.CreatedEvals[0].Status != events.EvalStatusBlocked {
		t.Fatalf("created evals = %+v", resp.CreatedEvals)
	}
}

func TestPlanInvalid(t *testing.T) {
	c := newCluster(t)
	j := webJob(t, 1, 100, "/bin/true")
	j.TaskGroups = nil
	_, err := jobplan.Plan(c.view(), &j, jobplan.Options{Now: now})
	if ve := (*commands.ValidationError)(nil); !errors.As(err, &ve) {
		t.Fatalf("err = %v", err)
	}
	j = webJob(t, 1, 100, "/bin/true")
	j.Namespace = "nope"
	if _, err := jobplan.Plan(c.view(), &j, jobplan.Options{Now: now}); commands.Status(err) != 400 {
		t.Fatalf("missing namespace: %v", err)
	}
}

func TestPlanPeriodic(t *testing.T) {
	c := newCluster(t)
	j := webJob(t, 1, 100, "/bin/true")
	j.Periodic = &events.PeriodicConfig{Enabled: true, Spec: "@hourly", SpecType: "cron", TimeZone: "UTC"}
	resp := c.plan(j)
	if want := now.Add(time.Hour).Truncate(time.Hour); !resp.NextPeriodicLaunch.Equal(want) || resp.Annotations.Changes() {
		t.Fatalf("next launch %v, want %v; annotations %+v", resp.NextPeriodicLaunch, want, resp.Annotations)
	}
}
