package deploywatch_test

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/processors/deploywatch"
)

// TestDecideScripts runs testdata/decide: deploywatch.Decide driven by a
// script (datadriven; rewrite the expectations with -rewrite). Each
// "decide [at=<offset>]" block's input describes one deployment of job
// web (one group, web, of count 3) and what it reads, one item a line;
// times are offsets from a fixed instant. Version 0 of the job, running
// /bin/a with max_parallel 1 and a 10m progress deadline, is always kept.
//
//	job v=<n> cmd=<command> [max_parallel=N] [deadline=<duration>] [canary=N]
//	    [auto_promote] [auto_revert] [stop]      the job's current version (none: the job is gone)
//	deployment <status> [v=1] [total=N] [canaries=N] [placed-canaries=(a, b)] [placed=N]
//	    [healthy=N] [unhealthy=N] [promoted] [auto_revert] [progress-by=<offset>]
//	                                             deployment d1 of version v, group web
//	alloc <id> v=<n> dep=<id> [healthy|unhealthy] [canary] [stopped]
//	                                             an allocation of group web, running unless stopped
//
// The output is the decision: its outcome, whether it asks for an eval or
// a revert, the deployment it records and its next progress deadline.
// Every decision is also checked to leave its input alone and, for an
// active deployment, to be a fixed point: deciding again on what it
// recorded changes nothing more (but may fail it).
func TestDecideScripts(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0)
	datadriven.RunTest(t, "testdata/decide", func(t *testing.T, d *datadriven.TestData) string {
		if d.Cmd != "decide" {
			t.Fatalf("unknown command %q", d.Cmd)
		}
		now := t0
		if arg, ok := d.Arg("at"); ok {
			now = t0.Add(duration(t, arg.Vals[0]))
		}
		in := deploywatch.Input{Versions: map[uint64]*events.Job{
			0: spec(0, "/bin/a", events.UpdateStrategy{MaxParallel: 1, ProgressDeadline: 10 * time.Minute})}}
		for _, line := range strings.Split(d.Input, "\n") {
			cmd, args, err := datadriven.ParseLine(line)
			if err != nil {
				t.Fatal(err)
			}
			a := map[string][]string{}
			for _, arg := range args {
				a[arg.Key] = arg.Vals
			}
			switch cmd {
			case "":
			case "job":
				u := events.UpdateStrategy{MaxParallel: number(t, a, "max_parallel"), Canary: number(t, a, "canary")}
				if v, ok := a["deadline"]; ok {
					u.ProgressDeadline = duration(t, v[0])
				}
				_, u.AutoPromote = a["auto_promote"]
				_, u.AutoRevert = a["auto_revert"]
				in.Job = spec(uint64(number(t, a, "v")), a["cmd"][0], u)
				_, in.Job.Stop = a["stop"]
				in.Versions[in.Job.Version] = in.Job
			case "deployment":
				st := &events.DeploymentState{DesiredTotal: number(t, a, "total"), DesiredCanaries: number(t, a, "canaries"),
					PlacedCanaries: a["placed-canaries"], PlacedAllocs: number(t, a, "placed"),
					HealthyAllocs: number(t, a, "healthy"), UnhealthyAllocs: number(t, a, "unhealthy")}
				_, st.Promoted = a["promoted"]
				_, st.AutoRevert = a["auto_revert"]
				if v, ok := a["progress-by"]; ok {
					st.RequireProgressBy = t0.Add(duration(t, v[0])).UnixNano()
				}
				version := uint64(1)
				if _, ok := a["v"]; ok {
					version = uint64(number(t, a, "v"))
				}
				in.Deployment = events.Deployment{ID: "d1", Namespace: "default", JobID: "web", JobVersion: version,
					Status: args[0].Key, StatusDescription: deploywatch.DescriptionRunning,
					TaskGroups: map[string]*events.DeploymentState{"web": st}}
			case "alloc":
				h := unset
				if _, ok := a["healthy"]; ok {
					h = healthy
				}
				if _, ok := a["unhealthy"]; ok {
					h = unhealthy
				}
				_, canary := a["canary"]
				al := al(args[0].Key, uint64(number(t, a, "v")), a["dep"][0], h, canary)
				if _, ok := a["stopped"]; ok {
					stopped(al)
				}
				in.Allocs = append(in.Allocs, al)
			default:
				t.Fatalf("decide: unknown input %q", cmd)
			}
		}

		before, _ := json.Marshal(in.Deployment)
		dec := deploywatch.Decide(in, now)
		if after, _ := json.Marshal(in.Deployment); string(after) != string(before) {
			t.Fatalf("Decide changed its input:\n%s\n%s", before, after)
		}
		if got := dec.Deployment; got != nil && dec.Outcome != deploywatch.OutcomeCancelled && got.Active() {
			again := in
			again.Deployment = *got
			if next := deploywatch.Decide(again, now); next.Deployment != nil && next.Outcome != deploywatch.OutcomeFailed {
				t.Fatalf("not a fixed point: then %s %+v", next.Outcome, next.Deployment)
			}
		}
		return renderDecision(dec, t0)
	})
}

// spec returns version v of job web: group web of count 3 running cmd,
// with update strategy u.
func spec(v uint64, cmd string, u events.UpdateStrategy) *events.Job {
	return &events.Job{ID: "web", Name: "web", Namespace: "default", Type: events.JobTypeService, Version: v,
		Update: &u, TaskGroups: []events.TaskGroup{{Name: "web", Count: 3, Update: &u,
			Tasks: []events.Task{{Name: "t", Driver: "exec", Config: events.TaskConfig{"command": cmd},
				Resources: &events.Resources{CPU: 100, MemoryMB: 64}}}}}}
}

// health is an allocation's reported health: unset, healthy or unhealthy.
type health int

const (
	unset health = iota
	healthy
	unhealthy
)

// al returns a running allocation of group web.
func al(id string, version uint64, dep string, h health, canary bool) *events.Allocation {
	a := &events.Allocation{ID: id, Namespace: "default", JobID: "web", TaskGroup: "web", Name: "web.web[0]",
		JobVersion: version, DeploymentID: dep, DesiredStatus: events.AllocDesiredRun, ClientStatus: events.AllocClientRunning}
	if h != unset || canary {
		a.DeploymentStatus = &events.AllocDeploymentStatus{Canary: canary}
		if h != unset {
			ok := h == healthy
			a.DeploymentStatus.Healthy = &ok
		}
	}
	return a
}

func stopped(a *events.Allocation) *events.Allocation {
	a.DesiredStatus = events.AllocDesiredStop
	return a
}

func renderDecision(dec deploywatch.Decision, t0 time.Time) string {
	var b strings.Builder
	if dec.Outcome == deploywatch.OutcomeNone {
		b.WriteString("no change")
	} else {
		b.WriteString("outcome " + dec.Outcome)
	}
	if dec.Eval {
		b.WriteString(", eval")
	}
	if dec.Revert {
		b.WriteString(", revert")
	}
	b.WriteString("\n")
	if got := dec.Deployment; got != nil {
		fmt.Fprintf(&b, "deployment %s: %s\n", got.Status, got.StatusDescription)
		st := got.TaskGroups["web"]
		fmt.Fprintf(&b, "group web: total=%d placed=%d healthy=%d unhealthy=%d", st.DesiredTotal, st.PlacedAllocs,
			st.HealthyAllocs, st.UnhealthyAllocs)
		if st.DesiredCanaries > 0 || len(st.PlacedCanaries) > 0 {
			fmt.Fprintf(&b, " canaries=%d placed-canaries=[%s] promoted=%v", st.DesiredCanaries,
				strings.Join(st.PlacedCanaries, " "), st.Promoted)
		}
		if st.AutoRevert {
			b.WriteString(" auto_revert")
		}
		if st.RequireProgressBy != 0 {
			fmt.Fprintf(&b, " progress-by=%s", time.Unix(0, st.RequireProgressBy).Sub(t0))
		}
		b.WriteString("\n")
	}
	if !dec.Deadline.IsZero() {
		fmt.Fprintf(&b, "deadline %s\n", dec.Deadline.Sub(t0))
	}
	return b.String()
}

func number(t *testing.T, a map[string][]string, key string) int {
	v, ok := a[key]
	if !ok {
		return 0
	}
	n, err := strconv.Atoi(v[0])
	if err != nil {
		t.Fatalf("%s=%q: %v", key, v[0], err)
	}
	return n
}

func duration(t *testing.T, s string) time.Duration {
	d, err := time.ParseDuration(s)
	if err != nil {
		t.Fatalf("bad duration %q: %v", s, err)
	}
	return d
}
