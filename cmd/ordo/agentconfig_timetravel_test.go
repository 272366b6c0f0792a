package main

import (
	"strings"
	"testing"
	"time"

	"github.com/ordoplane/ordo/history/timetravel"
)

// TestAgentFileTimeTravel reads the time_travel block into
// agent.Config.TimeTravel: every attribute, the defaults of those left
// out, and sparse_checkpoints_kept = 0 meaning none.
func TestAgentFileTimeTravel(t *testing.T) {
	tests := []struct {
		name, src string
		want      timetravel.Options
	}{
		{"absent", ``, timetravel.Options{}},
		{"empty", "time_travel {}", timetravel.Options{}},
		{"every attribute", `time_travel {
  checkpoint_every        = 5000
  checkpoint_min_interval = "1m30s"
  checkpoints_kept        = 20
  sparse_checkpoints_kept = 3
  cache_size              = 8
  disable_checkpoints     = true
  disable_redo            = true
  disable_versions        = true
  versions_kept           = 500000
}`, timetravel.Options{CheckpointEvery: 5000, CheckpointMinInterval: 90 * time.Second, CheckpointsKept: 20,
			SparseCheckpointsKept: 3, CacheSize: 8, DisableCheckpoints: true, DisableRedo: true, DisableVersions: true, VersionsKept: 500000}},
		{"no sparse tier", "time_travel {\n sparse_checkpoints_kept = 0\n}", timetravel.Options{SparseCheckpointsKept: -1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := parseAgentFile("agent.hcl", []byte(tt.src))
			if err != nil {
				t.Fatal(err)
			}
			s, err := mergeAgentConfig(agentFlags{}, func(string) bool { return false }, f)
			if err != nil {
				t.Fatal(err)
			}
			if s.Config.TimeTravel != tt.want {
				t.Errorf("TimeTravel = %+v, want %+v", s.Config.TimeTravel, tt.want)
			}
			if err := s.Config.TimeTravel.Validate(); err != nil {
				t.Errorf("the options do not validate: %v", err)
			}
		})
	}
	// JSON files take the same block.
	f, err := parseAgentFile("agent.json", []byte(`{"time_travel": {"checkpoint_every": 7, "cache_size": 2}}`))
	if err != nil {
		t.Fatal(err)
	}
	s, err := mergeAgentConfig(agentFlags{}, func(string) bool { return false }, f)
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Config.TimeTravel; got.CheckpointEvery != 7 || got.CacheSize != 2 {
		t.Errorf("JSON: %+v", got)
	}
}

// TestAgentFileTimeTravelErrors: a bad value names the attribute and the file.
func TestAgentFileTimeTravelErrors(t *testing.T) {
	tests := []struct{ name, src, want string }{
		{"zero every", `time_travel { checkpoint_every = 0 }`, "time_travel.checkpoint_every in agent.hcl: 0 must be at least 1"},
		{"negative every", `time_travel { checkpoint_every = -5 }`, "time_travel.checkpoint_every in agent.hcl: -5 must be at least 1"},
		{"interval not a duration", `time_travel { checkpoint_min_interval = "often" }`,
			`time_travel.checkpoint_min_interval in agent.hcl: "often" is not a duration`},
		{"interval zero", `time_travel { checkpoint_min_interval = "0s" }`,
			`time_travel.checkpoint_min_interval in agent.hcl: "0s" must be positive`},
		{"interval a number", `time_travel { checkpoint_min_interval = 10 }`,
			`time_travel.checkpoint_min_interval in agent.hcl: "10" is not a duration`},
		{"kept zero", `time_travel { checkpoints_kept = 0 }`, "time_travel.checkpoints_kept in agent.hcl: 0 must be at least 1"},
		{"sparse negative", `time_travel { sparse_checkpoints_kept = -1 }`,
			"time_travel.sparse_checkpoints_kept in agent.hcl: -1 must not be negative"},
		{"cache zero", `time_travel { cache_size = 0 }`, "time_travel.cache_size in agent.hcl: 0 must be at least 1"},
		{"versions kept negative", `time_travel { versions_kept = -1 }`, "time_travel.versions_kept in agent.hcl: -1 must not be negative (0 keeps every version)"},
		{"unknown attribute", `time_travel { checkpoint_evry = 10 }`, `An argument named "checkpoint_evry" is not expected here`},
		{"wrong type", `time_travel { disable_checkpoints = "maybe" }`, "agent.hcl:1"},
		{"duplicate block", "time_travel {}\ntime_travel {}", "Duplicate time_travel block"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := parseAgentFile("agent.hcl", []byte(tt.src))
			if err == nil {
				_, err = mergeAgentConfig(agentFlags{}, func(string) bool { return false }, f)
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want it to contain %q", err, tt.want)
			}
		})
	}
}
