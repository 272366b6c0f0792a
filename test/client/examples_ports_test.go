package client

import (
	"fmt"
	"strings"
	"testing"
)

// A task on the dev agent's client sees the ports the scheduler gave its
// allocation: NOMAD_PORT_<label> and NOMAD_ADDR_<label> in its
// environment, ${NOMAD_PORT_<label>} interpolated in its args.
func TestTaskSeesItsPorts(t *testing.T) {
	t.Parallel()
	c := devClient(t)
	job, err := c.Jobs().ParseHCL(`job "ports" {
  type = "batch"
  datacenters = ["dc1"]
  group "g" {
    network {
      port "http" {}
      port "admin-api" {}
    }
    task "t" {
      driver = "exec"
      config {
        command = "/bin/sh"
        args    = ["-c", "echo $NOMAD_PORT_http $NOMAD_ADDR_http ${NOMAD_PORT_http} $NOMAD_PORT_admin_api"]
      }
      resources {
        cpu    = 50
        memory = 32
      }
    }
  }
}`, true)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.Jobs().Register(job, nil); err != nil {
		t.Fatal(err)
	}
	a := completeOK(t, c, "ports")
	full, _, err := c.Allocations().Info(a.ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	ports := map[string]string{}
	for _, p := range full.AllocatedResources.Shared.Ports {
		ports[p.Label] = fmt.Sprint(p.Value)
		if p.Label == "http" {
			ports["addr"] = fmt.Sprintf("%s:%d", p.HostIP, p.Value)
		}
	}
	if ports["http"] == "" || ports["admin-api"] == "" {
		t.Fatalf("allocated ports %+v", full.AllocatedResources.Shared.Ports)
	}
	want := strings.Join([]string{ports["http"], ports["addr"], ports["http"], ports["admin-api"]}, " ") + "\n"
	if got := logs(t, c, a.ID, "t"); got != want {
		t.Fatalf("task printed %q, want %q", got, want)
	}
}
