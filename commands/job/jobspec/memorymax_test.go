package jobspec_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/commands/job/jobspec"
	"github.com/ordoplane/ordo/events"
)

// memory_max (HCL) and MemoryMaxMB (Nomad's JSON) land in the task's
// resources; left out, it stays 0 (no oversubscription).
func TestMemoryMax(t *testing.T) {
	src := job("service", "", "", "      resources {\n        memory     = 64\n        memory_max = 256\n      }")
	h, err := jobspec.ParseHCL("m.hcl", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	want := events.Resources{CPU: jobspec.DefaultCPU, MemoryMB: 64, MemoryMaxMB: 256}
	if got := *h.TaskGroups[0].Tasks[0].Resources; got != want {
		t.Errorf("HCL resources %+v, want %+v", got, want)
	}
	js := `{"ID": "j", "TaskGroups": [{"Name": "g", "Tasks": [{"Name": "t", "Driver": "exec",
	  "Resources": {"MemoryMB": 64, "MemoryMaxMB": 256}}]}]}`
	j, err := jobspec.ParseJSON(strings.NewReader(js), 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	if got := *j.TaskGroups[0].Tasks[0].Resources; got != want {
		t.Errorf("JSON resources %+v, want %+v", got, want)
	}
	plain, err := jobspec.ParseHCL("p.hcl", []byte(job("service", "", "", "")))
	if err != nil {
		t.Fatal(err)
	}
	if got := plain.TaskGroups[0].Tasks[0].Resources.MemoryMaxMB; got != 0 {
		t.Errorf("unset memory_max = %d, want 0", got)
	}
}

// A memory_max below memory is refused naming the field, from either form;
// equal to memory is accepted (a hard limit at the reservation).
func TestMemoryMaxBelowMemory(t *testing.T) {
	for name, parse := range map[string]func() (*events.Job, error){
		"hcl": func() (*events.Job, error) {
			return jobspec.ParseHCL("m.hcl", []byte(job("service", "", "", "      resources {\n        memory     = 128\n        memory_max = 64\n      }")))
		},
		"json": func() (*events.Job, error) {
			return jobspec.ParseJSON(strings.NewReader(`{"ID": "j", "TaskGroups": [{"Name": "g", "Tasks": [{"Name": "t",
			  "Driver": "exec", "Resources": {"MemoryMB": 128, "MemoryMaxMB": 64}}]}]}`), 1<<20)
		},
	} {
		_, err := parse()
		var ve *commands.ValidationError
		if !errors.As(err, &ve) || ve.Field != "job.group[g].task[t].resources.memory_max" || !strings.Contains(ve.Reason, "less than memory") {
			t.Errorf("%s: err = %v, want a ValidationError on resources.memory_max", name, err)
		}
	}
	if _, err := jobspec.ParseHCL("m.hcl", []byte(job("service", "", "", "      resources {\n        memory     = 128\n        memory_max = 128\n      }"))); err != nil {
		t.Errorf("memory_max = memory: %v", err)
	}
}
