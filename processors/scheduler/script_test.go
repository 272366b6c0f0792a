package scheduler_test

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/processors/plan"
	"github.com/ordoplane/ordo/processors/scheduler"
	"github.com/ordoplane/ordo/processors/scheduler/schedulertest"
)

// TestScripts runs the scheduler scripts under testdata (datadriven
// files: a command line, "----" and the expected output; rewrite the
// expectations with -rewrite). Each file starts from an empty harness.
//
// Commands:
//
//	node <id> [dc= class= pool= cpu= mem= disk= rcpu= rmem= status= elig= drivers=a,b attr.k=v meta.k=v unhealthy=driver
//	           ports=min-max reserved=22;80;8000-8100 addr=ip net=name;ip hvol=name[;ro]]
//	                                   ports: the dynamic port range; addr: the default
//	                                   network's address; net: a host network
//	node-status <id> <status>          node-elig <id> <eligible|ineligible>
//	                                   (<id> may be @<alloc name>: that alloc's node)
//	drain <id>                         marks the node draining and its allocs to migrate
//	job <id> [type= count= cpu= mem= disk= dc=a,b pool= driver= group=
//	          constraint=L;op;R gconstraint=L;op;R distinct_hosts gdistinct_hosts
//	          disconnect=lost_after;replace;reconcile mcd=dur
//	          resched=attempts;interval;delay;function;max[;unlimited] noresched
//	          update=max_parallel canary=N meta.k=v gmeta.k=v tmeta.k=v
//	          static=label;port[;host_network] dynamic=label[;host_network] hvol=source[;ro]]
//	                                   static and dynamic ports (repeatable) in the
//	                                   group's network; hvol a host volume request
//	                                   registers the job (a new version); canary sets
//	                                   the update strategy's canary count
//	job-stop <id> | job-purge <id>
//	client <name|job>[@node] <status>   sets client status of the live alloc(s)
//	healthy <job|name>                  marks the job's live allocs (or those named) healthy,
//	                                    keeping the canary flag as Nomad's client does
//	fill <node> cpu= mem= [ports=a;b]   an allocation of another job lands on the node
//	ports [node]                        the host ports of every live allocation, per node,
//	                                    checked: in range, none twice, none reserved
//	reject <node>... | reject           the planner rejects these nodes (none)
//	tick <duration>
//	eval <job> [trigger=] [follow-up] [summary]
//	                                    runs an eval (follow-up: the oldest pending follow-up),
//	                                    then a line per canary it placed; summary counts
//	                                    placements per node rather than listing them
//	eval-again                          re-runs the last eval against an unchanged state
//	allocs <job>                        lists the job's allocations
//	promote <job>                       the latest deployment's groups are promoted
//	deployment <job>                    shows the latest deployment
//	deployment-status <job> <status>    sets the latest deployment's status
//	register-deployment <job>           the job version's deployment, initializing, as
//	                                    registration creates it
//	algorithm <binpack|spread>          the scheduler configuration's placement algorithm
func TestScripts(t *testing.T) {
	datadriven.Walk(t, "testdata", func(t *testing.T, path string) {
		r := &runner{h: schedulertest.New()}
		datadriven.RunTest(t, path, r.run)
	})
}

type runner struct {
	t        *testing.T
	h        *schedulertest.Harness
	lastEval *events.Evaluation
	snapshot *scheduler.MemState
	lastPlan []byte
	done     map[string]bool // follow-ups already run
	summary  bool            // render placements as a count per node
}

func atoi(t *testing.T, s string, def int) int {
	if s == "" {
		return def
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatalf("bad number %q", s)
	}
	return n
}

func dur(t *testing.T, s string) time.Duration {
	d, err := time.ParseDuration(s)
	if err != nil {
		t.Fatalf("bad duration %q", s)
	}
	return d
}

// run runs one script command: f is the command and its argument names in
// order (positional arguments are names without a value), a maps every
// argument name to its value ("" when it has none).
func (r *runner) run(t *testing.T, d *datadriven.TestData) string {
	r.t = t
	f := []string{d.Cmd}
	a := map[string]string{}
	for _, arg := range d.CmdArgs {
		f = append(f, arg.Key)
		a[arg.Key] = strings.Join(arg.Vals, ",")
	}
	if out := r.exec(f, a); out != "" {
		return out
	}
	return "ok"
}

func (r *runner) exec(f []string, a map[string]string) string {
	t, h := r.t, r.h
	switch f[0] {
	case "node":
		n := schedulertest.Node(f[1])
		if old, ok := h.State.Node(f[1]); ok {
			c := *old
			n = &c
		}
		for k, v := range a {
			switch {
			case k == f[1]:
			case k == "dc":
				n.Datacenter = v
			case k == "class":
				n.NodeClass = v
			case k == "pool":
				n.NodePool = v
			case k == "cpu":
				n.Resources.CPU = atoi(t, v, 0)
			case k == "mem":
				n.Resources.MemoryMB = atoi(t, v, 0)
			case k == "disk":
				n.Resources.DiskMB = atoi(t, v, 0)
			case k == "rcpu":
				n.Reserved.CPU = atoi(t, v, 0)
			case k == "rmem":
				n.Reserved.MemoryMB = atoi(t, v, 0)
			case k == "status":
				n.Status = v
			case k == "elig":
				n.SchedulingEligibility = v
			case k == "drivers":
				n.Drivers = map[string]events.DriverInfo{}
				for _, d := range strings.Split(v, ",") {
					n.Drivers[d] = events.DriverInfo{Detected: true, Healthy: true}
				}
			case k == "unhealthy":
				n.Drivers[v] = events.DriverInfo{Detected: true}
			case k == "ports":
				lo, hi, _ := strings.Cut(v, "-")
				n.MinDynamicPort, n.MaxDynamicPort = atoi(t, lo, 0), atoi(t, hi, 0)
			case k == "reserved":
				n.ReservedPorts = strings.ReplaceAll(v, ";", ",")
			case k == "addr":
				n.Networks = append([]events.NodeNetwork{{Name: events.DefaultHostNetwork, Address: v}}, n.Networks...)
			case k == "net":
				name, ip, _ := strings.Cut(v, ";")
				n.Networks = append(slices.Clone(n.Networks), events.NodeNetwork{Name: name, Address: ip})
			case k == "hvol":
				name, ro, _ := strings.Cut(v, ";")
				hv := maps.Clone(n.HostVolumes)
				if hv == nil {
					hv = map[string]*events.ClientHostVolume{}
				}
				hv[name] = &events.ClientHostVolume{Name: name, Path: "/srv/" + name, ReadOnly: ro == "ro"}
				n.HostVolumes = hv
			case strings.HasPrefix(k, "attr."):
				n.Attributes = cloneMap(n.Attributes)
				n.Attributes[k[5:]] = v
			case strings.HasPrefix(k, "meta."):
				n.Meta = cloneMap(n.Meta)
				n.Meta[k[5:]] = v
			default:
				t.Fatalf("node: unknown argument %q", k)
			}
		}
		n.StatusUpdatedAt = h.Now / int64(time.Second)
		h.State.UpsertNode(n)
		h.Bump()
	case "node-status", "node-elig":
		old, ok := h.State.Node(r.nodeRef(f[1]))
		if !ok {
			t.Fatalf("no node %s", f[1])
		}
		n := *old
		if f[0] == "node-status" {
			n.Status, n.StatusUpdatedAt = f[2], h.Now/int64(time.Second)
		} else {
			n.SchedulingEligibility = f[2]
		}
		h.State.UpsertNode(&n)
		h.Bump()
	case "drain":
		old, _ := h.State.Node(r.nodeRef(f[1]))
		n := *old
		n.Drain, n.SchedulingEligibility = true, events.NodeIneligible
		h.State.UpsertNode(&n)
		yes := true
		for _, al := range h.State.AllocsByNode(n.ID) {
			if !al.Terminal() {
				c := *al
				c.DesiredTransition.Migrate = &yes
				h.State.UpsertAlloc(&c)
			}
		}
		h.Bump()
	case "algorithm":
		h.State.SetSchedulerAlgorithm(f[1])
	case "job":
		r.job(f[1], a)
		if v, ok := a["canary"]; ok {
			old, _ := h.State.Job("default", f[1])
			j := *old
			j.TaskGroups = slices.Clone(j.TaskGroups)
			u := *j.Update
			u.Canary = atoi(t, v, 0)
			j.Update, j.TaskGroups[0].Update = &u, &u
			h.State.UpsertJob(&j)
		}
	case "job-stop":
		old, _ := h.State.Job("default", f[1])
		j := *old
		j.Stop, j.Version = true, j.Version+1
		h.State.UpsertJob(&j)
		h.Bump()
	case "job-purge":
		h.State.DeleteJob("default", f[1])
		h.Bump()
	case "client":
		n := 0
		name, node, _ := strings.Cut(f[1], "@")
		for _, al := range h.State.Allocs() {
			if al.Terminal() || (al.Name != name && al.JobID != name) || (node != "" && al.NodeID != node) {
				continue
			}
			c := *al
			c.ClientStatus, c.ModifyTime = f[2], h.Now
			if c.ClientStatus == events.AllocClientFailed || c.ClientStatus == events.AllocClientComplete {
				c.TaskStates = map[string]*events.TaskState{"main": {State: "dead", Failed: c.ClientStatus == events.AllocClientFailed, FinishedAt: h.Now}}
			}
			h.State.UpsertAlloc(&c)
			n++
		}
		if n == 0 {
			t.Fatalf("client: no live alloc %s", f[1])
		}
		h.Bump()
	case "healthy":
		// As a Nomad client reports it: the canary flag is kept.
		yes := true
		for _, al := range h.State.Allocs() {
			if (al.Name == f[1] || al.JobID == f[1]) && !al.Terminal() {
				c := *al
				c.ClientStatus = events.AllocClientRunning
				c.DeploymentStatus = &events.AllocDeploymentStatus{Healthy: &yes, Timestamp: h.Now,
					Canary: al.DeploymentStatus != nil && al.DeploymentStatus.Canary}
				h.State.UpsertAlloc(&c)
			}
		}
		h.Bump()
	case "promote", "deployment-status":
		d := r.latest(f[1])
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
	case "register-deployment":
		j, _ := h.State.Job("default", f[1])
		d := &events.Deployment{ID: fmt.Sprintf("dep-%s-v%d", j.ID, j.Version), Namespace: "default", JobID: j.ID,
			JobVersion: j.Version, Status: events.DeploymentStatusInitializing, TaskGroups: map[string]*events.DeploymentState{}}
		for _, tg := range j.TaskGroups {
			d.TaskGroups[tg.Name] = &events.DeploymentState{DesiredTotal: tg.Count, DesiredCanaries: tg.Update.Canary}
		}
		h.State.UpsertDeployment(d)
		h.Bump()
	case "deployment":
		return r.deployment(f[1])
	case "fill":
		al := &events.Allocation{ID: fmt.Sprintf("other-%d", h.State.Index()), Namespace: "default",
			JobID: "other", Name: "other.other[0]", TaskGroup: "other", NodeID: f[1],
			Resources:     events.Resources{CPU: atoi(t, a["cpu"], 0), MemoryMB: atoi(t, a["mem"], 0)},
			DesiredStatus: events.AllocDesiredRun, ClientStatus: events.AllocClientRunning}
		if v, ok := a["ports"]; ok {
			al.AllocatedResources = &events.AllocatedResources{}
			for i, p := range strings.Split(v, ";") {
				al.AllocatedResources.Shared.Ports = append(al.AllocatedResources.Shared.Ports,
					events.PortMapping{Label: fmt.Sprintf("p%d", i), Value: atoi(t, p, 0)})
			}
		}
		h.State.UpsertAlloc(al)
		h.Bump()
	case "ports":
		return r.ports(f[1:])
	case "reject":
		h.Reject = map[string]bool{}
		for _, id := range f[1:] {
			h.Reject[id] = true
		}
	case "tick":
		h.Advance(dur(t, f[1]))
	case "eval":
		r.summary = slices.Contains(f, "summary")
		out := r.eval(f[1], a, slices.Contains(f, "follow-up"))
		var b strings.Builder
		b.WriteString(out)
		for _, al := range h.State.Allocs() {
			if al.EvalID == r.lastEval.ID && al.DeploymentStatus != nil && al.DeploymentStatus.Canary {
				fmt.Fprintf(&b, "\ncanary %s@%s v%d", al.Name, al.NodeID, al.JobVersion)
			}
		}
		return b.String()
	case "eval-again":
		plan, err := scheduler.Compute(r.snapshot, r.lastEval)
		if err != nil {
			return "error: " + err.Error()
		}
		b, err := plan.Encode()
		if err != nil {
			t.Fatal(err)
		}
		if string(b) != string(r.lastPlan) {
			return "plan differs"
		}
		return "identical"
	case "allocs":
		return r.allocs(f[1])
	default:
		t.Fatalf("unknown command %q", f[0])
	}
	return ""
}

// nodeRef resolves @name to the node of the newest live allocation named
// name (the harness clock orders them), or returns ref.
func (r *runner) nodeRef(ref string) string {
	if !strings.HasPrefix(ref, "@") {
		return ref
	}
	var best *events.Allocation
	for _, al := range r.h.State.Allocs() {
		if al.Name == ref[1:] && !al.Terminal() && (best == nil || al.CreateTime > best.CreateTime) {
			best = al
		}
	}
	if best == nil {
		r.t.Fatalf("no live alloc %s", ref[1:])
	}
	return best.NodeID
}

func cloneMap(m map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range m {
		out[k] = v
	}
	return out
}

func constraint(t *testing.T, s string) events.Constraint {
	p := strings.Split(s, ";")
	if len(p) != 3 {
		t.Fatalf("constraint %q: want L;op;R", s)
	}
	return events.Constraint{LTarget: p[0], Operand: p[1], RTarget: strings.ReplaceAll(p[2], "_", " ")}
}

func (r *runner) job(id string, a map[string]string) {
	t, h := r.t, r.h
	typ := a["type"]
	if typ == "" {
		typ = events.JobTypeService
	}
	j := schedulertest.Job(id, typ, atoi(t, a["count"], 1))
	if old, ok := h.State.Job("default", id); ok {
		j.Version = old.Version + 1
		if _, set := a["type"]; !set {
			typ = old.Type
			j = schedulertest.Job(id, typ, atoi(t, a["count"], 1))
			j.Version = old.Version + 1
		}
	}
	tg := &j.TaskGroups[0]
	res := tg.Tasks[0].Resources
	for k, v := range a {
		switch k {
		case id, "type", "count", "canary":
		case "cpu":
			res.CPU = atoi(t, v, 0)
		case "mem":
			res.MemoryMB = atoi(t, v, 0)
		case "memmax":
			res.MemoryMaxMB = atoi(t, v, 0)
		case "disk":
			res.DiskMB = atoi(t, v, 0)
		case "dc":
			j.Datacenters = strings.Split(v, ",")
		case "pool":
			j.NodePool = v
		case "driver":
			tg.Tasks[0].Driver = v
		case "group":
			tg.Name = v
		case "command":
			tg.Tasks[0].Config = events.TaskConfig{"command": v}
		case "constraint":
			j.Constraints = append(j.Constraints, constraint(t, v))
		case "gconstraint":
			tg.Constraints = append(tg.Constraints, constraint(t, v))
		case "distinct_hosts":
			j.Constraints = append(j.Constraints, events.Constraint{Operand: events.ConstraintDistinctHosts})
		case "gdistinct_hosts":
			tg.Constraints = append(tg.Constraints, events.Constraint{Operand: events.ConstraintDistinctHosts})
		case "disconnect":
			p := strings.Split(v, ";")
			tg.Disconnect = &events.Disconnect{LostAfter: dur(t, p[0]), Replace: p[1] == "true", Reconcile: p[2]}
		case "mcd":
			tg.MaxClientDisconnect = dur(t, v)
		case "resched":
			p := strings.Split(v, ";")
			tg.ReschedulePolicy = &events.ReschedulePolicy{Attempts: atoi(t, p[0], 0), Interval: dur(t, p[1]),
				Delay: dur(t, p[2]), DelayFunction: p[3], MaxDelay: dur(t, p[4]), Unlimited: len(p) > 5 && p[5] == "unlimited"}
		case "noresched":
			tg.ReschedulePolicy = nil
		case "update":
			j.Update = &events.UpdateStrategy{MaxParallel: atoi(t, v, 1)}
			tg.Update = j.Update
		case "static", "dynamic":
			if len(tg.Networks) == 0 {
				tg.Networks = []events.NetworkResource{{Mode: events.NetworkModeHost}}
			}
			nw := &tg.Networks[0]
			for _, one := range strings.Split(v, ",") {
				p := strings.Split(one, ";")
				if k == "static" {
					port := events.Port{Label: p[0], Value: atoi(t, p[1], 0)}
					if len(p) > 2 {
						port.HostNetwork = p[2]
					}
					nw.ReservedPorts = append(nw.ReservedPorts, port)
				} else {
					port := events.Port{Label: p[0]}
					if len(p) > 1 {
						port.HostNetwork = p[1]
					}
					nw.DynamicPorts = append(nw.DynamicPorts, port)
				}
			}
		case "hvol":
			src, ro, _ := strings.Cut(v, ";")
			tg.Volumes = map[string]*events.VolumeRequest{"data": {Name: "data", Type: events.VolumeTypeHost, Source: src,
				ReadOnly: ro == "ro"}}
		default:
			// meta.k=v, gmeta.k=v and tmeta.k=v set job, group and task meta.
			m := map[string]*map[string]string{"meta": &j.Meta, "gmeta": &tg.Meta, "tmeta": &tg.Tasks[0].Meta}
			level, key, ok := strings.Cut(k, ".")
			if dst := m[level]; ok && dst != nil {
				*dst = cloneMap(*dst)
				(*dst)[key] = v
				continue
			}
			t.Fatalf("job: unknown argument %q", k)
		}
	}
	h.State.UpsertJob(j)
	h.Bump()
}

func (r *runner) eval(job string, a map[string]string, followUp bool) string {
	t, h := r.t, r.h
	var e *events.Evaluation
	if followUp {
		for _, c := range h.Evals {
			if c.Status == events.EvalStatusPending && c.PreviousEval != "" && c.JobID == job && !r.done[c.ID] {
				e = c
				break
			}
		}
		if e == nil {
			t.Fatal("no pending follow-up")
		}
		if r.done == nil {
			r.done = map[string]bool{}
		}
		if e.WaitUntil > h.Now {
			return fmt.Sprintf("follow-up not due for %s", time.Duration(e.WaitUntil-h.Now))
		}
		r.done[e.ID] = true
		c := *e
		c.ModifyTime = h.Now
		e = &c
	} else {
		trigger := a["trigger"]
		if trigger == "" {
			trigger = events.EvalTriggerJobRegister
		}
		e = h.NewEval("default", job, trigger)
	}
	r.lastEval, r.snapshot = e, h.State.Clone()
	plan, res, err := h.Process(e)
	if err != nil {
		return "error: " + err.Error()
	}
	b, err := plan.Encode()
	if err != nil {
		t.Fatal(err)
	}
	r.lastPlan = b
	return r.render(plan, &res)
}

// names maps alloc ids to "name@node" for rendering.
func (r *runner) label(id string, plan *scheduler.Plan) string {
	if al, ok := r.h.State.Alloc(id); ok {
		return al.Name + "@" + al.NodeID
	}
	for _, p := range plan.Placements {
		if p.ID == id {
			return p.Name + "@" + p.NodeID
		}
	}
	return id
}

func (r *runner) evalLabel(id string, plan *scheduler.Plan) string {
	for i, f := range plan.FollowUps {
		if f.ID == id {
			return fmt.Sprintf("followup#%d", i)
		}
	}
	return id
}

func (r *runner) render(plan *scheduler.Plan, res *plan.Result) string {
	var b strings.Builder
	fmt.Fprintf(&b, "plan %s at index %d\n", plan.EvalID, plan.SnapshotIndex)
	if r.summary {
		perNode := map[string]int{}
		for _, p := range plan.Placements {
			perNode[p.NodeID]++
		}
		for _, n := range sortedKeys(perNode) {
			fmt.Fprintf(&b, "placed %d on %s\n", perNode[n], n)
		}
	}
	for _, p := range plan.Placements {
		if r.summary {
			break
		}
		fmt.Fprintf(&b, "place %s on %s", p.Name, p.NodeID)
		if p.PreviousAllocation != "" {
			fmt.Fprintf(&b, " replacing %s", r.label(p.PreviousAllocation, plan))
		}
		if n := len(p.RescheduleEvents); n > 0 {
			fmt.Fprintf(&b, " (reschedule #%d, delay %s)", n, p.RescheduleEvents[n-1].Delay)
		}
		if p.DeploymentID != "" {
			b.WriteString(" [deployment]")
		}
		if ports := p.AllocatedResources.Ports(); len(ports) > 0 {
			b.WriteString(" ports[")
			for i, pm := range ports {
				if i > 0 {
					b.WriteString(" ")
				}
				fmt.Fprintf(&b, "%s=%s:%d", pm.Label, pm.HostIP, pm.Value)
			}
			b.WriteString("]")
		}
		b.WriteString("\n")
	}
	for _, s := range plan.Stops {
		fmt.Fprintf(&b, "stop %s: %s", r.label(s.ID, plan), s.DesiredDescription)
		if s.ClientStatus != "" {
			fmt.Fprintf(&b, " (client %s)", s.ClientStatus)
		}
		b.WriteString("\n")
	}
	for _, u := range plan.Updates {
		fmt.Fprintf(&b, "update %s:", r.label(u.ID, plan))
		if u.ClientStatus != "" {
			fmt.Fprintf(&b, " client %s", u.ClientStatus)
		}
		if u.FollowupEvalID != "" {
			fmt.Fprintf(&b, " follow-up %s", r.evalLabel(u.FollowupEvalID, plan))
		}
		b.WriteString("\n")
	}
	for i, f := range plan.FollowUps {
		fmt.Fprintf(&b, "followup#%d %s in %s\n", i, f.TriggeredBy, time.Duration(f.WaitUntil-r.h.Now))
	}
	if d := plan.Deployment; d != nil {
		fmt.Fprintf(&b, "deployment %s v%d", d.Status, d.JobVersion)
		for _, g := range sortedKeys(d.TaskGroups) {
			fmt.Fprintf(&b, " %s(desired=%d placed=%d)", g, d.TaskGroups[g].DesiredTotal, d.TaskGroups[g].PlacedAllocs)
		}
		b.WriteString("\n")
	}
	for _, g := range sortedKeys(plan.FailedTGAllocs) {
		m := plan.FailedTGAllocs[g]
		fmt.Fprintf(&b, "failed %s: evaluated=%d filtered=%d exhausted=%d in-pool=%d coalesced=%d", g,
			m.NodesEvaluated, m.NodesFiltered, m.NodesExhausted, m.NodesInPool, m.CoalescedFailures)
		for _, k := range sortedKeys(m.ConstraintFiltered) {
			fmt.Fprintf(&b, " constraint[%s]=%d", k, m.ConstraintFiltered[k])
		}
		for _, k := range sortedKeys(m.DimensionExhausted) {
			fmt.Fprintf(&b, " dimension[%s]=%d", k, m.DimensionExhausted[k])
		}
		for _, k := range sortedKeys(m.ClassFiltered) {
			fmt.Fprintf(&b, " class-filtered[%s]=%d", k, m.ClassFiltered[k])
		}
		b.WriteString("\n")
	}
	var queued []string
	for _, g := range sortedKeys(plan.QueuedAllocations) {
		queued = append(queued, fmt.Sprintf("%s=%d", g, plan.QueuedAllocations[g]))
	}
	if len(queued) > 0 {
		fmt.Fprintf(&b, "queued %s\n", strings.Join(queued, " "))
	}
	if plan.CreateBlockedEval {
		fmt.Fprintf(&b, "blocked eval (escaped=%v classes=%s)\n", plan.EscapedComputedClass, r.classes(plan.ClassEligibility))
	}
	if plan.Complete {
		b.WriteString("job complete\n")
	}
	for _, n := range res.RejectedNodes {
		fmt.Fprintf(&b, "planner rejected %s: %s (refresh at %d)\n", n, res.Reasons[n], res.RefreshIndex)
	}
	if plan.IsNoOp() && len(plan.FailedTGAllocs) == 0 {
		b.WriteString("no-op\n")
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// classes renders class eligibility by the nodes of each computed class
// ([n1,n2:true n3:false]), since the class names are hashes.
func (r *runner) classes(elig map[string]bool) string {
	members := map[string][]string{}
	for _, n := range r.h.State.Nodes() {
		c := events.ComputedClass(n.Datacenter, n.NodeClass, n.NodePool, n.Attributes, n.Meta, n.Drivers, n.HostVolumes)
		members[c] = append(members[c], n.ID)
	}
	var parts []string
	for c, ok := range elig {
		names := members[c]
		if len(names) == 0 {
			names = []string{c}
		}
		parts = append(parts, fmt.Sprintf("%s:%v", strings.Join(names, ","), ok))
	}
	sort.Strings(parts)
	return "[" + strings.Join(parts, " ") + "]"
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

func (r *runner) allocs(job string) string {
	var rows []*events.Allocation
	for _, al := range r.h.State.AllocsByJob("default", job) {
		rows = append(rows, al)
	}
	slices.SortFunc(rows, func(x, y *events.Allocation) int {
		if c := strings.Compare(x.Name, y.Name); c != 0 {
			return c
		}
		if x.CreateTime != y.CreateTime {
			return int(x.CreateTime - y.CreateTime)
		}
		return strings.Compare(x.ID, y.ID)
	})
	var b strings.Builder
	for _, al := range rows {
		fmt.Fprintf(&b, "%s on %s: %s/%s v%d\n", al.Name, al.NodeID, al.DesiredStatus, al.ClientStatus, al.JobVersion)
	}
	if b.Len() == 0 {
		return "none"
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// ports renders the host ports of the live allocations on each node (or
// the nodes named), after checking what the scheduler and the plan
// applier must guarantee: no port twice on a node, none reserved by it,
// dynamic ones in its range.
func (r *runner) ports(only []string) string {
	type held struct {
		port  int
		label string
	}
	byNode := map[string][]held{}
	for _, al := range r.h.State.Allocs() {
		if al.Terminal() || al.AllocatedResources == nil {
			continue
		}
		for _, pm := range al.AllocatedResources.Ports() {
			byNode[al.NodeID] = append(byNode[al.NodeID], held{pm.Value, al.Name + "." + pm.Label})
		}
		for _, nw := range al.AllocatedResources.Shared.Networks {
			n, _ := r.h.State.Node(al.NodeID)
			lo, hi := n.MinDynamicPort, n.MaxDynamicPort
			if lo == 0 {
				lo, hi = events.DefaultMinDynamicPort, events.DefaultMaxDynamicPort
			}
			for _, p := range nw.DynamicPorts {
				if p.Value < lo || p.Value > hi {
					r.t.Fatalf("%s: dynamic port %s=%d outside %d-%d", al.Name, p.Label, p.Value, lo, hi)
				}
			}
		}
	}
	var b strings.Builder
	for _, node := range sortedKeys(byNode) {
		if len(only) > 0 && !slices.Contains(only, node) {
			continue
		}
		hs := byNode[node]
		slices.SortFunc(hs, func(x, y held) int { return x.port - y.port })
		n, _ := r.h.State.Node(node)
		reserved, err := events.ParsePortList(n.ReservedPorts)
		if err != nil {
			r.t.Fatal(err)
		}
		for i, x := range hs {
			if i > 0 && hs[i-1].port == x.port {
				r.t.Fatalf("node %s: port %d held by %s and %s", node, x.port, hs[i-1].label, x.label)
			}
			if events.PortInList(reserved, x.port) {
				r.t.Fatalf("node %s: reserved port %d held by %s", node, x.port, x.label)
			}
		}
		if len(hs) > 8 {
			fmt.Fprintf(&b, "%s: %d ports, distinct, %d-%d\n", node, len(hs), hs[0].port, hs[len(hs)-1].port)
			continue
		}
		fmt.Fprintf(&b, "%s:", node)
		for _, x := range hs {
			fmt.Fprintf(&b, " %s=%d", x.label, x.port)
		}
		b.WriteString("\n")
	}
	if b.Len() == 0 {
		return "none"
	}
	return strings.TrimSuffix(b.String(), "\n")
}

func (r *runner) latest(job string) *events.Deployment {
	d, ok := r.h.State.LatestDeployment("default", job)
	if !ok {
		r.t.Fatalf("no deployment for %s", job)
	}
	return d
}

// deployment renders the job's latest deployment and its canaries.
func (r *runner) deployment(job string) string {
	d := r.latest(job)
	var b strings.Builder
	fmt.Fprintf(&b, "deployment %s v%d", d.Status, d.JobVersion)
	for _, g := range sortedKeys(d.TaskGroups) {
		st := d.TaskGroups[g]
		var names []string
		for _, id := range st.PlacedCanaries {
			names = append(names, r.label(id, &scheduler.Plan{}))
		}
		fmt.Fprintf(&b, " %s(desired=%d canaries=%d placed=[%s] promoted=%v)", g, st.DesiredTotal,
			st.DesiredCanaries, strings.Join(names, " "), st.Promoted)
	}
	return b.String()
}
