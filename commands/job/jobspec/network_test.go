package jobspec_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/hashicorp/nomad/api"

	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/commands/job/jobspec"
	"github.com/ordoplane/ordo/events"
)

// errCase is a jobspec that must fail: on field, with a reason mentioning
// reason, at the line marked "# <-" (or, with no marker, anywhere in the
// file).
type errCase struct {
	name, src, field, reason string
}

func checkErrCases(t *testing.T, cases []errCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := jobspec.ParseHCL("spec.hcl", []byte(tc.src))
			var ve *commands.ValidationError
			if !errors.As(err, &ve) {
				t.Fatalf("err = %v (%T), want *commands.ValidationError\n%s", err, err, tc.src)
			}
			if ve.Field != tc.field {
				t.Errorf("field %q, want %q (%v)", ve.Field, tc.field, err)
			}
			if !strings.Contains(ve.Reason, tc.reason) {
				t.Errorf("reason %q does not mention %q", ve.Reason, tc.reason)
			}
			want := "spec.hcl:"
			if strings.Contains(tc.src, "# <-") {
				want = fmt.Sprintf("spec.hcl:%d:", marked(t, tc.src))
			}
			if !strings.HasPrefix(ve.Reason, want) {
				t.Errorf("reason %q does not start with %q", ve.Reason, want)
			}
		})
	}
}

// parseBoth parses a jobspec in HCL and the same job as Nomad's api.Job
// sends it (nomad job run -json, Jobs().Register), and checks that both
// give the same canonical job, which survives the event codec.
func parseBoth(t *testing.T, hcl string, nomad *api.Job) *events.Job {
	t.Helper()
	fromHCL, err := jobspec.ParseHCL("spec.hcl", []byte(hcl))
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(map[string]any{"Job": nomad})
	if err != nil {
		t.Fatal(err)
	}
	fromJSON, err := jobspec.ParseJSON(strings.NewReader(string(b)), commands.DefaultBodyLimit)
	if err != nil {
		t.Fatalf("Nomad's JSON: %v\n%s", err, b)
	}
	if !reflect.DeepEqual(fromHCL, fromJSON) {
		h, _ := json.MarshalIndent(fromHCL.TaskGroups, "", "  ")
		j, _ := json.MarshalIndent(fromJSON.TaskGroups, "", "  ")
		t.Fatalf("HCL and Nomad's JSON differ:\nHCL  %s\nJSON %s", h, j)
	}
	roundTrip(t, fromHCL)
	checkParsed(t, fromHCL, nil)
	return fromHCL
}

// nomadJob is a service job "j" with group "g" and exec task "t", as a
// nomad/api user builds it; edit adds the blocks under test.
func nomadJob(edit func(tg *api.TaskGroup, task *api.Task)) *api.Job {
	j := api.NewServiceJob("j", "j", "global", 50)
	tg := api.NewTaskGroup("g", 1)
	task := api.NewTask("t", "exec")
	edit(tg, task)
	tg.AddTask(task)
	j.AddTaskGroup(tg)
	return j
}

func TestNetworkBlock(t *testing.T) {
	const src = `job "j" {
  group "g" {
    network {
      mode = "host"
      port "http" {}
      port "admin" {
        static = 9000
      }
      port "metrics_1" {
        to           = 9102
        host_network = "private"
      }
      port "dns-udp" {
        static = 53
        to     = -1
      }
    }
    task "t" {
      driver = "exec"
    }
  }
}`
	nomad := nomadJob(func(tg *api.TaskGroup, _ *api.Task) {
		tg.Networks = []*api.NetworkResource{{
			Mode:          "host",
			ReservedPorts: []api.Port{{Label: "admin", Value: 9000}, {Label: "dns-udp", Value: 53, To: -1}},
			DynamicPorts:  []api.Port{{Label: "http"}, {Label: "metrics_1", To: 9102, HostNetwork: "private"}},
		}}
	})
	job := parseBoth(t, src, nomad)
	want := []events.NetworkResource{{
		Mode: events.NetworkModeHost,
		ReservedPorts: []events.Port{{Label: "admin", Value: 9000, HostNetwork: "default"},
			{Label: "dns-udp", Value: 53, To: -1, HostNetwork: "default"}},
		DynamicPorts: []events.Port{{Label: "http", HostNetwork: "default"},
			{Label: "metrics_1", To: 9102, HostNetwork: "private"}},
	}}
	if got := job.TaskGroups[0].Networks; !reflect.DeepEqual(got, want) {
		t.Fatalf("networks\n%+v\nwant\n%+v", got, want)
	}

	// mode defaults to host; a group with no network block has none.
	def, err := jobspec.ParseHCL("spec.hcl", []byte(job2("    network {\n      port \"http\" {}\n    }", "")))
	if err != nil {
		t.Fatal(err)
	}
	if got := def.TaskGroups[0].Networks; len(got) != 1 || got[0].Mode != "host" {
		t.Fatalf("default mode: %+v", got)
	}
	none, err := jobspec.ParseHCL("spec.hcl", []byte(job2("", "")))
	if err != nil || none.TaskGroups[0].Networks != nil {
		t.Fatalf("no network block: %+v, %v", none.TaskGroups[0].Networks, err)
	}

	// The same static port on two host networks is two addresses' ports.
	two := job2(`    network {
      port "a" {
        static = 8080
      }
      port "b" {
        static       = 8080
        host_network = "private"
      }
    }`, "")
	if _, err := jobspec.ParseHCL("spec.hcl", []byte(two)); err != nil {
		t.Fatalf("one static port on two host networks: %v", err)
	}
}

// job2 is a service job "j" whose group "g" holds group and whose task
// "t" (exec) holds task.
func job2(group, task string) string {
	return fmt.Sprintf(`job "j" {
  group "g" {
%s
    task "t" {
      driver = "exec"
%s
    }
  }
}
`, group, task)
}

func TestNetworkErrors(t *testing.T) {
	net := func(body string) string { return job2("    network {\n"+body+"\n    }", "") }
	checkErrCases(t, []errCase{
		{"bridge", net(`      mode = "bridge"  # <-`), "job.group[g].network.mode", `"bridge" networking is not offered`},
		{"cni", net(`      mode = "cni/mynet"  # <-`), "job.group[g].network.mode", `"cni/mynet" networking is not offered`},
		{"unknown mode", net(`      mode = "weird"  # <-`), "job.group[g].network.mode", "ordo offers \"host\" only"},
		{"hostname", net(`      hostname = "web"  # <-`), "job.group[g].network.hostname", "bridge networking"},
		{"dns", net("      dns {  # <-\n        servers = [\"1.1.1.1\"]\n      }"), "job.group[g].network.dns", "bridge networking"},
		{"two networks", job2("    network {}\n    network {}  # <-", ""), "job.group[g].network", "only one network block"},
		{"static zero", net("      port \"http\" {\n        static = 0  # <-\n      }"), "job.group[g].network.port[http].static", "not a port number"},
		{"static too big", net("      port \"http\" {\n        static = 65536  # <-\n      }"), "job.group[g].network.port[http].static", "not a port number"},
		{"static negative", net("      port \"http\" {\n        static = -1  # <-\n      }"), "job.group[g].network.port[http].static", "not a port number"},
		{"static not a number", net("      port \"http\" {\n        static = \"x\"  # <-\n      }"), "job.group[g].network.port[http].static", "whole number"},
		{"to too big", net("      port \"http\" {\n        to = 70000  # <-\n      }"), "job.group[g].network.port[http].to", "not a port"},
		{"same static twice", net("      port \"a\" {\n        static = 80\n      }\n      port \"b\" {\n        static = 80  # <-\n      }"),
			"job.group[g].network.port[b].static", `already asked for by port "a"`},
		{"label twice", net("      port \"a\" {}\n      port \"a\" {}  # <-"), "job.group[g].network.port[a]", "used twice"},
		{"label characters", net(`      port "a.b" {}  # <-`), "job.group[g].network.port[a.b]", "letters, digits, underscores"},
		{"label env clash", net("      port \"a_b\" {}\n      port \"a-b\" {}  # <-"), "job.group[g].network.port[a-b]", "both become NOMAD_PORT_a_b"},
		{"unknown attribute", net(`      device = "eth0"  # <-`), "job.group[g].network.device", "Unsupported argument"},
		{"task-level network", job2("", "      resources {\n        network {  # <-\n          mbits = 10\n        }\n      }"),
			"job.group[g].task[t].resources.network", "write it in the group"},
	})
}

func TestNetworkJSONErrors(t *testing.T) {
	for _, tc := range []struct{ name, field, reason string }{
		{"bridge", "job.group[g].network.mode", "not offered"},
		{"dns", "job.group[g].network.dns", "bridge networking"},
		{"dynamic value", "job.group[g].network.port[http]", "chosen by the scheduler"},
		{"two", "job.group[g].network", "one network block"},
		{"task network", "job.group[g].task[t].resources.network", "group"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			j := nomadJob(func(tg *api.TaskGroup, task *api.Task) {
				n := &api.NetworkResource{DynamicPorts: []api.Port{{Label: "http"}}}
				tg.Networks = []*api.NetworkResource{n}
				switch tc.name {
				case "bridge":
					n.Mode = "bridge"
				case "dns":
					n.DNS = &api.DNSConfig{Servers: []string{"1.1.1.1"}}
				case "dynamic value":
					n.DynamicPorts[0].Value = 20001
				case "two":
					tg.Networks = append(tg.Networks, &api.NetworkResource{})
				case "task network":
					task.Resources = &api.Resources{Networks: []*api.NetworkResource{{MBits: new(10)}}}
				}
			})
			b, _ := json.Marshal(j)
			_, err := jobspec.ParseJSON(strings.NewReader(string(b)), commands.DefaultBodyLimit)
			var ve *commands.ValidationError
			if !errors.As(err, &ve) || ve.Field != tc.field || !strings.Contains(ve.Reason, tc.reason) {
				t.Fatalf("err = %v, want %s: …%s…", err, tc.field, tc.reason)
			}
		})
	}
}
