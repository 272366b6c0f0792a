package compat

import (
	"testing"

	"github.com/hashicorp/nomad/api"

	"github.com/ordoplane/ordo/test/testagent"
)

// The eval of a registration that changes the job carries the job's new
// JobModifyIndex, as Nomad's does, before and after a worker writes it
// back; an unchanged registration's eval carries the unchanged one.
func TestRegisterEvalJobModifyIndexWithNomadClient(t *testing.T) {
	a, c := startDev(t)
	registerReadyNode(t, a.HTTPAddr(), "node-0", 4000, 8192)
	job := serviceJob("indexed", 1)
	check := func(what string, resp *api.JobRegisterResponse) {
		t.Helper()
		got, _, err := c.Jobs().Info("indexed", nil)
		if err != nil {
			t.Fatal(err)
		}
		if resp.JobModifyIndex != *got.JobModifyIndex {
			t.Fatalf("%s: answered JobModifyIndex %d, job has %d", what, resp.JobModifyIndex, *got.JobModifyIndex)
		}
		testagent.WaitFor(t, guard, what+": its eval processed", func() bool {
			ev, _, err := c.Evaluations().Info(resp.EvalID, nil)
			if err != nil {
				t.Fatal(err)
			}
			if ev.JobModifyIndex != *got.JobModifyIndex {
				t.Fatalf("%s: eval %s has JobModifyIndex %d, job %d", what, ev.Status, ev.JobModifyIndex, *got.JobModifyIndex)
			}
			return ev.Status != "pending"
		})
	}
	for i, what := range []string{"new job", "changed job", "unchanged job"} {
		if i == 1 {
			job.TaskGroups[0].Count = pointer(2)
		}
		resp, _, err := c.Jobs().Register(job, nil)
		if err != nil {
			t.Fatal(err)
		}
		check(what, resp)
	}
}
