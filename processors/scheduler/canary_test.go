package scheduler_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/processors/scheduler"
	"github.com/ordoplane/ordo/processors/scheduler/schedulertest"
)

// TestCanaryScripts runs the scripts in testdata/canary with the commands
// of TestScripts and these:
//
//	job <id> ... canary=N                 as job, with the update strategy's canary count
//	promote <job>                         the latest deployment's groups are promoted
//	deployment <job>                      shows the latest deployment
//	deployment-status <job> <status>      sets the latest deployment's status
//	register-deployment <job>             the job version's deployment, initializing, as
//	                                      registration creates it (N3)
//	healthy <job|name>                    as healthy (keeping the canary flag, as Nomad's
//	                                      client does), or only the live alloc(s) named
//	eval ...                              as eval, then a line per canary placed
func TestCanaryScripts(t *testing.T) {
	files, err := filepath.Glob("testdata/canary/*.txt")
	if err != nil || len(files) == 0 {
		t.Fatalf("no scripts: %v", err)
	}
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".txt"), func(t *testing.T) {
			c := &canaryRunner{runner{t: t, h: schedulertest.New()}}
			runScriptWith(t, f, c.run)
		})
	}
}

// runScriptWith runs the script at path with run, as runScript does.
func runScriptWith(t *testing.T, path string, run func(string) string) {
	blocks, lines := parseScript(t, path)
	var out strings.Builder
	next := 0
	for _, b := range blocks {
		got := run(b.cmd)
		if got == "" {
			got = "ok"
		}
		if !*rewrite {
			if got != b.expected {
				t.Errorf("%s:%d: %s\ngot:\n%s\nwant:\n%s", path, b.line, b.cmd, got, b.expected)
			}
			continue
		}
		for ; next < b.line-1; next++ {
			out.WriteString(lines[next] + "\n")
		}
		out.WriteString(b.cmd + "\n----\n" + got + "\n")
		for next = b.line + 1; next < len(lines) && lines[next] != ""; next++ {
		}
	}
	if *rewrite {
		out.WriteString(strings.Join(lines[next:], "\n"))
		if err := os.WriteFile(path, []byte(out.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

type canaryRunner struct{ runner }

func (c *canaryRunner) run(cmd string) string {
	t, h := c.t, c.h
	f := strings.Fields(cmd)
	switch f[0] {
	case "job":
		canary := -1
		var rest []string
		for _, a := range f {
			if v, ok := strings.CutPrefix(a, "canary="); ok {
				canary = atoi(t, v, 0)
				continue
			}
			rest = append(rest, a)
		}
		out := c.runner.run(strings.Join(rest, " "))
		if canary >= 0 {
			old, _ := h.State.Job("default", f[1])
			j := *old
			j.TaskGroups = slices.Clone(j.TaskGroups)
			u := *j.Update
			u.Canary = canary
			j.Update, j.TaskGroups[0].Update = &u, &u
			h.State.UpsertJob(&j)
		}
		return out
	case "promote", "deployment-status":
		d := c.latest(f[1])
		cp := *d
		cp.TaskGroups = map[string]*events.DeploymentState{}
		for name, st := range d.TaskGroups {
			s := *st
			if f[0] == "promote" {
				s.Promoted = true
			}
			cp.TaskGroups[name] = &s
		}
		if f[0] == "deployment-status" {
			cp.Status = f[2]
		}
		h.State.UpsertDeployment(&cp)
		h.Bump()
		return ""
	case "register-deployment":
		j, _ := h.State.Job("default", f[1])
		d := &events.Deployment{ID: fmt.Sprintf("dep-%s-v%d", j.ID, j.Version), Namespace: "default", JobID: j.ID,
			JobVersion: j.Version, Status: events.DeploymentStatusInitializing, TaskGroups: map[string]*events.DeploymentState{}}
		for _, tg := range j.TaskGroups {
			d.TaskGroups[tg.Name] = &events.DeploymentState{DesiredTotal: tg.Count, DesiredCanaries: tg.Update.Canary}
		}
		h.State.UpsertDeployment(d)
		h.Bump()
		return ""
	case "deployment":
		d := c.latest(f[1])
		var b strings.Builder
		fmt.Fprintf(&b, "deployment %s v%d", d.Status, d.JobVersion)
		for _, g := range sortedKeys(d.TaskGroups) {
			st := d.TaskGroups[g]
			var names []string
			for _, id := range st.PlacedCanaries {
				names = append(names, c.label(id, &scheduler.Plan{}))
			}
			fmt.Fprintf(&b, " %s(desired=%d canaries=%d placed=[%s] promoted=%v)", g, st.DesiredTotal,
				st.DesiredCanaries, strings.Join(names, " "), st.Promoted)
		}
		return b.String()
	case "healthy":
		// As a Nomad client reports it: the canary flag is kept.
		yes := true
		for _, al := range h.State.Allocs() {
			if (al.Name == f[1] || al.JobID == f[1]) && !al.Terminal() {
				cp := *al
				cp.ClientStatus = events.AllocClientRunning
				cp.DeploymentStatus = &events.AllocDeploymentStatus{Healthy: &yes, Timestamp: h.Now,
					Canary: al.DeploymentStatus != nil && al.DeploymentStatus.Canary}
				h.State.UpsertAlloc(&cp)
			}
		}
		h.Bump()
		return ""
	case "eval":
		out := c.runner.run(cmd)
		var b strings.Builder
		b.WriteString(out)
		for _, al := range h.State.Allocs() {
			if al.EvalID == c.lastEval.ID && al.DeploymentStatus != nil && al.DeploymentStatus.Canary {
				fmt.Fprintf(&b, "\ncanary %s@%s v%d", al.Name, al.NodeID, al.JobVersion)
			}
		}
		return b.String()
	}
	return c.runner.run(cmd)
}

func (c *canaryRunner) latest(job string) *events.Deployment {
	d, ok := c.h.State.LatestDeployment("default", job)
	if !ok {
		c.t.Fatalf("no deployment for %s", job)
	}
	return d
}

// TestGroupChanged checks what makes an update destructive.
func TestGroupChanged(t *testing.T) {
	base := schedulertest.Job("web", events.JobTypeService, 3)
	scaled := *base
	scaled.TaskGroups = slices.Clone(base.TaskGroups)
	scaled.TaskGroups[0].Count = 5
	changed := schedulertest.Job("web", events.JobTypeService, 3)
	changed.TaskGroups[0].Tasks[0].Config = events.TaskConfig{"command": "/bin/false"}
	meta := schedulertest.Job("web", events.JobTypeService, 3)
	meta.TaskGroups[0].Meta = map[string]string{"k": "v"}
	for _, tc := range []struct {
		name     string
		old, cur *events.Job
		group    string
		want     bool
	}{
		{"same", base, base, "web", false},
		{"count only", base, &scaled, "web", false},
		{"task config", base, changed, "web", true},
		{"group meta", base, meta, "web", true},
		{"group added", base, changed, "db", false},
		{"group new in cur", &events.Job{}, base, "web", true},
	} {
		if got := scheduler.GroupChanged(tc.old, tc.cur, tc.group); got != tc.want {
			t.Errorf("%s: GroupChanged = %v, want %v", tc.name, got, tc.want)
		}
	}
}
