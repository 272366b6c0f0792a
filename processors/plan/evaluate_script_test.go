package plan_test

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/processors/plan"
	"github.com/ordoplane/ordo/processors/scheduler"
)

// TestEvaluateScripts runs testdata/evaluate_*.txt: plan.Evaluate driven by
// scripts (datadriven; rewrite the expectations with -rewrite). Each
// "evaluate [index=N]" block's input is the latest state and a plan for job
// web in namespace default, one item a line:
//
//	node <id> cpu=N mem=N [disk=N] [reserved-cpu=N] [reserved-mem=N]
//	    [reserved-disk=N] [status=<status>] [ineligible] [drain] [reserved-ports=22;80-90]
//	                                        a node, ready and eligible unless told
//	alloc <id> node=<id> cpu=N mem=N [disk=N] [job=<id>] [client=<status>] [stopping] [ports=a;b]
//	                                        an allocation the state holds, running unless told
//	place <id> node=<id> cpu=N mem=N [disk=N] [ports=a;b]
//	                                        a placement of the plan
//	stop <id> [lost]                        a stop of the plan
//	update <id>                             an update of the plan
//
// The output is the verdict: "accepted", or each refused node with its
// reason (and, for a move, the allocations it would have moved) and the
// index to refresh to; then the parts that commit. Every verdict is also
// checked to take nothing the plan did not hold and to leave the plan and
// the state alone.
func TestEvaluateScripts(t *testing.T) {
	datadriven.Walk(t, "testdata", func(t *testing.T, path string) {
		if !strings.HasPrefix(path[strings.LastIndexByte(path, '/')+1:], "evaluate_") {
			return
		}
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			if d.Cmd != "evaluate" {
				t.Fatalf("unknown command %q", d.Cmd)
			}
			st := scheduler.NewMemState()
			st.SetIndex(1)
			if arg, ok := d.Arg("index"); ok {
				st.SetIndex(uint64(atoi(t, arg.Vals[0])))
			}
			p := &scheduler.Plan{EvalID: "eval-1", Namespace: "default", JobID: "web"}
			for _, line := range strings.Split(d.Input, "\n") {
				parseLine(t, line, st, p)
			}
			before := fmt.Sprintf("%+v", *p)
			stateBefore := dumpState(st)
			res := plan.Evaluate(p, st)
			if after := fmt.Sprintf("%+v", *p); after != before {
				t.Fatalf("Evaluate changed the plan:\n%s\nto\n%s", before, after)
			}
			if after := dumpState(st); after != stateBefore {
				t.Fatalf("Evaluate changed the state:\n%s\nto\n%s", stateBefore, after)
			}
			checkSubset(t, p, &res)
			return render(&res)
		})
	})
}

// parseLine adds one input line to the state or the plan.
func parseLine(t *testing.T, line string, st *scheduler.MemState, p *scheduler.Plan) {
	t.Helper()
	cmd, args, err := datadriven.ParseLine(line)
	if err != nil {
		t.Fatal(err)
	}
	if cmd == "" {
		return
	}
	id := ""
	a := map[string]string{}
	for i, arg := range args {
		if i == 0 && len(arg.Vals) == 0 {
			id = arg.Key
			continue
		}
		a[arg.Key] = strings.Join(arg.Vals, ",")
	}
	res := func(prefix string) events.Resources {
		return events.Resources{CPU: num(t, a, prefix+"cpu"), MemoryMB: num(t, a, prefix+"mem"), DiskMB: num(t, a, prefix+"disk")}
	}
	switch cmd {
	case "node":
		n := &scheduler.Node{ID: id, Name: id, Datacenter: "dc1", Status: events.NodeStatusReady,
			SchedulingEligibility: events.NodeEligible}
		r, rsv := res(""), res("reserved-")
		n.Resources.CPU, n.Resources.MemoryMB, n.Resources.DiskMB = r.CPU, r.MemoryMB, r.DiskMB
		n.Reserved.CPU, n.Reserved.MemoryMB, n.Reserved.DiskMB = rsv.CPU, rsv.MemoryMB, rsv.DiskMB
		if s, ok := a["status"]; ok {
			n.Status = s
		}
		if _, ok := a["ineligible"]; ok {
			n.SchedulingEligibility = events.NodeIneligible
		}
		_, n.Drain = a["drain"]
		n.ReservedPorts = strings.ReplaceAll(a["reserved-ports"], ";", ",")
		st.UpsertNode(n)
	case "alloc":
		job := "web"
		if j, ok := a["job"]; ok {
			job = j
		}
		al := &events.Allocation{ID: id, Namespace: "default", JobID: job, TaskGroup: job, Name: job + "." + job + "[0]",
			NodeID: a["node"], Resources: res(""), DesiredStatus: events.AllocDesiredRun, ClientStatus: events.AllocClientRunning}
		if c, ok := a["client"]; ok {
			al.ClientStatus = c
		}
		if _, ok := a["stopping"]; ok {
			al.DesiredStatus = events.AllocDesiredStop
		}
		al.AllocatedResources = ports(t, a["ports"])
		st.UpsertAlloc(al)
	case "place":
		p.Placements = append(p.Placements, events.Allocation{ID: id, Namespace: "default", JobID: "web", TaskGroup: "web",
			Name: "web.web[0]", NodeID: a["node"], Resources: res(""), DesiredStatus: events.AllocDesiredRun,
			ClientStatus: "pending", AllocatedResources: ports(t, a["ports"])})
	case "stop":
		u := events.AllocDesiredUpdate{ID: id, DesiredStatus: events.AllocDesiredStop}
		if _, ok := a["lost"]; ok {
			u.ClientStatus = events.AllocClientLost
		}
		p.Stops = append(p.Stops, u)
	case "update":
		p.Updates = append(p.Updates, events.AllocDesiredUpdate{ID: id, ClientStatus: "unknown"})
	default:
		t.Fatalf("unknown input line %q", line)
	}
}

// ports returns the allocated resources holding the host ports of list
// ("9000;20001"), nil for none.
func ports(t *testing.T, list string) *events.AllocatedResources {
	t.Helper()
	if list == "" {
		return nil
	}
	r := &events.AllocatedResources{}
	for i, p := range strings.Split(list, ";") {
		r.Shared.Ports = append(r.Shared.Ports, events.PortMapping{Label: fmt.Sprintf("p%d", i), Value: atoi(t, p)})
	}
	return r
}

// render prints a verdict: the refusals, then what commits.
func render(res *plan.Result) string {
	var b strings.Builder
	if res.FullCommit() {
		b.WriteString("accepted\n")
	}
	for _, n := range res.RejectedNodes {
		fmt.Fprintf(&b, "refused %s: %s\n", n, res.Reasons[n])
		if m := res.Moved[n]; len(m) > 0 {
			fmt.Fprintf(&b, "  would move %s\n", strings.Join(m, ", "))
		}
	}
	if res.RefreshIndex != 0 {
		fmt.Fprintf(&b, "refresh at %d\n", res.RefreshIndex)
	}
	for _, a := range res.Placements {
		fmt.Fprintf(&b, "place %s on %s\n", a.ID, a.NodeID)
	}
	for _, u := range res.Stops {
		if u.ClientStatus != "" {
			fmt.Fprintf(&b, "stop %s (%s)\n", u.ID, u.ClientStatus)
		} else {
			fmt.Fprintf(&b, "stop %s\n", u.ID)
		}
	}
	for _, u := range res.Updates {
		fmt.Fprintf(&b, "update %s\n", u.ID)
	}
	if len(res.Placements)+len(res.Stops)+len(res.Updates) == 0 {
		b.WriteString("nothing commits\n")
	}
	return b.String()
}

// checkSubset fails unless every part of res comes from p, in p's order,
// and a refusal always names a refresh index.
func checkSubset(t *testing.T, p *scheduler.Plan, res *plan.Result) {
	t.Helper()
	var placed []string
	for _, a := range p.Placements {
		placed = append(placed, a.ID)
	}
	j := 0
	for _, a := range res.Placements {
		i := slices.Index(placed[j:], a.ID)
		if i < 0 {
			t.Fatalf("placement %s is not the plan's, or out of order", a.ID)
		}
		j += i + 1
	}
	if len(res.Stops) > len(p.Stops) || len(res.Updates) > len(p.Updates) {
		t.Fatalf("more stops or updates than the plan: %+v", res)
	}
	if !res.FullCommit() && res.RefreshIndex == 0 {
		t.Fatal("refused without a refresh index")
	}
}

// dumpState prints every node and allocation of st, to check Evaluate
// leaves it alone.
func dumpState(st *scheduler.MemState) string {
	var b strings.Builder
	for _, n := range st.Nodes() {
		fmt.Fprintf(&b, "%+v\n", *n)
	}
	for _, a := range st.Allocs() {
		fmt.Fprintf(&b, "%+v\n", *a)
	}
	return b.String()
}

func num(t *testing.T, a map[string]string, key string) int {
	t.Helper()
	v, ok := a[key]
	if !ok {
		return 0
	}
	return atoi(t, v)
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatalf("not a number: %q", s)
	}
	return n
}
