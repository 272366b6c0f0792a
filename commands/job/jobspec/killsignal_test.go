package jobspec_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/commands/job/jobspec"
)

// A task's kill_signal is read from HCL and JSON; left out, it stays ""
// (the driver's default, SIGTERM).
func TestKillSignal(t *testing.T) {
	src := `job "web" {
  datacenters = ["dc1"]
  group "web" {
    task "a" {
      driver      = "exec"
      kill_signal = "SIGINT"
    }
    task "b" {
      driver = "exec"
    }
  }
}`
	j, err := jobspec.ParseHCL("web.hcl", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if got := j.TaskGroups[0].Tasks[0].KillSignal; got != "SIGINT" {
		t.Errorf("hcl kill_signal %q, want SIGINT", got)
	}
	if got := j.TaskGroups[0].Tasks[1].KillSignal; got != "" {
		t.Errorf("default kill_signal %q, want empty", got)
	}
	js := `{"Job": {"ID": "web", "Datacenters": ["dc1"], "TaskGroups": [{"Name": "web",
  "Tasks": [{"Name": "a", "Driver": "exec", "KillSignal": "SIGHUP"}]}]}}`
	j, err = jobspec.ParseJSON(strings.NewReader(js), 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	if got := j.TaskGroups[0].Tasks[0].KillSignal; got != "SIGHUP" {
		t.Errorf("json KillSignal %q, want SIGHUP", got)
	}
}

// An unknown kill_signal is refused at parse, naming the field, rather than
// failing the task later on a client.
func TestKillSignalRefused(t *testing.T) {
	src := `job "web" {
  datacenters = ["dc1"]
  group "web" {
    task "a" {
      driver      = "exec"
      kill_signal = "SIGWINCH"
    }
  }
}`
	_, err := jobspec.ParseHCL("web.hcl", []byte(src))
	var ve *commands.ValidationError
	if !errors.As(err, &ve) || !strings.Contains(ve.Field, "kill_signal") {
		t.Fatalf("err = %v, want a validation error naming kill_signal", err)
	}
	for _, ok := range []string{"", "SIGINT", "sigterm", "HUP", "SIGUSR2"} {
		src := strings.Replace(`job "web" {
  datacenters = ["dc1"]
  group "web" {
    task "a" {
      driver      = "exec"
      kill_signal = "X"
    }
  }
}`, "X", ok, 1)
		if _, err := jobspec.ParseHCL("web.hcl", []byte(src)); err != nil {
			t.Errorf("kill_signal %q refused: %v", ok, err)
		}
	}
}
