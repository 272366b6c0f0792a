package compat

import (
	"strings"
	"testing"

	"github.com/hashicorp/nomad/api"
)

// scalableJob is serviceJob with a scaling block on its group.
func scalableJob(id string, count int) *api.Job {
	job := serviceJob(id, count)
	job.TaskGroups[0].Scaling = &api.ScalingPolicy{Min: pointer(int64(1)), Max: pointer(int64(5)),
		Policy: map[string]any{"cooldown": "1m"}}
	return job
}

// TestJobVerbsWithNomadClient drives validate, evaluate, revert, stable,
// versions with diffs, scale and the scaling policies with the real
// client, reading the fields it reads.
func TestJobVerbsWithNomadClient(t *testing.T) {
	_, c := startDev(t)
	jobs := c.Jobs()

	// Validate: a good job has no errors; a bad one is a 200 with them.
	vr, _, err := jobs.Validate(serviceJob("web", 2), nil)
	if err != nil || len(vr.ValidationErrors) != 0 || vr.Error != "" {
		t.Fatalf("validate a good job = %+v, %v", vr, err)
	}
	bad := serviceJob("web", 2)
	bad.TaskGroups[0].Tasks[0].Driver = ""
	vr, _, err = jobs.Validate(bad, nil)
	if err != nil || len(vr.ValidationErrors) != 1 || !strings.Contains(vr.Error, "driver") {
		t.Fatalf("validate a bad job = %+v, %v", vr, err)
	}

	if _, _, err := jobs.Register(scalableJob("web", 2), nil); err != nil {
		t.Fatal(err)
	}
	reg2, _, err := jobs.Register(scalableJob("web", 3), nil)
	if err != nil {
		t.Fatal(err)
	}

	// Evaluate: a new evaluation of the job as it stands.
	evalID, wm, err := jobs.EvaluateWithOpts("web", api.EvalOptions{ForceReschedule: true}, nil)
	if err != nil || evalID == "" || wm.LastIndex <= reg2.JobModifyIndex {
		t.Fatalf("evaluate = %q, %+v, %v", evalID, wm, err)
	}
	ev, _, err := c.Evaluations().Info(evalID, nil)
	if err != nil || ev.JobID != "web" || ev.TriggeredBy != "job-register" || ev.JobModifyIndex != reg2.JobModifyIndex {
		t.Fatalf("evaluation = %+v, %v", ev, err)
	}

	// Versions with diffs: one diff per pair of versions, the count edited.
	versions, diffs, _, err := jobs.Versions("web", true, nil)
	if err != nil || len(versions) != 2 || len(diffs) != 1 {
		t.Fatalf("versions = %d, diffs = %d, %v", len(versions), len(diffs), err)
	}
	if d := diffs[0]; d.Type != "Edited" || d.ID != "web" || len(d.TaskGroups) != 1 || !hasField(d.TaskGroups[0].Fields, "Count", "2", "3") {
		t.Fatalf("diff = %+v", d)
	}

	// diff_version: every other version against the one named.
	_, diffs, _, err = jobs.VersionsOpts("web", &api.VersionsOptions{Diffs: true, DiffVersion: pointer(uint64(1))}, nil)
	if err != nil || len(diffs) != 1 || !hasField(diffs[0].TaskGroups[0].Fields, "Count", "3", "2") {
		t.Fatalf("diffs against version 1 = %+v, %v", diffs, err)
	}
	// ForceEvaluate sends no body.
	if id, _, err := jobs.ForceEvaluate("web", nil); err != nil || id == "" || id == evalID {
		t.Fatalf("evaluate without options = %q, %v", id, err)
	}

	// Stable: marks version 0; JobModifyIndex is the change's index.
	st, wm, err := jobs.Stable("web", 0, true, nil)
	if err != nil || st.JobModifyIndex == 0 || st.JobModifyIndex != wm.LastIndex {
		t.Fatalf("stable = %+v, %+v, %v", st, wm, err)
	}
	versions, _, _, err = jobs.Versions("web", false, nil)
	if err != nil || !*versions[1].Stable || *versions[0].Stable {
		t.Fatalf("stability after marking version 0: %v", err)
	}

	// Revert: enforcing the wrong prior version is refused; then version 0
	// is registered again as version 2.
	if _, _, err := jobs.Revert("web", 0, pointer(uint64(0)), nil, "", ""); err == nil || !strings.Contains(err.Error(), "409") {
		t.Fatalf("revert enforcing a stale version: %v", err)
	}
	rv, wm, err := jobs.Revert("web", 0, pointer(uint64(1)), nil, "", "")
	if err != nil || rv.EvalID == "" || rv.JobModifyIndex != wm.LastIndex || rv.EvalCreateIndex != wm.LastIndex {
		t.Fatalf("revert = %+v, %+v, %v", rv, wm, err)
	}
	job, _, err := jobs.Info("web", nil)
	if err != nil || *job.Version != 2 || *job.TaskGroups[0].Count != 2 {
		t.Fatalf("reverted job: version %d count %d, %v", *job.Version, *job.TaskGroups[0].Count, err)
	}
	if _, _, err := jobs.Revert("web", 9, nil, nil, "", ""); err == nil || !strings.Contains(err.Error(), "404") {
		t.Fatalf("revert to a missing version: %v", err)
	}

	// Scale: a count change and a message alone, each a scaling event.
	sr, wm, err := jobs.Scale("web", "web", pointer(4), "by hand", false, map[string]any{"who": "ops"}, nil)
	if err != nil || sr.EvalID == "" || sr.JobModifyIndex != wm.LastIndex || sr.EvalCreateIndex != wm.LastIndex {
		t.Fatalf("scale = %+v, %+v, %v", sr, wm, err)
	}
	if _, _, err := jobs.Scale("web", "web", nil, "metrics unavailable", true, nil, nil); err != nil {
		t.Fatal(err)
	}
	if _, _, err := jobs.Scale("web", "web", pointer(9), "", false, nil, nil); err == nil || !strings.Contains(err.Error(), "400") {
		t.Fatalf("scale past the policy's max: %v", err)
	}
	ss, _, err := jobs.ScaleStatus("web", nil)
	if err != nil || ss.JobID != "web" || ss.Namespace != "default" || ss.JobStopped || ss.JobModifyIndex != sr.JobModifyIndex {
		t.Fatalf("scale status = %+v, %v", ss, err)
	}
	g := ss.TaskGroups["web"]
	if g.Desired != 4 || len(g.Events) != 2 {
		t.Fatalf("group status = %+v", g)
	}
	if e := g.Events[1]; e.Count == nil || *e.Count != 4 || e.PreviousCount != 2 || e.Message != "by hand" ||
		e.EvalID == nil || *e.EvalID != sr.EvalID || e.Meta["who"] != "ops" || e.Time == 0 || e.CreateIndex != wm.LastIndex {
		t.Fatalf("scaling event = %+v", e)
	}
	if e := g.Events[0]; !e.Error || e.Count != nil || e.EvalID != nil || e.Message != "metrics unavailable" {
		t.Fatalf("error event = %+v", e)
	}

	// Scaling policies: the group's scaling block, by id.
	policies, _, err := c.Scaling().ListPolicies(nil)
	if err != nil || len(policies) != 1 {
		t.Fatalf("policies = %+v, %v", policies, err)
	}
	p := policies[0]
	if p.ID == "" || !p.Enabled || p.Type != "horizontal" || p.Target["Job"] != "web" || p.Target["Group"] != "web" ||
		p.Target["Namespace"] != "default" {
		t.Fatalf("policy stub = %+v", p)
	}
	pol, _, err := c.Scaling().GetPolicy(p.ID, nil)
	if err != nil || *pol.Min != 1 || *pol.Max != 5 || pol.Policy["cooldown"] != "1m" || !*pol.Enabled || pol.ID != p.ID {
		t.Fatalf("policy = %+v, %v", pol, err)
	}
	if _, _, err := c.Scaling().GetPolicy("no-such-policy", nil); err == nil || !strings.Contains(err.Error(), "404") {
		t.Fatalf("a missing policy: %v", err)
	}
}

func hasField(fs []*api.FieldDiff, name, old, new string) bool {
	for _, f := range fs {
		if f.Name == name && f.Old == old && f.New == new {
			return true
		}
	}
	return false
}
