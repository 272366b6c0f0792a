package jobspec_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/commands/job/jobspec"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/events/eventstest"
)

var rewrite = flag.Bool("rewrite", false, "rewrite testdata/*.golden.json from the docs/examples jobspecs")

const examples = "../../../docs/examples"

// notJobspecs are files in docs/examples that are other configuration
// (an agent file, a node pool spec).
var notJobspecs = map[string]bool{"agent.hcl": true, "nodepool.hcl": true}

func exampleFiles(t *testing.T) []string {
	t.Helper()
	var out []string
	for _, pat := range []string{"*.hcl", "*.json"} {
		m, err := filepath.Glob(filepath.Join(examples, pat))
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range m {
			if !notJobspecs[filepath.Base(p)] {
				out = append(out, p)
			}
		}
	}
	if len(out) < 4 {
		t.Fatalf("found only %v in %s", out, examples)
	}
	return out
}

func parseFile(t testing.TB, path string) (*events.Job, error) {
	t.Helper()
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if strings.HasSuffix(path, ".json") {
		return jobspec.ParseJSON(bytes.NewReader(src), commands.DefaultBodyLimit)
	}
	return jobspec.ParseHCL(filepath.Base(path), src)
}

// TestExamples parses every jobspec in docs/examples and compares the
// canonical job with testdata/<file>.golden.json (-rewrite regenerates).
func TestExamples(t *testing.T) {
	for _, path := range exampleFiles(t) {
		name := filepath.Base(path)
		t.Run(name, func(t *testing.T) {
			job, err := parseFile(t, path)
			if err != nil {
				t.Fatal(err)
			}
			got, err := json.MarshalIndent(job, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, '\n')
			golden := filepath.Join("testdata", name+".golden.json")
			if *rewrite {
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -rewrite)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s parses to\n%s\nwant (%s)\n%s", name, got, golden, want)
			}
			roundTrip(t, job)

			// A canonical job is a fixed point: its own JSON parses back to it.
			again, err := jobspec.ParseJSON(bytes.NewReader(got), 1<<20)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(again, job) {
				t.Errorf("re-parsing the canonical JSON gives\n%+v\nwant\n%+v", again, job)
			}
		})
	}
}

// roundTrip checks that job survives the event codec unchanged and
// re-encodes to the same bytes.
func roundTrip(t testing.TB, job *events.Job) {
	t.Helper()
	ev := eventstest.New(t, "ev-1", &events.JobRegistered{Job: *job})
	back, err := events.DecodeEvent(eventstest.EncodeEvent(t, &ev))
	if err != nil {
		t.Fatal(err)
	}
	p, err := events.Decode(back)
	if err != nil {
		t.Fatal(err)
	}
	got := p.(*events.JobRegistered).Job
	if !reflect.DeepEqual(&got, job) {
		t.Fatalf("round trip changed the job:\n got %#v\nwant %#v", got, *job)
	}
	again := eventstest.New(t, "ev-1", p)
	if !bytes.Equal(again.Payload, ev.Payload) {
		t.Fatalf("re-encoding differs:\n%x\n%x", again.Payload, ev.Payload)
	}
}

func TestHCLAndJSONCanonicaliseEqual(t *testing.T) {
	fromHCL, err := parseFile(t, filepath.Join(examples, "web.hcl"))
	if err != nil {
		t.Fatal(err)
	}
	fromJSON, err := parseFile(t, filepath.Join(examples, "web.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(fromHCL, fromJSON) {
		h, _ := json.MarshalIndent(fromHCL, "", "  ")
		j, _ := json.MarshalIndent(fromJSON, "", "  ")
		t.Fatalf("HCL and JSON differ:\nHCL  %s\nJSON %s", h, j)
	}

	// Driver config of every shape, both ways.
	hcl := `job "c" {
  group "g" {
    task "t" {
      driver = "docker"
      config {
        image   = "redis:7"
        ports   = ["db"]
        count   = 3
        ratio   = 0.5
        big     = 1e6
        debug   = true
        nothing = null
        labels  = { tier = "cache", n = 2 }
        nested  = [[1, "a"], {}]
        mount {
          type   = "bind"
          target = "/data"
        }
        mount {
          type = "tmpfs"
        }
      }
    }
  }
}`
	js := `{"Job": {"ID": "c", "TaskGroups": [{"Name": "g", "Tasks": [{"Name": "t", "Driver": "docker",
	  "Config": {"image": "redis:7", "ports": ["db"], "count": 3, "ratio": 0.5, "big": 1000000.0, "debug": true,
	    "nothing": null, "labels": {"tier": "cache", "n": 2}, "nested": [[1, "a"], {}],
	    "mount": [{"type": "bind", "target": "/data"}, {"type": "tmpfs"}]}}]}]}}`
	a, err := jobspec.ParseHCL("c.hcl", []byte(hcl))
	if err != nil {
		t.Fatal(err)
	}
	b, err := jobspec.ParseJSON(strings.NewReader(js), 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(a, b) {
		t.Fatalf("config differs:\nHCL  %#v\nJSON %#v", a.TaskGroups[0].Tasks[0].Config, b.TaskGroups[0].Tasks[0].Config)
	}
	if got := a.TaskGroups[0].Tasks[0].Config["count"]; got != int64(3) {
		t.Errorf("count = %#v, want int64(3)", got)
	}
	roundTrip(t, a)
}

func TestParseJSONBareAndWrapped(t *testing.T) {
	bare := `{"ID": "x", "TaskGroups": [{"Name": "g", "Tasks": [{"Name": "t", "Driver": "exec"}]}]}`
	// Nomad's JSON carries fields ordo does not model; they are ignored.
	wrapped := `{"Job": {"ID": "x", "Region": "global", "Affinities": null, "AllAtOnce": false,
	  "TaskGroups": [{"Name": "g", "Count": null, "Networks": [], "Tasks": [{"Name": "t", "Driver": "exec",
	    "Templates": null, "KillTimeout": null, "LogConfig": {"MaxFiles": 10}}]}]}, "EnforceIndex": false}`
	a, err := jobspec.ParseJSON(strings.NewReader(bare), 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	b, err := jobspec.ParseJSON(strings.NewReader(wrapped), 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(a, b) {
		t.Fatalf("bare %+v, wrapped %+v", a, b)
	}
	_, err = jobspec.ParseJSON(strings.NewReader(bare), 10)
	var tl *commands.TooLargeError
	if !errors.As(err, &tl) {
		t.Fatalf("over the limit: %v, want *TooLargeError", err)
	}
}

func TestDefaults(t *testing.T) {
	for _, typ := range []string{"service", "batch", "system", "sysbatch"} {
		t.Run(typ, func(t *testing.T) {
			src := fmt.Sprintf(`job "j" {
  type = %q
  group "g" {
    task "t" {
      driver = "exec"
    }
  }
}`, typ)
			job, err := jobspec.ParseHCL("j.hcl", []byte(src))
			if err != nil {
				t.Fatal(err)
			}
			if job.Name != "j" || job.Namespace != "default" || job.Priority != 50 || job.NodePool != "default" ||
				!reflect.DeepEqual(job.Datacenters, []string{"*"}) {
				t.Errorf("job defaults: %+v", job)
			}
			tg := job.TaskGroups[0]
			if tg.Count != 1 {
				t.Errorf("count %d, want 1", tg.Count)
			}
			task := tg.Tasks[0]
			if *task.Resources != (events.Resources{CPU: 100, MemoryMB: 300}) || task.KillTimeout != 5*time.Second {
				t.Errorf("task defaults: %+v %+v", task, task.Resources)
			}
			wantRestart := events.RestartPolicy{Attempts: 2, Interval: 30 * time.Minute, Delay: 15 * time.Second, Mode: "fail"}
			var wantResched *events.ReschedulePolicy
			var wantUpdate *events.UpdateStrategy
			switch typ {
			case "service":
				wantResched = &events.ReschedulePolicy{Delay: 30 * time.Second, DelayFunction: "exponential", MaxDelay: time.Hour, Unlimited: true}
				wantUpdate = &events.UpdateStrategy{Stagger: 30 * time.Second, MaxParallel: 1, HealthCheck: "checks",
					MinHealthyTime: 10 * time.Second, HealthyDeadline: 5 * time.Minute, ProgressDeadline: 10 * time.Minute}
			case "batch":
				wantRestart = events.RestartPolicy{Attempts: 3, Interval: 24 * time.Hour, Delay: 15 * time.Second, Mode: "fail"}
				wantResched = &events.ReschedulePolicy{Attempts: 1, Interval: 24 * time.Hour, Delay: 5 * time.Second, DelayFunction: "constant"}
			case "sysbatch":
				wantRestart = events.RestartPolicy{Attempts: 3, Interval: 24 * time.Hour, Delay: 15 * time.Second, Mode: "fail"}
			}
			if *tg.RestartPolicy != wantRestart {
				t.Errorf("restart %+v, want %+v", *tg.RestartPolicy, wantRestart)
			}
			if !reflect.DeepEqual(tg.ReschedulePolicy, wantResched) {
				t.Errorf("reschedule %+v, want %+v", tg.ReschedulePolicy, wantResched)
			}
			// A group without checks judges health by task states.
			var wantGroupUpdate *events.UpdateStrategy
			if wantUpdate != nil {
				u := *wantUpdate
				u.HealthCheck = "task_states"
				wantGroupUpdate = &u
			}
			if !reflect.DeepEqual(job.Update, wantUpdate) || !reflect.DeepEqual(tg.Update, wantGroupUpdate) {
				t.Errorf("update job %+v group %+v, want %+v and %+v", job.Update, tg.Update, wantUpdate, wantGroupUpdate)
			}
			roundTrip(t, job)
		})
	}
}

func TestMerging(t *testing.T) {
	src := `job "m" {
  update {
    max_parallel = 2
    canary       = 1
  }
  reschedule {
    attempts  = 4
    unlimited = false
    interval  = "2h"
  }
  group "g" {
    update {
      canary = 2
    }
    reschedule {
      delay = "1m"
      max_delay = "1h"
    }
    restart {
      attempts = 5
      interval = "1h"
    }
    task "t" {
      driver = "exec"
      resources {
        memory = 512
      }
    }
  }
}`
	job, err := jobspec.ParseHCL("m.hcl", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	tg := job.TaskGroups[0]
	if job.Update.MaxParallel != 2 || job.Update.Canary != 1 || job.Update.HealthyDeadline != 5*time.Minute {
		t.Errorf("job update %+v", job.Update)
	}
	if tg.Update.MaxParallel != 2 || tg.Update.Canary != 2 || tg.Update.MinHealthyTime != 10*time.Second {
		t.Errorf("group update %+v: want the job's merged with the group's", tg.Update)
	}
	want := events.ReschedulePolicy{Attempts: 4, Interval: 2 * time.Hour, Delay: time.Minute,
		DelayFunction: "exponential", MaxDelay: time.Hour}
	if *tg.ReschedulePolicy != want {
		t.Errorf("reschedule %+v, want %+v", *tg.ReschedulePolicy, want)
	}
	if *tg.RestartPolicy != (events.RestartPolicy{Attempts: 5, Interval: time.Hour, Delay: 15 * time.Second, Mode: "fail"}) {
		t.Errorf("restart %+v", *tg.RestartPolicy)
	}
	if *tg.Tasks[0].Resources != (events.Resources{CPU: 100, MemoryMB: 512}) {
		t.Errorf("resources %+v", *tg.Tasks[0].Resources)
	}
}

func TestRuntimeInterpolationKept(t *testing.T) {
	src := `job "r" {
  constraint {
    attribute = "${attr.kernel.name}"
    value     = "linux"
  }
  constraint {
    distinct_property = "${meta.rack}"
    value             = "2"
  }
  constraint {
    attribute = "${attr.os.version}"
    version   = ">= 22.04"
  }
  constraint {
    distinct_hosts = true
  }
  group "g" {
    task "t" {
      driver = "exec"
      config {
        command = "${NOMAD_TASK_DIR}/run.sh"
        args    = ["--node=${node.unique.name}", "--home=${env["HOME"]}", "$${literal}", <<EOT
on ${attr.unique.hostname}
EOT
        ]
      }
      env {
        DC = "${node.datacenter}"
      }
    }
  }
}`
	job, err := jobspec.ParseHCL("r.hcl", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	wantC := []events.Constraint{
		{LTarget: "${attr.kernel.name}", RTarget: "linux", Operand: "="},
		{LTarget: "${meta.rack}", RTarget: "2", Operand: "distinct_property"},
		{LTarget: "${attr.os.version}", RTarget: ">= 22.04", Operand: "version"},
		{RTarget: "true", Operand: "distinct_hosts"},
	}
	if !reflect.DeepEqual(job.Constraints, wantC) {
		t.Errorf("constraints %+v", job.Constraints)
	}
	task := job.TaskGroups[0].Tasks[0]
	wantCfg := events.TaskConfig{
		"command": "${NOMAD_TASK_DIR}/run.sh",
		"args":    []any{"--node=${node.unique.name}", `--home=${env["HOME"]}`, "${literal}", "on ${attr.unique.hostname}\n"},
	}
	if !reflect.DeepEqual(task.Config, wantCfg) {
		t.Errorf("config %#v", task.Config)
	}
	if task.Env["DC"] != "${node.datacenter}" {
		t.Errorf("env %v", task.Env)
	}
}

// marked returns the 1-based line of src holding the marker "# <-".
func marked(t *testing.T, src string) int {
	t.Helper()
	for i, l := range strings.Split(src, "\n") {
		if strings.Contains(l, "# <-") {
			return i + 1
		}
	}
	t.Fatalf("no # <- marker in\n%s", src)
	return 0
}

// job wraps a group body in a minimal valid job of type typ.
func job(typ, jobBody, groupBody, taskBody string) string {
	return fmt.Sprintf(`job "j" {
  type = %q
%s
  group "g" {
%s
    task "t" {
      driver = "exec"
%s
    }
  }
}
`, typ, jobBody, groupBody, taskBody)
}

func TestParseHCLErrors(t *testing.T) {
	for _, tc := range []struct {
		name, src, field, reason string
	}{
		{"syntax", "job \"j\" {\n  type =  # <-\n}\n", "job", "Invalid expression"},
		{"no job", "# nothing\n", "job", "needs a job block"},
		{"not utf-8", "job \"j\" {\n  meta {\n    \xe3\xe3 = \"\"  # <-\n  }\n}\n", "job", "not valid UTF-8"},
		{"two jobs", job("service", "", "", "") + `job "k" {}  # <-`, "job", "only one job block"},
		{"top-level attribute", "x = 1  # <-\n" + job("service", "", "", ""), "job.x", "Unsupported argument"},
		{"variable block", "variable \"v\" {}  # <-\n" + job("service", "", "", ""), "job.variable", "Unsupported block type"},
		{"empty id", "job \"\" {  # <-\n  group \"g\" {\n    task \"t\" {\n      driver = \"exec\"\n    }\n  }\n}\n", "job.id", "must not be empty"},
		{"id with space", "job \"my job\" {  # <-\n  group \"g\" {\n    task \"t\" {\n      driver = \"exec\"\n    }\n  }\n}\n", "job.id", "space"},
		{"bad type", job("daemon", "", "", "") + "", "job.type", "not one of"},
		{"priority range", job("service", "  priority = 101  # <-", "", ""), "job.priority", "between 1 and 100"},
		{"priority fraction", job("service", "  priority = 1.5  # <-", "", ""), "job.priority", "whole number"},
		{"priority type", job("service", "  priority = \"high\"  # <-", "", ""), "job.priority", "whole number"},
		{"bad namespace", job("service", "  namespace = \"a b\"  # <-", "", ""), "job.namespace", "letters"},
		{"datacenters type", job("service", "  datacenters = \"dc1\"  # <-", "", ""), "job.datacenters", "list of strings"},
		{"empty datacenter", job("service", "  datacenters = [\"\"]  # <-", "", ""), "job.datacenters", "empty"},
		{"unknown job attribute", job("service", "  all_at_once = true  # <-", "", ""), "job.all_at_once", "Unsupported argument"},
		{"no groups", "job \"j\" {  # <-\n}\n", "job.group", "at least one group"},
		{"duplicate group", "job \"j\" {\n  group \"g\" {\n    task \"t\" {\n      driver = \"exec\"\n    }\n  }\n  group \"g\" {  # <-\n  }\n}\n",
			"job.group[g]", "used twice"},
		{"group without label", "job \"j\" {\n  group {  # <-\n  }\n}\n", "job", "Missing name for group"},
		{"negative count", job("service", "", "    count = -1  # <-", ""), "job.group[g].count", "negative"},
		{"system count", job("system", "", "    count = 2  # <-", ""), "job.group[g].count", "count 2 > 1"},
		{"sysbatch count", job("sysbatch", "", "    count = 3  # <-", ""), "job.group[g].count", "count 3 > 1"},
		{"no tasks", "job \"j\" {\n  group \"g\" {  # <-\n  }\n}\n", "job.group[g].task", "at least one task"},
		{"duplicate task", "job \"j\" {\n  group \"g\" {\n    task \"t\" {\n      driver = \"exec\"\n    }\n    task \"t\" {  # <-\n    }\n  }\n}\n",
			"job.group[g].task[t]", "used twice"},
		{"no driver", "job \"j\" {\n  group \"g\" {\n    task \"t\" {  # <-\n    }\n  }\n}\n", "job.group[g].task[t].driver", "needs a driver"},
		{"slash in task", "job \"j\" {\n  group \"g\" {\n    task \"a/b\" {  # <-\n      driver = \"exec\"\n    }\n  }\n}\n", "job.group[g].task[a/b]", "slash"},
		{"memory too small", job("service", "", "", "      resources {\n        memory = 0  # <-\n      }"), "job.group[g].task[t].resources.memory", "minimum 10"},
		{"cpu negative", job("service", "", "", "      resources {\n        cpu = -5  # <-\n      }"), "job.group[g].task[t].resources.cpu", "minimum 1"},
		{"disk negative", job("service", "", "", "      resources {\n        disk = -1  # <-\n      }"), "job.group[g].task[t].resources.disk", "negative"},
		{"memory typo", job("service", "", "", "      resources {\n        memry = 64  # <-\n      }"), "job.group[g].task[t].resources.memry", "Did you mean \"memory\""},
		{"two resources", job("service", "", "", "      resources {}\n      resources {}  # <-"), "job.group[g].task[t].resources", "only one resources block"},
		{"bad duration", job("service", "", "", "      kill_timeout = \"ten\"  # <-"), "job.group[g].task[t].kill_timeout", "duration"},
		{"negative shutdown delay", job("service", "", "", "      shutdown_delay = \"-1s\"  # <-"), "job.group[g].task[t].shutdown_delay", "negative"},
		{"unknown task block", job("service", "", "", "      artifact {}  # <-"), "job.group[g].task[t].artifact", "Unsupported block type"},
		{"env not string", job("service", "", "", "      env {\n        A = [1]  # <-\n      }"), "job.group[g].task[t].env.A", "a string"},
		{"env block nested", job("service", "", "", "      env {\n        x {}  # <-\n      }"), "job.group[g].task[t].env", "Unexpected \"x\" block"},
		{"config label", job("service", "", "", "      config {\n        mount \"a\" {}  # <-\n      }"), "job.group[g].task[t].config.mount", "no labels"},
		{"config function", job("service", "", "", "      config {\n        x = upper(\"a\")  # <-\n      }"), "job.group[g].task[t].config.x", "Function calls not allowed"},
		{"unknown variable", job("service", "", "", "      config {\n        x = \"${var.port}\"  # <-\n      }"), "job.group[g].task[t].config.x", "jobspec variables"},
		{"periodic service", job("service", "  periodic {  # <-\n    crons = [\"* * * * *\"]\n  }", "", ""), "job.periodic", "only batch and sysbatch"},
		{"periodic system", job("system", "  periodic {  # <-\n    crons = [\"* * * * *\"]\n  }", "", ""), "job.periodic", "only batch and sysbatch"},
		{"periodic without cron", job("batch", "  periodic {  # <-\n  }", "", ""), "job.periodic.crons", "needs a cron"},
		{"periodic bad cron", job("batch", "  periodic {\n    cron = \"every day\"  # <-\n  }", "", ""), "job.periodic.cron", "fields"},
		{"periodic cron and crons", job("batch", "  periodic {\n    cron = \"@daily\"\n    crons = [\"@hourly\"]  # <-\n  }", "", ""), "job.periodic.crons", "not both"},
		{"periodic zone", job("batch", "  periodic {\n    crons = [\"@daily\"]\n    time_zone = \"Mars/Olympus\"  # <-\n  }", "", ""), "job.periodic.time_zone", "not a time zone"},
		{"parameterized service", job("service", "  parameterized {  # <-\n  }", "", ""), "job.parameterized", "only batch and sysbatch"},
		{"parameterized payload", job("batch", "  parameterized {\n    payload = \"maybe\"  # <-\n  }", "", ""), "job.parameterized.payload", "not one of"},
		{"update on batch", job("batch", "  update {  # <-\n  }", "", ""), "job.update", "do not take an update block"},
		{"group update on sysbatch", job("sysbatch", "", "    update {  # <-\n    }", ""), "job.group[g].update", "do not take an update block"},
		{"update health check", job("service", "  update {\n    health_check = \"pings\"  # <-\n  }", "", ""), "job.update.health_check", "not one of"},
		{"update min healthy", job("service", "", "    update {\n      min_healthy_time = \"10m\"  # <-\n    }", ""), "job.group[g].update.min_healthy_time", "less than healthy_deadline"},
		{"update auto promote", job("service", "  update {\n    auto_promote = true  # <-\n  }", "", ""), "job.update.auto_promote", "canary"},
		{"update negative parallel", job("service", "  update {\n    max_parallel = -1  # <-\n  }", "", ""), "job.update.max_parallel", "negative"},
		{"restart mode", job("service", "", "    restart {\n      mode = \"retry\"  # <-\n    }", ""), "job.group[g].restart.mode", "fail or delay"},
		{"restart interval", job("service", "", "    restart {\n      attempts = 10\n      interval = \"1m\"  # <-\n    }", ""), "job.group[g].restart.interval", "do not fit"},
		{"restart attempts", job("service", "", "    restart {\n      attempts = -1  # <-\n    }", ""), "job.group[g].restart.attempts", "negative"},
		{"reschedule system", job("system", "", "    reschedule {  # <-\n    }", ""), "job.group[g].reschedule", "not rescheduled"},
		// Inherited from the job: the group is where it applies.
		{"reschedule job-level sysbatch", job("sysbatch", "  reschedule {}", "", "") + "# group on line 4", "job.group[g].reschedule", "not rescheduled"},
		{"reschedule delay", job("batch", "", "    reschedule {\n      delay = \"1s\"  # <-\n    }", ""), "job.group[g].reschedule.delay", "minimum 5s"},
		{"reschedule function", job("batch", "", "    reschedule {\n      delay_function = \"linear\"  # <-\n    }", ""), "job.group[g].reschedule.delay_function", "not one of"},
		{"reschedule max delay", job("batch", "", "    reschedule {  # <-\n      delay_function = \"fibonacci\"\n    }", ""), "job.group[g].reschedule.max_delay", "at least delay"},
		{"disconnect both", job("service", "", "    max_client_disconnect = \"1h\"  # <-\n    disconnect {\n      lost_after = \"1h\"\n    }", ""),
			"job.group[g].max_client_disconnect", "not both"},
		{"disconnect reconcile", job("service", "", "    disconnect {\n      reconcile = \"newest\"  # <-\n    }", ""), "job.group[g].disconnect.reconcile", "not one of"},
		{"disconnect negative", job("service", "", "    disconnect {\n      lost_after = \"-1m\"  # <-\n    }", ""), "job.group[g].disconnect.lost_after", "negative"},
		{"two disconnects", job("service", "", "    disconnect {}\n    disconnect {}  # <-", ""), "job.group[g].disconnect", "only one disconnect block"},
		{"constraint operator", job("service", "  constraint {\n    attribute = \"a\"\n    operator = \"~\"  # <-\n    value = \"b\"\n  }", "", ""), "job.constraint[0].operator", "not a constraint operator"},
		{"constraint no value", job("service", "", "    constraint {  # <-\n      attribute = \"${attr.x}\"\n    }", ""), "job.group[g].constraint[0].value", "needs a value"},
		{"constraint regexp", job("service", "  constraint {\n    distinct_hosts = true\n  }\n  constraint {\n    attribute = \"a\"\n    regexp = \"(\"  # <-\n  }", "", ""), "job.constraint[1].value", "bad regexp"},
		{"constraint shorthand and operator", job("service", "  constraint {\n    operator = \"=\"\n    regexp = \"x\"  # <-\n  }", "", ""), "job.constraint[0].regexp", "not both"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := jobspec.ParseHCL("spec.hcl", []byte(tc.src))
			var ve *commands.ValidationError
			if !errors.As(err, &ve) {
				t.Fatalf("err = %v (%T), want *commands.ValidationError", err, err)
			}
			if ve.Field != tc.field {
				t.Errorf("field %q, want %q (%v)", ve.Field, tc.field, err)
			}
			if !strings.Contains(ve.Reason, tc.reason) {
				t.Errorf("reason %q does not mention %q", ve.Reason, tc.reason)
			}
			line := 2 // the type attribute, for job(...) without a marker
			if strings.Contains(tc.src, "# group on line 4") {
				line = 4
			} else if strings.Contains(tc.src, "# <-") {
				line = marked(t, tc.src)
			} else if !strings.Contains(tc.src, "type =") {
				line = 1
			}
			if want := fmt.Sprintf("spec.hcl:%d:", line); !strings.HasPrefix(ve.Reason, want) {
				t.Errorf("reason %q does not start with %q", ve.Reason, want)
			}
		})
	}
}

func TestParseJSONErrors(t *testing.T) {
	const task = `{"Name": "t", "Driver": "exec"}`
	for _, tc := range []struct {
		name, src, field, reason string
	}{
		{"empty", ``, "body", "empty"},
		{"malformed", `{"Job": {`, "body", "malformed"},
		{"not an object", `[1]`, "body", "object"},
		{"null job", `{"Job": null}`, "Job", "missing"},
		{"wrong type", `{"Job": {"ID": "x", "Priority": "high"}}`, "Priority", "int"},
		{"wrong nested type", `{"ID": "x", "TaskGroups": [{"Name": "g", "Count": "3"}]}`, "TaskGroups.Count", "int"},
		{"no id", `{"Job": {"TaskGroups": [{"Name": "g", "Tasks": [` + task + `]}]}}`, "job.id", "empty"},
		{"no groups", `{"Job": {"ID": "x"}}`, "job.group", "at least one"},
		{"null group", `{"Job": {"ID": "x", "TaskGroups": [null]}}`, "job.group[]", "name must not be empty"},
		{"bad type", `{"ID": "x", "Type": "cron", "TaskGroups": [{"Name": "g", "Tasks": [` + task + `]}]}`, "job.type", "not one of"},
		{"periodic service", `{"ID": "x", "Periodic": {"Spec": "@daily"}, "TaskGroups": [{"Name": "g", "Tasks": [` + task + `]}]}`, "job.periodic", "only batch"},
		{"resources", `{"ID": "x", "TaskGroups": [{"Name": "g", "Tasks": [{"Name": "t", "Driver": "exec", "Resources": {"CPU": 0}}]}]}`,
			"job.group[g].task[t].resources.cpu", "minimum"},
		{"duplicate tasks", `{"ID": "x", "TaskGroups": [{"Name": "g", "Tasks": [` + task + `,` + task + `]}]}`, "job.group[g].task[t]", "used twice"},
		{"duplicate groups", `{"ID": "x", "TaskGroups": [{"Name": "g", "Tasks": [` + task + `]}, {"Name": "g", "Tasks": [` + task + `]}]}`, "job.group[g]", "used twice"},
		{"disconnect both", `{"ID": "x", "TaskGroups": [{"Name": "g", "MaxClientDisconnect": 1000000000, "Disconnect": {"LostAfter": 1000000000}, "Tasks": [` + task + `]}]}`,
			"job.group[g].max_client_disconnect", "not both"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := jobspec.ParseJSON(strings.NewReader(tc.src), 1<<20)
			var ve *commands.ValidationError
			if !errors.As(err, &ve) {
				t.Fatalf("err = %v (%T), want *commands.ValidationError", err, err)
			}
			if ve.Field != tc.field || !strings.Contains(ve.Reason, tc.reason) {
				t.Errorf("got %q: %q, want %q mentioning %q", ve.Field, ve.Reason, tc.field, tc.reason)
			}
		})
	}
}

// TestValidateCanonicalSample checks Validate on a hand-built job and that
// each mutation is refused with the named field.
func TestValidate(t *testing.T) {
	base := func() *events.Job {
		j := eventstest.SampleJob()
		j.Update = nil
		j.TaskGroups[0].Update = nil
		j.TaskGroups[0].Migrate = nil
		j.TaskGroups[0].MaxClientDisconnect = 0
		j.Periodic.Spec = ""
		return &j
	}
	if err := jobspec.Validate(base()); err != nil {
		t.Fatalf("sample: %v", err)
	}
	for _, tc := range []struct {
		field  string
		mutate func(j *events.Job)
	}{
		{"job.id", func(j *events.Job) { *j = events.Job{} }},
		{"job.id", func(j *events.Job) { j.ID = "a\x00b" }},
		{"job.name", func(j *events.Job) { j.Name = "" }},
		{"job.priority", func(j *events.Job) { j.Priority = 0 }},
		{"job.node_pool", func(j *events.Job) { j.NodePool = "" }},
		{"job.datacenters", func(j *events.Job) { j.Datacenters = nil }},
		{"job.constraint[1].value", func(j *events.Job) { j.Constraints[1].RTarget = "maybe" }},
		{"job.group[api].task[server].resources", func(j *events.Job) { j.TaskGroups[0].Tasks[0].Resources = nil }},
		{"job.group[api].task[server].env", func(j *events.Job) { j.TaskGroups[0].Tasks[0].Env = map[string]string{"A=B": "c"} }},
		{"job.group[api].count", func(j *events.Job) { j.Type = events.JobTypeSysbatch; j.TaskGroups[0].ReschedulePolicy = nil }},
		{"job.group[api].task", func(j *events.Job) { j.TaskGroups[0].Tasks = nil }},
	} {
		t.Run(tc.field, func(t *testing.T) {
			j := base()
			tc.mutate(j)
			err := jobspec.Validate(j)
			var ve *commands.ValidationError
			if !errors.As(err, &ve) || ve.Field != tc.field {
				t.Fatalf("Validate = %v, want a ValidationError on %s", err, tc.field)
			}
		})
	}
	if err := jobspec.Validate(nil); err == nil {
		t.Error("Validate(nil) passed")
	}
}
