package jobspec_test

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/commands/job/jobspec"
	"github.com/ordoplane/ordo/events"
)

// TestMigrate parses migrate blocks: a job's block is merged into every
// group's, the defaults fill what neither sets, a group without either
// keeps a nil Migrate, and HCL and Nomad's API JSON agree.
func TestMigrate(t *testing.T) {
	src := `job "m" {
  migrate {
    max_parallel     = 2
    healthy_deadline = "3m"
  }
  group "a" {
    migrate {
      health_check     = "task_states"
      min_healthy_time = "5s"
    }
    task "t" {
      driver = "exec"
    }
  }
  group "b" {
    task "t" {
      driver = "exec"
    }
  }
}`
	job, err := jobspec.ParseHCL("m.hcl", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	wantA := &events.MigrateStrategy{MaxParallel: 2, HealthCheck: "task_states", MinHealthyTime: 5 * time.Second,
		HealthyDeadline: 3 * time.Minute}
	wantB := &events.MigrateStrategy{MaxParallel: 2, HealthCheck: "checks", MinHealthyTime: 10 * time.Second,
		HealthyDeadline: 3 * time.Minute}
	if got := job.TaskGroups[0].Migrate; !reflect.DeepEqual(got, wantA) {
		t.Errorf("group a migrate %+v, want %+v", got, wantA)
	}
	if got := job.TaskGroups[1].Migrate; !reflect.DeepEqual(got, wantB) {
		t.Errorf("group b migrate %+v, want %+v", got, wantB)
	}
	roundTrip(t, job)

	// The same in Nomad's API JSON.
	js := `{"Job":{"ID":"m","Migrate":{"MaxParallel":2,"HealthyDeadline":180000000000},"TaskGroups":[
	  {"Name":"a","Migrate":{"HealthCheck":"task_states","MinHealthyTime":5000000000},"Tasks":[{"Name":"t","Driver":"exec"}]},
	  {"Name":"b","Tasks":[{"Name":"t","Driver":"exec"}]}]}}`
	fromJSON, err := jobspec.ParseJSON(strings.NewReader(js), commands.DefaultBodyLimit)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(fromJSON, job) {
		t.Errorf("JSON parses to\n%+v\nwant\n%+v", fromJSON, job)
	}

	// A group with no migrate block anywhere keeps nil: the drainer's
	// default of one at a time.
	plain, err := jobspec.ParseHCL("p.hcl", []byte(`job "p" {
  group "g" {
    task "t" {
      driver = "exec"
    }
  }
}`))
	if err != nil {
		t.Fatal(err)
	}
	if tg := plain.TaskGroups[0]; tg.Migrate != nil || tg.MigrateMaxParallel() != 1 {
		t.Errorf("no migrate block: %+v, max parallel %d", tg.Migrate, tg.MigrateMaxParallel())
	}
}

func TestMigrateErrors(t *testing.T) {
	job := func(typ, jobBlock, groupBlock string) string {
		return `job "j" {
  type = "` + typ + `"
` + jobBlock + `
  group "g" {
` + groupBlock + `
    task "t" {
      driver = "exec"
    }
  }
}`
	}
	for _, tc := range []struct {
		name, src, field, reason string
	}{
		{"batch", job("batch", "", "    migrate {\n    }"), "job.group[g].migrate", "do not take a migrate block"},
		{"system at job level", job("system", "  migrate {\n  }", ""), "job.group[g].migrate", "do not take a migrate block"},
		{"health check", job("service", "", "    migrate {\n      health_check = \"manual\"\n    }"),
			"job.group[g].migrate.health_check", "not one of"},
		{"negative parallel", job("service", "", "    migrate {\n      max_parallel = -1\n    }"),
			"job.group[g].migrate.max_parallel", "negative"},
		{"min healthy", job("service", "", "    migrate {\n      min_healthy_time = \"10m\"\n    }"),
			"job.group[g].migrate.min_healthy_time", "less than healthy_deadline"},
		{"zero deadline", job("service", "", "    migrate {\n      healthy_deadline = \"0s\"\n      min_healthy_time = \"0s\"\n    }"),
			"job.group[g].migrate.healthy_deadline", "positive"},
		{"unknown attribute", job("service", "", "    migrate {\n      stagger = \"1s\"\n    }"),
			"job.group[g].migrate.stagger", "Unsupported argument"},
		{"two blocks", job("service", "", "    migrate {\n    }\n    migrate {\n    }"), "job.group[g].migrate", "only one"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := jobspec.ParseHCL("j.hcl", []byte(tc.src))
			var ve *commands.ValidationError
			if !errors.As(err, &ve) || ve.Field != tc.field || !strings.Contains(ve.Reason, tc.reason) {
				t.Fatalf("ParseHCL = %v, want %s: …%s…", err, tc.field, tc.reason)
			}
			if !strings.HasPrefix(ve.Reason, "j.hcl:") {
				t.Errorf("reason %q has no position", ve.Reason)
			}
		})
	}
	// Zero max_parallel is valid: nothing migrates before the deadline.
	if _, err := jobspec.ParseHCL("j.hcl", []byte(job("service", "", "    migrate {\n      max_parallel = 0\n    }"))); err != nil {
		t.Fatal(err)
	}
}
