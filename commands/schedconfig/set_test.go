package schedconfig_test

import (
	"errors"
	"testing"
	"time"

	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/commands/commandstest"
	"github.com/ordoplane/ordo/commands/schedconfig"
	"github.com/ordoplane/ordo/events"
	projsched "github.com/ordoplane/ordo/projections/schedconfig"
)

func TestSetWithCAS(t *testing.T) {
	c := commandstest.NewCluster(t)
	if got, err := projsched.Get(c.View()); err != nil || got.Algorithm() != "binpack" || got.ModifyIndex != 0 {
		t.Fatalf("default = %+v, %v", got, err)
	}
	set := func(cmd schedconfig.Set) (commands.Decision, error) {
		if err := cmd.Validate(); err != nil {
			return commands.Decision{}, err
		}
		return cmd.Decide(c.View(), time.Unix(1, 0), commandstest.SequentialIDs())
	}
	dec, err := set(schedconfig.Set{Config: events.SchedulerConfig{Algorithm: "spread", RejectJobRegistration: true}, CAS: true})
	if err != nil {
		t.Fatal(err)
	}
	if res := c.Apply(dec); res.Err != nil {
		t.Fatal(res.Err)
	}
	got, _ := projsched.Get(c.View())
	if got.Algorithm() != "spread" || !got.RejectJobRegistration || got.ModifyIndex != 1 {
		t.Fatalf("after set = %+v", got)
	}
	// Two writers at index 1: the second loses at apply.
	a, err := set(schedconfig.Set{Config: events.SchedulerConfig{}, CAS: true, Index: 1})
	if err != nil {
		t.Fatal(err)
	}
	b, err := set(schedconfig.Set{Config: events.SchedulerConfig{Algorithm: "spread"}, CAS: true, Index: 1})
	if err != nil {
		t.Fatal(err)
	}
	if res := c.Apply(a); res.Err != nil {
		t.Fatal(res.Err)
	}
	if res := c.Apply(b); res.Err == nil {
		t.Fatal("a stale check-and-set applied")
	}
	if got, _ := projsched.Get(c.View()); got.Algorithm() != "binpack" || got.RejectJobRegistration {
		t.Fatalf("after the race = %+v", got)
	}
	if _, err := set(schedconfig.Set{CAS: true, Index: 1}); !errors.As(err, new(*commands.ConflictError)) {
		t.Fatalf("stale cas decided: %v", err)
	}
	if _, err := set(schedconfig.Set{Config: events.SchedulerConfig{Algorithm: "random"}}); !errors.As(err, new(*commands.ValidationError)) {
		t.Fatalf("bad algorithm: %v", err)
	}
}

func TestSetAutopilot(t *testing.T) {
	c := commandstest.NewCluster(t)
	if got, err := projsched.GetAutopilot(c.View()); err != nil || got != nil {
		t.Fatalf("before any set = %+v, %v; want none (the agents' own settings)", got, err)
	}
	if err := (schedconfig.SetAutopilot{Config: events.AutopilotConfig{LastContactThreshold: -time.Second}}).Validate(); !errors.As(err, new(*commands.ValidationError)) {
		t.Fatalf("negative threshold: %v", err)
	}
	cmd := schedconfig.SetAutopilot{Config: events.AutopilotConfig{CleanupDeadServers: true, MaxTrailingLogs: 777, MinQuorum: 3}}
	dec, err := cmd.Decide(c.View(), time.Unix(1, 0), commandstest.SequentialIDs())
	if err != nil {
		t.Fatal(err)
	}
	if res := c.Apply(dec); res.Err != nil {
		t.Fatal(res.Err)
	}
	got, err := projsched.GetAutopilot(c.View())
	if err != nil || got == nil || got.AutopilotConfig != cmd.Config || got.ModifyIndex != 1 {
		t.Fatalf("after set = %+v, %v", got, err)
	}
	// The scheduler configuration is another row.
	if s, _ := projsched.Get(c.View()); s.ModifyIndex != 0 {
		t.Fatalf("scheduler configuration changed: %+v", s)
	}
}
