package jobspec_test

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/commands/job/jobspec"
	"github.com/ordoplane/ordo/events"
)

// TestScaling parses a group's scaling block: the count defaults to min,
// enabled to true, the policy is kept as given, and HCL and Nomad's API
// JSON agree.
func TestScaling(t *testing.T) {
	src := `job "s" {
  group "web" {
    scaling {
      min = 2
      max = 10
      policy {
        cooldown = "1m"
        check "cpu" {
          source = "prometheus"
        }
      }
    }
    task "t" {
      driver = "exec"
    }
  }
}`
	job, err := jobspec.ParseHCL("s.hcl", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	tg := job.TaskGroups[0]
	want := &events.ScalingPolicy{Type: "horizontal", Min: 2, Max: 10, Enabled: true, Policy: events.TaskConfig{
		"cooldown": "1m", "check": []any{map[string]any{"cpu": []any{map[string]any{"source": "prometheus"}}}}}}
	if tg.Count != 2 || !reflect.DeepEqual(tg.Scaling, want) {
		t.Fatalf("count %d, scaling %#v; want 2, %#v", tg.Count, tg.Scaling, want)
	}
	roundTrip(t, job)

	js := `{"Job":{"ID":"s","TaskGroups":[{"Name":"web","Count":4,"Scaling":{"Min":1,"Max":5,"Enabled":false,
	  "Policy":{"cooldown":"1m"}},"Tasks":[{"Name":"t","Driver":"exec"}]}]}}`
	fromJSON, err := jobspec.ParseJSON(strings.NewReader(js), commands.DefaultBodyLimit)
	if err != nil {
		t.Fatal(err)
	}
	want = &events.ScalingPolicy{Type: "horizontal", Min: 1, Max: 5, Policy: events.TaskConfig{"cooldown": "1m"}}
	if g := fromJSON.TaskGroups[0]; g.Count != 4 || !reflect.DeepEqual(g.Scaling, want) {
		t.Fatalf("from JSON: count %d, scaling %#v; want 4, %#v", g.Count, g.Scaling, want)
	}
}

// TestScalingInvalid names the field of each bad scaling block.
func TestScalingInvalid(t *testing.T) {
	for _, c := range []struct{ block, field string }{
		{`scaling { min = 1 }`, "job.group[web].scaling.max"},
		{"count = 5\nscaling {\nmin = 1\nmax = 3\n}", "job.group[web].scaling.max"},
		{"count = 1\nscaling {\nmin = 2\nmax = 3\n}", "job.group[web].scaling.min"},
		{"scaling {\nmin = 4\nmax = 3\n}", "job.group[web].scaling.max"},
		{"scaling {\ntype = \"vertical_cpu\"\nmax = 3\n}", "job.group[web].scaling.type"},
	} {
		src := "job \"s\" {\n group \"web\" {\n" + c.block + "\n task \"t\" {\n driver = \"exec\"\n }\n }\n}"
		_, err := jobspec.ParseHCL("s.hcl", []byte(src))
		var ve *commands.ValidationError
		if !errors.As(err, &ve) || ve.Field != c.field {
			t.Errorf("%s: error %v, want one naming %s", c.block, err, c.field)
		}
	}
}
