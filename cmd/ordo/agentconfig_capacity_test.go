package main

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/ordoplane/ordo/cmd/agent"
	"github.com/ordoplane/ordo/processors/capacity"
)

// TestAgentFileCapacity reads the capacity and local_driver blocks into
// agent.Config: every attribute, defaults left to the processor, and
// errors that name the field and the file.
func TestAgentFileCapacity(t *testing.T) {
	f, err := parseAgentFile("agent.hcl", []byte(`
capacity {
  failure_backoff = "30s"
  pool "batch" {
    label        = "ubuntu-small"
    tenant       = "team-a"
    max_requests = 4
    idle_timeout = "5m"
  }
  pool "default" {
    label = "local-small"
  }
}
local_driver {
  binary        = "/usr/local/bin/ordo"
  dir           = "/var/lib/ordo/instances"
  servers       = ["127.0.0.1:4646"]
  task_drivers  = ["mock"]
  max_instances = 3
  boot_timeout  = "20s"
}
`))
	if err != nil {
		t.Fatal(err)
	}
	s, err := mergeAgentConfig(agentFlags{}, func(string) bool { return false }, f)
	if err != nil {
		t.Fatal(err)
	}
	wantCap := agent.CapacityConfig{FailureBackoff: 30 * time.Second, Pools: []capacity.Pool{
		{Name: "batch", Label: "ubuntu-small", Tenant: "team-a", MaxRequests: 4, IdleTimeout: 5 * time.Minute},
		{Name: "default", Label: "local-small"}}}
	if !reflect.DeepEqual(s.Config.Capacity, wantCap) {
		t.Errorf("capacity = %+v, want %+v", s.Config.Capacity, wantCap)
	}
	wantLocal := agent.LocalDriverConfig{Binary: "/usr/local/bin/ordo", Dir: "/var/lib/ordo/instances",
		Servers: []string{"127.0.0.1:4646"}, TaskDrivers: []string{"mock"}, MaxInstances: 3, BootTimeout: 20 * time.Second}
	if !reflect.DeepEqual(s.Config.LocalDriver, wantLocal) {
		t.Errorf("local_driver = %+v, want %+v", s.Config.LocalDriver, wantLocal)
	}

	for _, tc := range []struct{ src, want string }{
		{"capacity {\n pool \"batch\" {\n label = \"x\"\n idle_timeout = \"soon\"\n }\n}", `capacity.pool.batch.idle_timeout in agent.hcl: "soon"`},
		{"capacity {\n pool \"batch\" {\n label = \"x\"\n max_requests = 0\n }\n}", `capacity.pool.batch.max_requests in agent.hcl: 0 must be positive`},
		{"capacity {\n pool \"batch\" { label = \"x\" }\n pool \"batch\" { label = \"y\" }\n}", `pool "batch" mapped twice`},
		{"capacity {\n pool \"batch\" { label = \"\" }\n}", `pool "batch": label is required`},
		{"capacity {\n pool \"batch\" {}\n}", `"label" is required`},
		{`local_driver { max_instances = -1 }`, `local_driver.max_instances in agent.hcl: -1 must not be negative`},
	} {
		f, err := parseAgentFile("agent.hcl", []byte(tc.src))
		if err == nil {
			_, err = mergeAgentConfig(agentFlags{}, func(string) bool { return false }, f)
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want it to contain %q", tc.src, err, tc.want)
		}
	}
}
