package allocrunner_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ordoplane/ordo/client/allocrunner"
	"github.com/ordoplane/ordo/client/driver"
	"github.com/ordoplane/ordo/client/driver/exec"
	"github.com/ordoplane/ordo/client/state"
	"github.com/ordoplane/ordo/client/template"
	"github.com/ordoplane/ordo/client/template/templatetest"
	"github.com/ordoplane/ordo/events"
)

// execHarness runs allocations with the exec driver: real processes.
type execHarness struct {
	t     *testing.T
	root  string
	store *state.Store
	drv   driver.Driver
	node  *events.Node
	src   template.Source
}

func newExecHarness(t *testing.T) *execHarness {
	dir := t.TempDir()
	st, err := state.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	d, err := exec.New(exec.Config{})
	if err != nil {
		t.Fatal(err)
	}
	return &execHarness{t: t, root: dir + "/alloc", store: st, drv: d,
		node: &events.Node{ID: "node-1", Name: "client-one", Datacenter: "dc7", NodeClass: "small",
			Attributes: map[string]string{"kernel.name": "linux"}, Meta: map[string]string{"shell": "/bin/sh"}}}
}

func (h *execHarness) run(a events.Allocation, j *events.Job) *allocrunner.Runner {
	h.t.Helper()
	r, err := allocrunner.New(allocrunner.Config{Alloc: a, Job: j, Drivers: map[string]driver.Driver{"exec": h.drv},
		Root: h.root, Store: h.store, Logger: quiet(), Node: h.node, Templates: h.src})
	if err != nil {
		h.t.Fatal(err)
	}
	start(h.t, r)
	return r
}

// execJob is a one-task job of jobType running script with /bin/sh.
func execJob(jobType, script string, mod func(tg *events.TaskGroup, t *events.Task)) *events.Job {
	t := events.Task{Name: "main", Driver: "exec", KillTimeout: time.Second,
		Config: events.TaskConfig{"command": "/bin/sh", "args": []any{"-c", script}}}
	tg := events.TaskGroup{Name: "web", Count: 1, RestartPolicy: &events.RestartPolicy{Attempts: 0, Mode: "fail"}}
	if mod != nil {
		mod(&tg, &t)
	}
	tg.Tasks = []events.Task{t}
	return &events.Job{ID: "web", Name: "web", Namespace: "default", Type: jobType, Version: 1, TaskGroups: []events.TaskGroup{tg}}
}

// eventually waits up to 10s for cond, checking every few milliseconds.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond) // polls a real process's output
	}
}

func taskFile(r *allocrunner.Runner, name string) string {
	b, _ := os.ReadFile(filepath.Join(r.Dir().TaskDir("main"), name))
	return string(b)
}

func taskEvents(r *allocrunner.Runner) []events.TaskEvent {
	rec, _ := r.TaskRecord("main")
	return rec.State.Events
}

func hasEvent(r *allocrunner.Runner, typ, msgPrefix string) bool {
	return slices.ContainsFunc(taskEvents(r), func(e events.TaskEvent) bool {
		return e.Type == typ && strings.HasPrefix(e.Message, msgPrefix)
	})
}

func waitDone(t *testing.T, r *allocrunner.Runner) events.AllocClientUpdate {
	t.Helper()
	select {
	case <-r.Done():
	case <-time.After(10 * time.Second):
		t.Fatalf("allocation never finished; events %+v", taskEvents(r))
	}
	u, _ := r.ClientUpdate()
	return u
}

// A task sees its config, args and env interpolated (${NOMAD_META_*},
// ${node.*}, ${meta.*}, ${attr.*}) and NOMAD_PORT_* in its environment,
// as the shipped sysbatch example needs.
func TestTaskSeesInterpolatedConfig(t *testing.T) {
	h := newExecHarness(t)
	j := execJob(events.JobTypeBatch, `echo "${NOMAD_META_dir} on ${node.unique.name} in ${node.datacenter} ${attr.kernel.name}" > out; `+
		`echo "port=$NOMAD_PORT_http addr=$NOMAD_ADDR_http greeting=$GREETING index=$NOMAD_ALLOC_INDEX dc=$NOMAD_DC" >> out`,
		func(tg *events.TaskGroup, t *events.Task) {
			t.Config["command"] = "${meta.shell}"
			t.Env = map[string]string{"GREETING": "hello-${node.class}"}
			tg.Meta = map[string]string{"dir": "/var/cache/app"}
		})
	a := alloc("env1")
	a.JobID = "web"
	a.AllocatedResources = &events.AllocatedResources{Shared: events.AllocatedSharedResources{
		Ports: []events.PortMapping{{Label: "http", Value: 23456, HostIP: "127.0.0.1"}}}}
	r := h.run(a, j)
	u := waitDone(t, r)
	if u.ClientStatus != events.AllocClientComplete {
		t.Fatalf("status %s: %+v", u.ClientStatus, taskEvents(r))
	}
	want := "/var/cache/app on client-one in dc7 linux\nport=23456 addr=127.0.0.1:23456 greeting=hello-small index=0 dc=dc7\n"
	if got := taskFile(r, "out"); got != want {
		t.Fatalf("out = %q, want %q", got, want)
	}
}

// A template waiting for a variable blocks the task's start with a
// Template event; the task starts, reading the rendered file and the
// env = true variables, once the variable exists.
func TestTemplateBlocksStart(t *testing.T) {
	h := newExecHarness(t)
	src := templatetest.New()
	h.src = src
	j := execJob(events.JobTypeBatch, `cat local/db.conf > out; echo " $DB_USER" >> out`, func(_ *events.TaskGroup, t *events.Task) {
		t.Templates = []events.Template{
			{DestPath: "local/db.conf", EmbeddedTmpl: `url={{ with nomadVar "nomad/jobs/web" }}{{ .url }}{{ end }} task={{ env "NOMAD_TASK_NAME" }}`},
			{DestPath: "secrets/db.env", Envvars: true, EmbeddedTmpl: `DB_USER={{ (nomadVar "nomad/jobs/web").user }}`},
		}
	})
	r := h.run(alloc("tpl1"), j)
	eventually(t, "the Missing event", func() bool {
		return hasEvent(r, template.EventType, "Missing: nomad.var.block(nomad/jobs/web@default.global)")
	})
	if hasEvent(r, events.TaskEventStarted, "") {
		t.Fatal("the task started before its template rendered")
	}
	src.PutVar("default", "nomad/jobs/web", map[string]string{"url": "pg://db", "user": "app"})
	if u := waitDone(t, r); u.ClientStatus != events.AllocClientComplete {
		t.Fatalf("status %s: %+v", u.ClientStatus, taskEvents(r))
	}
	if got := taskFile(r, "out"); got != "url=pg://db task=main app\n" {
		t.Fatalf("out = %q", got)
	}
}

// A template that cannot parse fails the task without starting it.
func TestTemplateFailureFailsTask(t *testing.T) {
	h := newExecHarness(t)
	j := execJob(events.JobTypeBatch, `true`, func(_ *events.TaskGroup, t *events.Task) {
		t.Templates = []events.Template{{DestPath: "x", EmbeddedTmpl: `{{ nope }}`}}
	})
	r := h.run(alloc("tpl2"), j)
	if u := waitDone(t, r); u.ClientStatus != events.AllocClientFailed {
		t.Fatalf("status %s", u.ClientStatus)
	}
	if !hasEvent(r, template.EventType, "Template failed: ") || hasEvent(r, events.TaskEventStarted, "") {
		t.Fatalf("events %+v", taskEvents(r))
	}
}

// A re-render restarts the task (change_mode restart): the new attempt
// reads the new file.
func TestTemplateChangeRestartsTask(t *testing.T) {
	h := newExecHarness(t)
	src := templatetest.New()
	src.PutVar("default", "app", map[string]string{"v": "one"})
	h.src = src
	j := execJob(events.JobTypeService, `cat local/v >> seen; echo >> seen; exec sleep 60`, func(_ *events.TaskGroup, t *events.Task) {
		t.Templates = []events.Template{{DestPath: "local/v", EmbeddedTmpl: `{{ (nomadVar "app").v }}`}}
	})
	r := h.run(alloc("tpl3"), j)
	eventually(t, "the first attempt", func() bool { return taskFile(r, "seen") == "one\n" })
	src.PutVar("default", "app", map[string]string{"v": "two"})
	eventually(t, "the restart", func() bool { return taskFile(r, "seen") == "one\ntwo\n" })
	if !hasEvent(r, events.TaskEventRestartSignaled, "Template with change_mode restart re-rendered") ||
		!hasEvent(r, events.TaskEventRestarting, "Template with change_mode restart re-rendered") {
		t.Fatalf("events %+v", taskEvents(r))
	}
	if rec, _ := r.TaskRecord("main"); rec.State.State != events.TaskStateRunning || rec.State.Failed {
		t.Fatalf("task %+v", rec.State)
	}
}

// A re-render signals the task (change_mode signal) without restarting it.
func TestTemplateChangeSignalsTask(t *testing.T) {
	h := newExecHarness(t)
	src := templatetest.New()
	src.SetService("default", "api", events.ServiceRegistration{ID: "s1", Address: "10.0.0.1", Port: 80})
	h.src = src
	j := execJob(events.JobTypeService, `trap 'cat local/upstream >> got' HUP; echo ready > ready; while true; do sleep 0.05; done`,
		func(_ *events.TaskGroup, t *events.Task) {
			t.Templates = []events.Template{{DestPath: "local/upstream", ChangeMode: events.TemplateChangeSignal, ChangeSignal: "SIGHUP",
				EmbeddedTmpl: `{{ range nomadService "api" }}{{ .Address }}:{{ .Port }} {{ end }}`}}
		})
	r := h.run(alloc("tpl4"), j)
	eventually(t, "the task", func() bool { return taskFile(r, "ready") == "ready\n" })
	src.SetService("default", "api", events.ServiceRegistration{ID: "s1", Address: "10.0.0.1", Port: 80},
		events.ServiceRegistration{ID: "s2", Address: "10.0.0.2", Port: 81})
	eventually(t, "the signal", func() bool { return taskFile(r, "got") == "10.0.0.1:80 10.0.0.2:81 " })
	if rec, _ := r.TaskRecord("main"); rec.State.Restarts != 0 || !hasEvent(r, events.TaskEventSignaling, "Template re-rendered") {
		t.Fatalf("task %+v", rec.State)
	}
}

// A re-render runs the template's change_script beside the task, in its
// directory, through the exec driver; a failing one with fail_on_error
// kills the task.
func TestTemplateChangeScript(t *testing.T) {
	h := newExecHarness(t)
	src := templatetest.New()
	src.PutVar("default", "app", map[string]string{"v": "1"})
	h.src = src
	j := execJob(events.JobTypeService, `echo ready > ready; exec sleep 60`, func(_ *events.TaskGroup, t *events.Task) {
		t.Templates = []events.Template{
			{DestPath: "local/v", EmbeddedTmpl: `{{ (nomadVar "app").v }}`, ChangeMode: events.TemplateChangeScript,
				ChangeScript: &events.ChangeScript{Command: "/bin/sh", Args: []string{"-c", `cat local/v >> reloaded; [ "$(cat local/v)" != 3 ]`},
					FailOnError: true}},
		}
	})
	r := h.run(alloc("tpl5"), j)
	eventually(t, "the task", func() bool { return taskFile(r, "ready") == "ready\n" })
	src.PutVar("default", "app", map[string]string{"v": "2"})
	eventually(t, "the script", func() bool { return taskFile(r, "reloaded") == "2" })
	eventually(t, "its event", func() bool {
		return hasEvent(r, template.EventType, "Template ran script /bin/sh with exit code 0")
	})
	src.PutVar("default", "app", map[string]string{"v": "3"})
	u := waitDone(t, r)
	if !hasEvent(r, template.EventType, "Template script /bin/sh failed with exit code 1") || u.TaskStates["main"].State != events.TaskStateDead {
		t.Fatalf("events %+v", taskEvents(r))
	}
}

// After a client restart, the templates of a re-attached task render
// again and act on what changed meanwhile: the task restarts once.
func TestTemplateAfterClientRestart(t *testing.T) {
	h := newExecHarness(t)
	src := templatetest.New()
	src.PutVar("default", "app", map[string]string{"v": "one"})
	h.src = src
	j := execJob(events.JobTypeService, `cat local/v >> seen; echo >> seen; exec sleep 60`, func(_ *events.TaskGroup, t *events.Task) {
		t.Templates = []events.Template{{DestPath: "local/v", EmbeddedTmpl: `{{ (nomadVar "app").v }}`}}
	})
	r, err := allocrunner.New(allocrunner.Config{Alloc: alloc("tpl6"), Job: j, Drivers: map[string]driver.Driver{"exec": h.drv},
		Root: h.root, Store: h.store, Logger: quiet(), Node: h.node, Templates: h.src})
	if err != nil {
		t.Fatal(err)
	}
	stop := start(t, r)
	eventually(t, "the first attempt", func() bool { return taskFile(r, "seen") == "one\n" })
	stop() // the client goes away; the task keeps running

	recs, _, err := h.store.Allocs()
	if err != nil || len(recs) != 1 {
		t.Fatalf("stored %+v, %v", recs, err)
	}
	src.PutVar("default", "app", map[string]string{"v": "two"})
	r2, err := allocrunner.New(allocrunner.Config{Alloc: recs[0].Alloc, Restored: recs[0], Drivers: map[string]driver.Driver{"exec": h.drv},
		Root: h.root, Store: h.store, Logger: quiet(), Node: h.node, Templates: h.src})
	if err != nil {
		t.Fatal(err)
	}
	start(t, r2)
	eventually(t, "the restart", func() bool { return taskFile(r2, "seen") == "one\ntwo\n" })
	if rec, _ := r2.TaskRecord("main"); rec.State.Restarts != 1 {
		t.Fatalf("task %+v", rec.State)
	}
}

// A host volume is reachable at the mount's destination in the task
// directory.
func TestHostVolumeMount(t *testing.T) {
	h := newExecHarness(t)
	vol := t.TempDir()
	h.node.HostVolumes = map[string]*events.ClientHostVolume{"shared": {Name: "shared", Path: vol}}
	j := execJob(events.JobTypeBatch, `echo hi > data/f`, func(tg *events.TaskGroup, t *events.Task) {
		tg.Volumes = map[string]*events.VolumeRequest{"d": {Name: "d", Type: "host", Source: "shared"}}
		t.VolumeMounts = []events.VolumeMount{{Volume: "d", Destination: "/data"}}
	})
	r := h.run(alloc("vol1"), j)
	if u := waitDone(t, r); u.ClientStatus != events.AllocClientComplete {
		t.Fatalf("status %s: %+v", u.ClientStatus, taskEvents(r))
	}
	if b, err := os.ReadFile(filepath.Join(vol, "f")); err != nil || string(b) != "hi\n" {
		t.Fatalf("f = %q, %v", b, err)
	}

	// A volume the node does not have fails the task's setup.
	j2 := execJob(events.JobTypeBatch, `true`, func(tg *events.TaskGroup, t *events.Task) {
		tg.Volumes = map[string]*events.VolumeRequest{"d": {Name: "d", Type: "host", Source: "nope"}}
		t.VolumeMounts = []events.VolumeMount{{Volume: "d", Destination: "data"}}
	})
	r2 := h.run(alloc("vol2"), j2)
	if u := waitDone(t, r2); u.ClientStatus != events.AllocClientFailed || !hasEvent(r2, events.TaskEventSetupFailure, `volume "d": host volume "nope"`) {
		t.Fatalf("status %s: %+v", u.ClientStatus, taskEvents(r2))
	}
}
