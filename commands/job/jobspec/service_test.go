package jobspec_test

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"

	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/commands/job/jobspec"
	"github.com/ordoplane/ordo/events"
)

const servicesHCL = `job "j" {
  group "g" {
    network {
      port "http" {}
      port "admin" {
        static = 9000
      }
    }
    service {
      port        = "http"
      tags        = ["web", "${node.datacenter}"]
      canary_tags = ["canary"]
      meta {
        version = "${NOMAD_META_version}"
      }
      canary_meta {
        canary = "yes"
      }
      check_restart {
        limit = 3
        grace = "10s"
      }
      check {
        type     = "http"
        path     = "/health"
        interval = "10s"
        timeout  = "2s"
        method   = "POST"
        body     = "{}"
        header {
          Authorization = ["Basic x"]
          X-Many        = ["a", "b"]
        }
        initial_status = "passing"
        check_restart {
          limit = 5
        }
      }
      check {
        name                     = "tcp"
        type                     = "tcp"
        port                     = "admin"
        interval                 = "5s"
        timeout                  = "1s"
        address_mode             = "host"
        success_before_passing   = 2
        failures_before_critical = 3
        expose                   = true
      }
    }
    service {
      name         = "${JOB}-admin"
      port         = 9100
      provider     = "nomad"
      address_mode = "host"
      on_update    = "ignore_warnings"
      task         = "t"
      check {
        type    = "script"
        command = "/bin/check"
        args    = ["--quick"]
        interval = "30s"
        timeout  = "5s"
        check_restart {
          limit           = 2
          ignore_warnings = true
        }
      }
    }
    task "t" {
      driver = "exec"
      service {
        name    = "${BASE}"
        port    = "admin"
        address = "10.0.0.1"
        check {
          type     = "script"
          command  = "/bin/true"
          interval = "1s"
          timeout  = "1s"
          on_update = "ignore"
        }
      }
    }
  }
}`

func servicesNomad() *api.Job {
	return nomadJob(func(tg *api.TaskGroup, task *api.Task) {
		tg.Networks = []*api.NetworkResource{{
			ReservedPorts: []api.Port{{Label: "admin", Value: 9000}},
			DynamicPorts:  []api.Port{{Label: "http"}},
		}}
		tg.Services = []*api.Service{{
			PortLabel: "http", Tags: []string{"web", "${node.datacenter}"}, CanaryTags: []string{"canary"},
			Meta: map[string]string{"version": "${NOMAD_META_version}"}, CanaryMeta: map[string]string{"canary": "yes"},
			CheckRestart: &api.CheckRestart{Limit: 3, Grace: new(10 * time.Second)},
			Checks: []api.ServiceCheck{{
				Type: "http", Path: "/health", Interval: 10 * time.Second, Timeout: 2 * time.Second, Method: "POST",
				Body: "{}", Header: map[string][]string{"Authorization": {"Basic x"}, "X-Many": {"a", "b"}},
				InitialStatus: "passing", CheckRestart: &api.CheckRestart{Limit: 5},
			}, {
				Name: "tcp", Type: "tcp", PortLabel: "admin", Interval: 5 * time.Second, Timeout: time.Second,
				AddressMode: "host", SuccessBeforePassing: 2, FailuresBeforeCritical: 3, Expose: true,
			}},
		}, {
			Name: "${JOB}-admin", PortLabel: "9100", Provider: "nomad", AddressMode: "host", OnUpdate: "ignore_warnings",
			TaskName: "t",
			Checks: []api.ServiceCheck{{
				Type: "script", Command: "/bin/check", Args: []string{"--quick"}, Interval: 30 * time.Second,
				Timeout: 5 * time.Second, CheckRestart: &api.CheckRestart{Limit: 2, IgnoreWarnings: true},
			}},
		}}
		task.Services = []*api.Service{{
			Name: "${BASE}", PortLabel: "admin", Address: "10.0.0.1",
			Checks: []api.ServiceCheck{{Type: "script", Command: "/bin/true", Interval: time.Second, Timeout: time.Second,
				OnUpdate: "ignore"}},
		}}
	})
}

// TestServiceBlocks parses every attribute of service, check and
// check_restart, at group and task level, from HCL and from Nomad's JSON,
// and checks Nomad's defaults: names, address mode, on_update (inherited
// by checks), provider, the task a task's services run in, an http
// check's method and protocol, and the service's check_restart merged
// under each check's.
func TestServiceBlocks(t *testing.T) {
	job := parseBoth(t, servicesHCL, servicesNomad())
	tg := job.TaskGroups[0]
	want := []events.Service{{
		Name: "j-g", PortLabel: "http", Tags: []string{"web", "${node.datacenter}"}, CanaryTags: []string{"canary"},
		AddressMode: "auto", Meta: map[string]string{"version": "${NOMAD_META_version}"},
		CanaryMeta: map[string]string{"canary": "yes"}, OnUpdate: "require_healthy", Provider: "nomad",
		Checks: []events.ServiceCheck{{
			Name: `service: "j-g" check`, Type: "http", Path: "/health", Protocol: "http", Interval: 10 * time.Second,
			Timeout: 2 * time.Second, Method: "POST", Body: "{}", InitialStatus: "passing", OnUpdate: "require_healthy",
			Header:       map[string][]string{"Authorization": {"Basic x"}, "X-Many": {"a", "b"}},
			CheckRestart: &events.CheckRestart{Limit: 5, Grace: 10 * time.Second},
		}, {
			Name: "tcp", Type: "tcp", PortLabel: "admin", Interval: 5 * time.Second, Timeout: time.Second,
			AddressMode: "host", SuccessBeforePassing: 2, FailuresBeforeCritical: 3, Expose: true,
			OnUpdate: "require_healthy", CheckRestart: &events.CheckRestart{Limit: 3, Grace: 10 * time.Second},
		}},
	}, {
		Name: "j-admin", PortLabel: "9100", Provider: "nomad", AddressMode: "host", OnUpdate: "ignore_warnings",
		TaskName: "t",
		Checks: []events.ServiceCheck{{
			Name: `service: "j-admin" check`, Type: "script", Command: "/bin/check", Args: []string{"--quick"},
			Interval: 30 * time.Second, Timeout: 5 * time.Second, TaskName: "t", OnUpdate: "ignore_warnings",
			CheckRestart: &events.CheckRestart{Limit: 2, Grace: time.Second, IgnoreWarnings: true},
		}},
	}}
	if !reflect.DeepEqual(tg.Services, want) {
		g, _ := json.MarshalIndent(tg.Services, "", "  ")
		w, _ := json.MarshalIndent(want, "", "  ")
		t.Fatalf("group services\n%s\nwant\n%s", g, w)
	}
	wantTask := []events.Service{{
		Name: "j-g-t", PortLabel: "admin", Address: "10.0.0.1", AddressMode: "auto", OnUpdate: "require_healthy",
		Provider: "nomad", TaskName: "t",
		Checks: []events.ServiceCheck{{
			Name: `service: "j-g-t" check`, Type: "script", Command: "/bin/true", Interval: time.Second,
			Timeout: time.Second, TaskName: "t", OnUpdate: "ignore",
		}},
	}}
	if got := tg.Tasks[0].Services; !reflect.DeepEqual(got, wantTask) {
		t.Fatalf("task services\n%+v\nwant\n%+v", got, wantTask)
	}
}

// TestServiceNameDefaults: a service's name defaults to
// <job>-<group>-<task> (a group's to <job>-<group>), with the job's name,
// and ${JOB}, ${TASKGROUP}, ${TASK} (for a group service, "group") and
// ${BASE} are replaced; other variables are kept for the client.
func TestServiceNameDefaults(t *testing.T) {
	src := `job "shop" {
  name = "store"
  group "api" {
    network {
      port "http" {}
    }
    service {
      port = "http"
    }
    service {
      name = "${TASKGROUP}-${TASK}-${BASE}"
      port = "http"
    }
    task "server" {
      driver = "exec"
      service {
        port = "http"
      }
      service {
        name = "${JOB}-${node.unique.name}"
        port = "http"
      }
    }
  }
}`
	job, err := jobspec.ParseHCL("spec.hcl", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	tg := job.TaskGroups[0]
	var names []string
	for _, s := range append(tg.Services, tg.Tasks[0].Services...) {
		names = append(names, s.Name)
	}
	want := []string{"store-api", "api-group-store-api-group", "store-api-server", "store-${node.unique.name}"}
	if !reflect.DeepEqual(names, want) {
		t.Fatalf("names %q, want %q", names, want)
	}
}

func TestUpdateHealthCheckDefault(t *testing.T) {
	withCheck := `    network {
      port "http" {}
    }
    service {
      port = "http"
      check {
        type     = "tcp"
        interval = "10s"
        timeout  = "2s"
      }
    }`
	taskCheck := `      service {
        port = "http"
        check {
          type     = "tcp"
          interval = "10s"
          timeout  = "2s"
        }
      }`
	net := "    network {\n      port \"http\" {}\n    }"
	for _, tc := range []struct {
		name, group, task, want string
	}{
		{"no services", "", "", "task_states"},
		{"service without check", net + "\n    service {\n      port = \"http\"\n    }", "", "task_states"},
		{"group check", withCheck, "", "checks"},
		{"task check", net, taskCheck, "checks"},
		{"explicit task_states", withCheck + "\n    update {\n      health_check = \"task_states\"\n    }", "", "task_states"},
		{"manual", withCheck + "\n    update {\n      health_check = \"manual\"\n    }", "", "manual"},
		{"explicit checks", "    update {\n      health_check = \"checks\"\n    }", "", "checks"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			job, err := jobspec.ParseHCL("spec.hcl", []byte(job2(tc.group, tc.task)))
			if err != nil {
				t.Fatal(err)
			}
			if got := job.TaskGroups[0].Update.HealthCheck; got != tc.want {
				t.Fatalf("health_check %q, want %q", got, tc.want)
			}
		})
	}
	// Set at job level, it holds for every group.
	src := strings.Replace(job2(withCheck, ""), `job "j" {`, "job \"j\" {\n  update {\n    health_check = \"task_states\"\n  }", 1)
	job, err := jobspec.ParseHCL("spec.hcl", []byte(src))
	if err != nil || job.TaskGroups[0].Update.HealthCheck != "task_states" {
		t.Fatalf("job-level health_check: %+v, %v", job.TaskGroups[0].Update, err)
	}
}

func TestServiceErrors(t *testing.T) {
	net := "    network {\n      port \"http\" {}\n    }\n"
	svc := func(body string) string { return job2(net+"    service {\n"+body+"\n    }", "") }
	chk := func(body string) string {
		return svc("      port = \"http\"\n      check {\n" + body + "\n      }")
	}
	// chkAt marks the check block itself, where a missing attribute is
	// reported.
	chkAt := func(body string) string {
		return svc("      port = \"http\"\n      check {  # <-\n" + body + "\n      }")
	}
	http := "        type = \"http\"\n        path = \"/\"\n        interval = \"10s\"\n        timeout = \"1s\"\n"
	checkErrCases(t, []errCase{
		{"consul", svc(`      provider = "consul"  # <-`), "job.group[g].service[0].provider", "Consul is not available"},
		{"other provider", svc(`      provider = "etcd"  # <-`), "job.group[g].service[0].provider", "not a service provider"},
		{"connect", svc("      connect {  # <-\n      }"), "job.group[g].service[0].connect", "Consul Connect"},
		{"bad name", svc(`      name = "web_api"  # <-`), "job.group[g].service[0].name", "not a valid service name"},
		{"long name", svc(`      name = "` + strings.Repeat("a", 64) + `"  # <-`), "job.group[g].service[0].name", "at most 63"},
		{"unknown port", svc(`      port = "https"  # <-`), "job.group[g].service[0].port", `nor a port of group "g"'s network (http)`},
		{"port out of range", svc(`      port = 70000  # <-`), "job.group[g].service[0].port", "not a port number"},
		{"address mode", svc(`      address_mode = "vip"  # <-`), "job.group[g].service[0].address_mode", "not one of auto"},
		{"address needs auto", svc("      address_mode = \"host\"\n      address = \"1.2.3.4\"  # <-"), "job.group[g].service[0].address", "address_mode \"auto\""},
		{"on_update", svc(`      on_update = "sometimes"  # <-`), "job.group[g].service[0].on_update", "not one of require_healthy"},
		{"unknown task", svc(`      task = "nope"  # <-`), "job.group[g].service[0].task", "not a task of group"},
		{"duplicate", job2(net+"    service {\n      port = \"http\"\n    }\n    service {  # <-\n      port = \"http\"\n    }", ""),
			"job.group[g].service[1].name", "declared twice"},
		{"check type missing", chkAt("        interval = \"10s\"\n        timeout = \"1s\""), "job.group[g].service[0].check[0].type", "needs a type"},
		{"check type grpc", chk("        type = \"grpc\"  # <-\n        interval = \"10s\"\n        timeout = \"1s\""), "job.group[g].service[0].check[0].type", "not one of http, tcp, script"},
		{"http path", chkAt("        type = \"http\"\n        interval = \"10s\"\n        timeout = \"1s\""), "job.group[g].service[0].check[0].path", "needs a path"},
		{"http absolute url", chk(strings.Replace(http, `path = "/"`, `path = "http://x/health"  # <-`, 1)), "job.group[g].service[0].check[0].path", "relative URL"},
		{"http protocol", chk(http + "        protocol = \"ftp\"  # <-"), "job.group[g].service[0].check[0].protocol", "http or https"},
		{"interval missing", chkAt("        type = \"tcp\"\n        timeout = \"1s\""), "job.group[g].service[0].check[0].interval", "needs an interval"},
		{"interval short", chk("        type = \"tcp\"\n        interval = \"500ms\"  # <-\n        timeout = \"1s\""), "job.group[g].service[0].check[0].interval", "less than the minimum 1s"},
		{"timeout missing", chkAt("        type = \"tcp\"\n        interval = \"10s\""), "job.group[g].service[0].check[0].timeout", "needs a timeout"},
		{"timeout negative", chk("        type = \"tcp\"\n        interval = \"10s\"\n        timeout = \"-1s\"  # <-"), "job.group[g].service[0].check[0].timeout", "positive"},
		{"tcp without port", job2(net+"    service {\n      check {  # <-\n        type = \"tcp\"\n        interval = \"10s\"\n        timeout = \"1s\"\n      }\n    }", ""),
			"job.group[g].service[0].check[0].port", "needs a port"},
		{"check unknown port", chk(http + "        port = \"nope\"  # <-"), "job.group[g].service[0].check[0].port", "not a port number nor a port"},
		{"script without command", chkAt("        type = \"script\"\n        task = \"t\"\n        interval = \"10s\"\n        timeout = \"1s\""),
			"job.group[g].service[0].check[0].command", "needs a command"},
		{"group script without task", chkAt("        type = \"script\"\n        command = \"/bin/true\"\n        interval = \"10s\"\n        timeout = \"1s\""),
			"job.group[g].service[0].check[0].task", "needs the task"},
		{"check unknown task", chk(http + "        task = \"x\"  # <-"), "job.group[g].service[0].check[0].task", "not a task of group"},
		{"check address mode auto", chk(http + "        address_mode = \"auto\"  # <-"), "job.group[g].service[0].check[0].address_mode", "not one of host, alloc, driver"},
		{"initial status", chk(http + "        initial_status = \"ok\"  # <-"), "job.group[g].service[0].check[0].initial_status", "not one of passing"},
		{"check on_update", chk(http + "        on_update = \"x\"  # <-"), "job.group[g].service[0].check[0].on_update", "not one of require_healthy"},
		{"duplicate check", svc("      port = \"http\"\n      check {\n" + http + "      }\n      check {  # <-\n" + http + "      }"),
			"job.group[g].service[0].check[1].name", "used twice"},
		{"check_restart limit", chk(http + "        check_restart {\n          limit = -1  # <-\n        }"), "job.group[g].service[0].check[0].check_restart.limit", "negative"},
		{"check_restart grace", chk(http + "        check_restart {\n          grace = \"-1s\"  # <-\n        }"), "job.group[g].service[0].check[0].check_restart.grace", "negative"},
		{"check_restart with ignore", chk(http + "        on_update = \"ignore\"  # <-\n        check_restart {\n          limit = 1\n        }"),
			"job.group[g].service[0].check[0].on_update", "cannot be used with check_restart"},
		{"ignore_warnings needs ignore_warnings", chk(http + "        on_update = \"ignore_warnings\"\n        check_restart {  # <-\n          limit = 1\n        }"),
			"job.group[g].service[0].check[0].check_restart.ignore_warnings", "must be true"},
		{"header not a list", chk(http + "        header {\n          X = \"a\"  # <-\n        }"), "job.group[g].service[0].check[0].header.X", "list of strings"},
		{"unknown check attribute", chk(http + "        grpc_service = \"x\"  # <-"), "job.group[g].service[0].check[0].grpc_service", "Unsupported argument"},
		{"task service other task", job2(net, "      service {\n        port = \"http\"\n        task = \"other\"  # <-\n      }"),
			"job.group[g].task[t].service[0].task", `runs in its task "t"`},
		{"task service unknown port", job2(net, "      service {\n        port = \"db\"  # <-\n      }"), "job.group[g].task[t].service[0].port", "not a port number nor a port"},
		{"no network", job2("    service {\n      port = \"http\"  # <-\n    }", ""), "job.group[g].service[0].port", "has no network ports"},
	})
}

func TestServiceJSONErrors(t *testing.T) {
	j := nomadJob(func(tg *api.TaskGroup, _ *api.Task) {
		tg.Services = []*api.Service{{Name: "web", Connect: &api.ConsulConnect{Native: true}}}
	})
	b, _ := json.Marshal(j)
	_, err := jobspec.ParseJSON(strings.NewReader(string(b)), commands.DefaultBodyLimit)
	var ve *commands.ValidationError
	if !errors.As(err, &ve) || ve.Field != "job.group[g].service[0].connect" {
		t.Fatalf("connect: %v", err)
	}
	j = nomadJob(func(tg *api.TaskGroup, _ *api.Task) {
		tg.Services = []*api.Service{{Name: "web", Provider: "consul"}}
	})
	b, _ = json.Marshal(j)
	_, err = jobspec.ParseJSON(strings.NewReader(string(b)), commands.DefaultBodyLimit)
	if !errors.As(err, &ve) || ve.Field != "job.group[g].service[0].provider" {
		t.Fatalf("consul: %v", err)
	}
}
