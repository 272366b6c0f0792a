package job_test

import (
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/commands/commandstest"
	"github.com/ordoplane/ordo/commands/job"
	"github.com/ordoplane/ordo/commands/job/jobspec"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/allocs"
	"github.com/ordoplane/ordo/projections/deployments"
	"github.com/ordoplane/ordo/projections/fsm"
	"github.com/ordoplane/ordo/projections/jobs"
	pt "github.com/ordoplane/ordo/projections/projectionstest"
)

var now = time.Unix(1_700_000_000, 0).UTC()

// cluster is a state store fed through the FSM, as a server writes it,
// minting ids in order.
type cluster struct {
	*commandstest.Cluster
	ids int
}

func newCluster(t *testing.T) *cluster {
	return &cluster{Cluster: commandstest.NewCluster(t)}
}

// nextID mints ids id-1, id-2, …
func (c *cluster) nextID() string {
	c.ids++
	return fmt.Sprintf("id-%d", c.ids)
}

// decide validates and decides cmd against the current state.
func (c *cluster) decide(cmd commands.Command) (commands.Decision, error) {
	c.T.Helper()
	if err := cmd.Validate(); err != nil {
		return commands.Decision{}, err
	}
	return cmd.Decide(c.View(), now, c.nextID)
}

// run decides cmd and applies it, failing on any error.
func (c *cluster) run(cmd commands.Command) commands.Decision {
	c.T.Helper()
	dec, err := c.decide(cmd)
	if err != nil {
		c.T.Fatalf("decide %T: %v", cmd, err)
	}
	if len(dec.Events) > 0 {
		if res := c.Apply(dec); res.Err != nil {
			c.T.Fatalf("apply %T: %v", cmd, res.Err)
		}
	}
	return dec
}

func (c *cluster) job(ns, id string) *jobs.Job {
	c.T.Helper()
	j, err := jobs.Get(c.View(), ns, id)
	if err != nil {
		c.T.Fatalf("job %s/%s: %v", ns, id, err)
	}
	return j
}

func parse(t *testing.T, src string) events.Job {
	t.Helper()
	j, err := jobspec.ParseHCL("test.hcl", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return *j
}

func spec(typ, jobBody string, count int) string {
	return fmt.Sprintf(`job "web" {
  type = %q
%s
  group "g" {
    count = %d
    task "t" {
      driver = "exec"
      config { command = "/bin/true" }
    }
  }
}`, typ, jobBody, count)
}

func service(t *testing.T, count int) events.Job {
	return parse(t, spec("service", `update { max_parallel = 1 }`, count))
}

// types returns the event types of dec, in order.
func types(dec commands.Decision) []string {
	var out []string
	for _, p := range dec.Events {
		out = append(out, reflect.TypeOf(p).Elem().Name())
	}
	return out
}

func TestValidate(t *testing.T) {
	web := service(t, 1)
	noID := web
	noID.ID = ""
	dispatched := web
	dispatched.Dispatched = true
	for _, tc := range []struct {
		name  string
		cmd   commands.Command
		field string
	}{
		{"register", &job.Register{Job: web}, ""},
		{"register enforce", &job.Register{Job: web, EnforceIndex: true, JobModifyIndex: 5}, ""},
		{"register no id", &job.Register{Job: noID}, "job.id"},
		{"register dispatched", &job.Register{Job: dispatched}, "job.parent_id"},
		{"register index without enforce", &job.Register{Job: web, JobModifyIndex: 5}, "JobModifyIndex"},
		{"register eval priority", &job.Register{Job: web, EvalPriority: 101}, "EvalPriority"},
		{"deregister", &job.Deregister{Namespace: "default", ID: "web"}, ""},
		{"deregister no ns", &job.Deregister{ID: "web"}, "namespace"},
		{"deregister no id", &job.Deregister{Namespace: "default"}, "id"},
		{"deregister space", &job.Deregister{Namespace: "default", ID: "a b"}, "id"},
		{"dispatch", &job.Dispatch{Namespace: "default", ID: "p", Payload: []byte("x")}, ""},
		{"dispatch payload", &job.Dispatch{Namespace: "default", ID: "p", Payload: make([]byte, job.MaxDispatchPayload+1)}, "Payload"},
		{"dispatch meta", &job.Dispatch{Namespace: "default", ID: "p", Meta: map[string]string{"": "x"}}, "Meta"},
		{"pending", job.MarkDeploymentPending{ID: "d"}, ""},
		{"pending no id", job.MarkDeploymentPending{}, "ID"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.cmd.Validate()
			if tc.field == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			commandstest.WantField(t, err, tc.field)
		})
	}
}

func TestRegisterNewServiceJob(t *testing.T) {
	c := newCluster(t)
	cmd := &job.Register{Job: service(t, 2)}
	dec, err := c.decide(cmd)
	if err != nil {
		t.Fatal(err)
	}
	if got := types(dec); !reflect.DeepEqual(got, []string{"JobRegistered", "EvalsUpserted", "DeploymentUpserted"}) {
		t.Fatalf("events = %v", got)
	}
	wantPre := []events.Precondition{{Table: jobs.Table, Key: jobs.Key("default", "web"), Op: events.ModifyIndex}}
	if !reflect.DeepEqual(dec.Preconditions, wantPre) {
		t.Fatalf("preconditions = %+v", dec.Preconditions)
	}
	reg := dec.Events[0].(*events.JobRegistered).Job
	if reg.Version != 0 || reg.SubmitTime != now.UnixNano() || reg.Stop {
		t.Fatalf("registered job = %+v", reg)
	}
	eval := dec.Events[1].(*events.EvalsUpserted).Evals[0]
	wantEval := events.Evaluation{ID: "id-1", Namespace: "default", Priority: 50, Type: "service",
		TriggeredBy: events.EvalTriggerJobRegister, JobID: "web", Status: events.EvalStatusPending,
		CreateTime: now.UnixNano(), ModifyTime: now.UnixNano()}
	if !reflect.DeepEqual(eval, wantEval) {
		t.Fatalf("eval =\n %+v\nwant\n %+v", eval, wantEval)
	}
	d := dec.Events[2].(*events.DeploymentUpserted).Deployment
	if d.ID != "id-2" || d.Status != events.DeploymentStatusInitializing || d.JobVersion != 0 ||
		d.TaskGroups["g"] == nil || d.TaskGroups["g"].DesiredTotal != 2 {
		t.Fatalf("deployment = %+v", d)
	}
	if r := cmd.Result(); r != (job.Result{JobID: "web", EvalID: "id-1", DeploymentID: "id-2", Changed: true}) {
		t.Fatalf("result = %+v", r)
	}
	if res := c.Apply(dec); res.Err != nil {
		t.Fatal(res.Err)
	}
	j := c.job("default", "web")
	if j.Version != 0 || j.CreateIndex != 1 || j.JobModifyIndex != 1 || j.Status != jobs.StatusPending {
		t.Fatalf("job = %+v", j)
	}
}

func TestRegisterVersions(t *testing.T) {
	for _, tc := range []struct {
		name        string
		second      func(t *testing.T) events.Job
		wantTypes   []string
		wantVersion uint64
	}{
		{"unchanged", func(t *testing.T) events.Job { return service(t, 2) }, []string{"EvalsUpserted"}, 0},
		{"count", func(t *testing.T) events.Job { return service(t, 3) }, []string{"JobRegistered", "EvalsUpserted", "DeploymentUpserted"}, 1},
		{"no update strategy", func(t *testing.T) events.Job {
			j := service(t, 2)
			j.Update, j.TaskGroups[0].Update = nil, nil
			return j
		}, []string{"JobRegistered", "EvalsUpserted"}, 1},
		{"batch", func(t *testing.T) events.Job { return parse(t, spec("batch", "", 2)) }, []string{"JobRegistered", "EvalsUpserted"}, 1},
		{"periodic", func(t *testing.T) events.Job {
			return parse(t, spec("batch", `periodic { crons = ["*/5 * * * *"] }`, 1))
		}, []string{"JobRegistered"}, 1},
		{"parameterized", func(t *testing.T) events.Job {
			return parse(t, spec("batch", `parameterized {}`, 1))
		}, []string{"JobRegistered"}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newCluster(t)
			c.run(&job.Register{Job: service(t, 2)})
			first := c.job("default", "web")
			cmd := &job.Register{Job: tc.second(t)}
			dec := c.run(cmd)
			if got := types(dec); !reflect.DeepEqual(got, tc.wantTypes) {
				t.Fatalf("events = %v, want %v", got, tc.wantTypes)
			}
			j := c.job("default", "web")
			if j.Version != tc.wantVersion {
				t.Fatalf("version = %d, want %d", j.Version, tc.wantVersion)
			}
			r := cmd.Result()
			if tc.wantVersion == 0 {
				// Unchanged: the eval names the current JobModifyIndex.
				if r.Changed || r.JobModifyIndex != first.JobModifyIndex || j.ModifyIndex != first.ModifyIndex {
					t.Fatalf("result %+v, job %+v", r, j)
				}
				ev := dec.Events[0].(*events.EvalsUpserted).Evals[0]
				if ev.JobModifyIndex != first.JobModifyIndex {
					t.Fatalf("eval JobModifyIndex = %d, want %d", ev.JobModifyIndex, first.JobModifyIndex)
				}
				return
			}
			if !r.Changed || j.JobModifyIndex != c.Index || j.CreateIndex != first.CreateIndex {
				t.Fatalf("result %+v, job %+v (index %d)", r, j, c.Index)
			}
			vs, err := jobs.Versions(c.View(), "default", "web")
			if err != nil || len(vs) != 2 || vs[0].Version != 1 || vs[1].Version != 0 || vs[1].ModifyIndex != first.ModifyIndex {
				t.Fatalf("versions = %+v, %v", vs, err)
			}
		})
	}
}

func TestRegisterEnforceIndex(t *testing.T) {
	c := newCluster(t)
	web := service(t, 1)
	wrongNew := &job.Register{Job: web, EnforceIndex: true, JobModifyIndex: 7}
	if _, err := c.decide(wrongNew); commands.Status(err) != 409 {
		t.Fatalf("enforce 7 on a missing job: %v", err)
	}
	c.run(&job.Register{Job: web, EnforceIndex: true})
	jmi := c.job("default", "web").JobModifyIndex
	if _, err := c.decide(&job.Register{Job: service(t, 2), EnforceIndex: true}); commands.Status(err) != 409 ||
		!strings.Contains(err.Error(), fmt.Sprintf("job modify index %d", jmi)) {
		t.Fatalf("enforce 0 on an existing job: %v", err)
	}
	if _, err := c.decide(&job.Register{Job: service(t, 2), EnforceIndex: true, JobModifyIndex: jmi + 1}); commands.Status(err) != 409 {
		t.Fatalf("enforce a wrong index: %v", err)
	}
	c.run(&job.Register{Job: service(t, 2), EnforceIndex: true, JobModifyIndex: jmi})
	if j := c.job("default", "web"); j.Version != 1 {
		t.Fatalf("job = %+v", j)
	}
}

// TestRegisterRace decides two registrations on one snapshot: the second
// to apply is rejected, so no version is given twice.
func TestRegisterRace(t *testing.T) {
	c := newCluster(t)
	c.run(&job.Register{Job: service(t, 1)})
	a, err := c.decide(&job.Register{Job: service(t, 2)})
	if err != nil {
		t.Fatal(err)
	}
	b, err := c.decide(&job.Register{Job: service(t, 3)})
	if err != nil {
		t.Fatal(err)
	}
	if res := c.Apply(a); res.Err != nil {
		t.Fatal(res.Err)
	}
	archived := pt.ArchiveLen(t, c.Store)
	res := c.Apply(b)
	var re *fsm.RejectedError
	if !errors.As(res.Err, &re) || re.Precondition.Table != jobs.Table {
		t.Fatalf("second registration: %v", res.Err)
	}
	if pt.ArchiveLen(t, c.Store) != archived {
		t.Fatal("a rejected registration reached the archive")
	}
	if j := c.job("default", "web"); j.Version != 1 || j.TaskGroups[0].Count != 2 {
		t.Fatalf("job = %+v", j)
	}
}

func TestRegisterNamespace(t *testing.T) {
	c := newCluster(t)
	j := service(t, 1)
	j.Namespace = "payments"
	_, err := c.decide(&job.Register{Job: j})
	commandstest.WantField(t, err, "job.namespace")
	c.Apply(commands.Decision{Events: []events.Payload{&events.NamespaceUpserted{Namespace: events.Namespace{Name: "payments"}}}})
	dec := c.run(&job.Register{Job: j})
	if dec.Preconditions[0] != (events.Precondition{Table: "namespaces", Key: "payments", Op: events.Exists}) {
		t.Fatalf("preconditions = %+v", dec.Preconditions)
	}
	if got := c.job("payments", "web"); got.Namespace != "payments" {
		t.Fatalf("job = %+v", got)
	}
}

func TestDeregister(t *testing.T) {
	c := newCluster(t)
	if _, err := c.decide(&job.Deregister{Namespace: "default", ID: "web"}); commands.Status(err) != 404 {
		t.Fatalf("deregister a missing job: %v", err)
	}
	c.run(&job.Register{Job: service(t, 2)})
	stop := &job.Deregister{Namespace: "default", ID: "web", NoShutdownDelay: true}
	dec := c.run(stop)
	if got := types(dec); !reflect.DeepEqual(got, []string{"JobDeregistered", "EvalsUpserted"}) {
		t.Fatalf("events = %v", got)
	}
	if p := dec.Events[0].(*events.JobDeregistered); !p.NoShutdownDelay || p.Purge {
		t.Fatalf("deregistered = %+v", p)
	}
	ev := dec.Events[1].(*events.EvalsUpserted).Evals[0]
	if ev.TriggeredBy != events.EvalTriggerJobDeregister || ev.ID != stop.Result().EvalID || ev.JobModifyIndex != 0 {
		t.Fatalf("eval = %+v", ev)
	}
	j := c.job("default", "web")
	if !j.Stop || j.Version != 1 || j.JobModifyIndex != c.Index || j.Status != jobs.StatusDead || j.SubmitTime != pt.LeaderTime {
		t.Fatalf("stopped job = %+v", j)
	}

	// Stopping it again records nothing but an eval at the current version.
	again := c.run(&job.Deregister{Namespace: "default", ID: "web"})
	if got := types(again); !reflect.DeepEqual(got, []string{"EvalsUpserted"}) ||
		again.Events[0].(*events.EvalsUpserted).Evals[0].JobModifyIndex != j.JobModifyIndex {
		t.Fatalf("second stop = %v", got)
	}

	// Registering it again un-stops it at a new version.
	c.run(&job.Register{Job: service(t, 2)})
	if j := c.job("default", "web"); j.Stop || j.Version != 2 {
		t.Fatalf("re-registered job = %+v", j)
	}

	c.run(&job.Deregister{Namespace: "default", ID: "web", Purge: true})
	if _, err := jobs.Get(c.View(), "default", "web"); !errors.Is(err, projections.ErrNotFound) {
		t.Fatalf("purged job: %v", err)
	}
	if vs, err := jobs.Versions(c.View(), "default", "web"); !errors.Is(err, projections.ErrNotFound) || len(vs) != 0 {
		t.Fatalf("versions of a purged job: %v, %v", vs, err)
	}
}

// TestDeregisterNoShutdownDelayMarksAllocs (N23): stopping a job with
// no-shutdown-delay marks its live allocations' DesiredTransition in the
// same entry, which is what the client reads; terminal ones are left.
func TestDeregisterNoShutdownDelayMarksAllocs(t *testing.T) {
	c := newCluster(t)
	c.run(&job.Register{Job: service(t, 2)})
	mk := func(id, client string) events.Allocation {
		return events.Allocation{ID: id, Namespace: "default", JobID: "web", TaskGroup: "web", Name: "web.web[0]",
			NodeID: "n1", DesiredStatus: events.AllocDesiredRun, ClientStatus: client}
	}
	c.Apply(commands.Decision{Events: []events.Payload{&events.AllocsPlaced{EvalID: "e", Allocs: []events.Allocation{
		mk("a-live", events.AllocClientRunning), mk("a-done", events.AllocClientComplete)}}}})

	dec := c.run(&job.Deregister{Namespace: "default", ID: "web", NoShutdownDelay: true})
	if got := types(dec); !reflect.DeepEqual(got, []string{"JobDeregistered", "AllocsDesiredUpdated", "EvalsUpserted"}) {
		t.Fatalf("events = %v", got)
	}
	up := dec.Events[1].(*events.AllocsDesiredUpdated).Updates
	if len(up) != 1 || up[0].ID != "a-live" || up[0].DesiredStatus != "" || up[0].DesiredTransition.NoShutdownDelay == nil {
		t.Fatalf("updates = %+v", up)
	}
	a, err := allocs.Get(c.View(), "a-live")
	if err != nil || a.DesiredTransition.NoShutdownDelay == nil || !*a.DesiredTransition.NoShutdownDelay ||
		a.DesiredStatus != events.AllocDesiredRun {
		t.Fatalf("live alloc after stop = %+v, %v", a, err)
	}
	// A plain stop marks nothing.
	c.run(&job.Register{Job: service(t, 3)})
	if got := types(c.run(&job.Deregister{Namespace: "default", ID: "web"})); !reflect.DeepEqual(got, []string{"JobDeregistered", "EvalsUpserted"}) {
		t.Fatalf("plain stop events = %v", got)
	}
}

func TestDeregisterPeriodicHasNoEval(t *testing.T) {
	c := newCluster(t)
	c.run(&job.Register{Job: parse(t, spec("batch", `periodic { crons = ["@daily"] }`, 1))})
	dec := c.run(&job.Deregister{Namespace: "default", ID: "web"})
	if got := types(dec); !reflect.DeepEqual(got, []string{"JobDeregistered"}) {
		t.Fatalf("events = %v", got)
	}
}

var dispatchedID = regexp.MustCompile(`^web/dispatch-1700000000-[0-9a-f]{8}$`)

func TestDispatch(t *testing.T) {
	c := newCluster(t)
	if _, err := c.decide(&job.Dispatch{Namespace: "default", ID: "web"}); commands.Status(err) != 404 {
		t.Fatalf("dispatch a missing job: %v", err)
	}
	c.run(&job.Register{Job: parse(t, spec("batch", `
  meta { owner = "ops" }
  parameterized {
    payload       = "required"
    meta_required = ["day"]
    meta_optional = ["note"]
  }`, 1))})
	for _, tc := range []struct {
		name  string
		cmd   *job.Dispatch
		field string
	}{
		{"no payload", &job.Dispatch{Meta: map[string]string{"day": "mon"}}, "Payload"},
		{"missing meta", &job.Dispatch{Payload: []byte("x")}, "Meta"},
		{"unknown meta", &job.Dispatch{Payload: []byte("x"), Meta: map[string]string{"day": "mon", "x": "y"}}, "Meta"},
	} {
		tc.cmd.Namespace, tc.cmd.ID = "default", "web"
		_, err := c.decide(tc.cmd)
		t.Run(tc.name, func(t *testing.T) { commandstest.WantField(t, err, tc.field) })
	}
	cmd := &job.Dispatch{Namespace: "default", ID: "web", Payload: []byte("input"), Meta: map[string]string{"day": "mon"}}
	dec := c.run(cmd)
	r := cmd.Result()
	if !dispatchedID.MatchString(r.JobID) || r.EvalID == "" {
		t.Fatalf("result = %+v", r)
	}
	if got := types(dec); !reflect.DeepEqual(got, []string{"JobRegistered", "EvalsUpserted"}) {
		t.Fatalf("events = %v", got)
	}
	child := c.job("default", r.JobID)
	if child.ParentID != "web" || !child.Dispatched || string(child.Payload) != "input" ||
		!reflect.DeepEqual(child.Meta, map[string]string{"owner": "ops", "day": "mon"}) || child.Name != r.JobID {
		t.Fatalf("child = %+v", child)
	}
	if ev := dec.Events[1].(*events.EvalsUpserted).Evals[0]; ev.JobID != r.JobID || ev.Type != "batch" {
		t.Fatalf("eval = %+v", ev)
	}
	s, err := jobs.GetSummary(c.View(), "default", "web")
	if err != nil || s.Children == nil || s.Children.Pending != 1 {
		t.Fatalf("parent summary = %+v, %v", s, err)
	}

	// A job that is not parameterized, or a dispatched child, cannot be dispatched.
	c.run(&job.Register{Job: service(t, 1)})
	for _, id := range []string{r.JobID} {
		if _, err := c.decide(&job.Dispatch{Namespace: "default", ID: id, Payload: []byte("x")}); err == nil {
			t.Fatalf("dispatch of %s succeeded", id)
		}
	}
}

func TestMarkDeploymentPending(t *testing.T) {
	c := newCluster(t)
	reg := &job.Register{Job: service(t, 1)}
	c.run(reg)
	id := reg.Result().DeploymentID
	if _, err := c.decide(job.MarkDeploymentPending{ID: "nope"}); commands.Status(err) != 404 {
		t.Fatalf("missing deployment: %v", err)
	}
	dec := c.run(job.MarkDeploymentPending{ID: id})
	if len(dec.Events) != 1 || len(dec.Preconditions) != 1 || dec.Preconditions[0].Table != deployments.Table {
		t.Fatalf("decision = %+v", dec)
	}
	d, err := deployments.Get(c.View(), id)
	if err != nil || d.Status != events.DeploymentStatusPending {
		t.Fatalf("deployment = %+v, %v", d, err)
	}
	if dec := c.run(job.MarkDeploymentPending{ID: id}); len(dec.Events) != 0 {
		t.Fatalf("a pending deployment was moved again: %+v", dec)
	}
}
