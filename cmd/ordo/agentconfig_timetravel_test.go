package main

import (
	"strings"
	"testing"

	"github.com/ordoplane/ordo/history/timetravel"
)

// TestAgentFileTimeTravel reads the time_travel block into
// agent.Config.TimeTravel: every attribute and the defaults of those
// left out.
func TestAgentFileTimeTravel(t *testing.T) {
	tests := []struct {
		name, src string
		want      timetravel.Options
	}{
		{"absent", ``, timetravel.Options{}},
		{"empty", "time_travel {}", timetravel.Options{}},
		{"every attribute", `time_travel {
  disable_versions = true
  versions_kept    = 500000
}`, timetravel.Options{DisableVersions: true, VersionsKept: 500000}},
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
	f, err := parseAgentFile("agent.json", []byte(`{"time_travel": {"versions_kept": 7, "disable_versions": false}}`))
	if err != nil {
		t.Fatal(err)
	}
	s, err := mergeAgentConfig(agentFlags{}, func(string) bool { return false }, f)
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Config.TimeTravel; got.VersionsKept != 7 || got.DisableVersions {
		t.Errorf("JSON: %+v", got)
	}
}

// TestAgentFileTimeTravelErrors: a bad value names the attribute and the
// file; an attribute of the removed checkpoints, redo log and cache is
// refused by name, saying it was removed.
func TestAgentFileTimeTravelErrors(t *testing.T) {
	removed := "removed: every past index is now read from the versions store"
	tests := []struct{ name, src, want string }{
		{"versions kept negative", `time_travel { versions_kept = -1 }`, "time_travel.versions_kept in agent.hcl: -1 must not be negative (0 keeps every version)"},
		{"unknown attribute", `time_travel { versions_kep = 10 }`, `An argument named "versions_kep" is not expected here`},
		{"wrong type", `time_travel { disable_versions = "maybe" }`, "agent.hcl:1"},
		{"duplicate block", "time_travel {}\ntime_travel {}", "Duplicate time_travel block"},
		{"checkpoint_every", `time_travel { checkpoint_every = 10 }`, "time_travel.checkpoint_every in agent.hcl: " + removed},
		{"checkpoint_min_interval", `time_travel { checkpoint_min_interval = "10s" }`, "time_travel.checkpoint_min_interval in agent.hcl: " + removed},
		{"checkpoints_kept", `time_travel { checkpoints_kept = 3 }`, "time_travel.checkpoints_kept in agent.hcl: " + removed},
		{"sparse_checkpoints_kept", `time_travel { sparse_checkpoints_kept = 0 }`, "time_travel.sparse_checkpoints_kept in agent.hcl: " + removed},
		{"cache_size", `time_travel { cache_size = 4 }`, "time_travel.cache_size in agent.hcl: " + removed},
		{"disable_checkpoints", `time_travel { disable_checkpoints = true }`, "time_travel.disable_checkpoints in agent.hcl: " + removed},
		{"disable_redo", `time_travel { disable_redo = false }`, "time_travel.disable_redo in agent.hcl: " + removed},
		{"several", "time_travel {\n cache_size = 4\n disable_redo = true\n}", "delete cache_size, disable_redo"},
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
	// A JSON file is refused the same way.
	f, err := parseAgentFile("agent.json", []byte(`{"time_travel": {"checkpoint_every": 7}}`))
	if err == nil {
		_, err = mergeAgentConfig(agentFlags{}, func(string) bool { return false }, f)
	}
	if err == nil || !strings.Contains(err.Error(), "time_travel.checkpoint_every in agent.json: "+removed) {
		t.Errorf("JSON: err = %v", err)
	}
}
