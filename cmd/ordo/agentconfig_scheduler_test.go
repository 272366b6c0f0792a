package main

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ordoplane/ordo/cmd/agent"
)

// TestPlanRejectionTrackerBlock: Nomad's server.plan_rejection_tracker
// block, in HCL and JSON agent files, reaches the agent and shows in
// /v1/agent/self as it runs; bad values are errors naming the field.
func TestPlanRejectionTrackerBlock(t *testing.T) {
	hcl := "region = \"eu\"\ndatacenter = \"fra1\"\nserver {\n  plan_rejection_tracker {\n    enabled = true\n    node_threshold = 100\n    node_window = \"5m\"\n  }\n}\n"
	js := `{"region": "eu", "datacenter": "fra1", "server": {"plan_rejection_tracker": {"enabled": true, "node_threshold": 100, "node_window": "5m"}}}`
	for name, src := range map[string]string{"agent.hcl": hcl, "agent.json": js} {
		f, err := loadAgentFile(writeFile(t, name, src))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var c agent.Config
		if err := f.applyTo(&c); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		want := agent.PlanRejectionTracker{Enabled: true, NodeThreshold: 100, NodeWindow: 5 * time.Minute}
		if c.Scheduler.PlanRejectionTracker != want || c.Region != "eu" || c.Datacenter != "fra1" {
			t.Fatalf("%s: tracker %+v region %q datacenter %q", name, c.Scheduler.PlanRejectionTracker, c.Region, c.Datacenter)
		}
	}
	for src, field := range map[string]string{
		"server {\n plan_rejection_tracker {\n node_threshold = 0\n }\n}\n":     "node_threshold",
		"server {\n plan_rejection_tracker {\n node_window = \"soon\"\n }\n}\n": "node_window",
		"server {\n plan_rejection_tracker {\n node_rate = 1\n }\n}\n":          "node_rate",
		"server {\n rejection_tracker = true\n}\n":                              "rejection_tracker",
	} {
		f, err := loadAgentFile(writeFile(t, "agent.hcl", src))
		if err == nil {
			err = f.applyTo(&agent.Config{})
		}
		if err == nil || !strings.Contains(err.Error(), field) {
			t.Errorf("%q: err = %v, want one naming %s", src, err, field)
		}
	}

	// End to end: the agent runs the tracker the file asks for and says so.
	resp, err := http.Get(agentFromFile(t, "agent.hcl", hcl) + "/v1/agent/self")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var self struct {
		Config struct {
			Region, Datacenter string
			Scheduler          struct{ PlanRejectionTracker agent.PlanRejectionTracker }
		} `json:"config"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&self); err != nil {
		t.Fatal(err)
	}
	got := self.Config.Scheduler.PlanRejectionTracker
	if !got.Enabled || got.NodeThreshold != 100 || got.NodeWindow != 5*time.Minute || self.Config.Region != "eu" || self.Config.Datacenter != "fra1" {
		t.Fatalf("/v1/agent/self: %+v", self.Config)
	}
}

// agentFromFile starts a dev agent configured by the agent file src
// (named name, HCL or JSON) and returns its API address.
func agentFromFile(t *testing.T, name, src string) string {
	t.Helper()
	f, err := loadAgentFile(writeFile(t, name, src))
	if err != nil {
		t.Fatal(err)
	}
	return startDevAgent(t, func(c *agent.Config) {
		if err := f.applyTo(c); err != nil {
			t.Fatal(err)
		}
	})
}
