package node_test

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/commands/commandstest"
	"github.com/ordoplane/ordo/commands/node"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections/fsm"
	"github.com/ordoplane/ordo/projections/nodes"
)

// cluster is a state store fed through the FSM, as a server writes it.
type cluster struct {
	*commandstest.Cluster
}

func newCluster(t *testing.T, payloads ...events.Payload) *cluster {
	t.Helper()
	c := &cluster{Cluster: commandstest.NewCluster(t)}
	for _, p := range payloads {
		c.Apply(commands.Decision{Events: []events.Payload{p}})
	}
	return c
}

// run decides cmd against the current state and applies the decision.
func (c *cluster) run(cmd commands.Command) (commands.Decision, fsm.Result) {
	c.T.Helper()
	if err := cmd.Validate(); err != nil {
		c.T.Fatalf("Validate(%+v): %v", cmd, err)
	}
	dec, err := cmd.Decide(c.View(), now, noIDs)
	if err != nil {
		c.T.Fatalf("Decide(%+v): %v", cmd, err)
	}
	if len(dec.Events) == 0 {
		return dec, fsm.Result{}
	}
	return dec, c.Apply(dec)
}

func (c *cluster) node(id string) *nodes.Node {
	c.T.Helper()
	n, err := nodes.Get(c.View(), id)
	if err != nil {
		c.T.Fatalf("node %s: %v", id, err)
	}
	return n
}

var now = time.Unix(1_700_000_000, 0).UTC()

func noIDs() string { panic("node commands must not mint ids") }

func regNode(id string) events.Node {
	return events.Node{ID: id, Name: "client-" + id, Datacenter: "dc1",
		Resources: events.NodeResources{CPU: 2000, MemoryMB: 4096, DiskMB: 1024}}
}

func registered(id, status string) *events.NodeRegistered {
	n := regNode(id)
	n.NodePool, n.Status = node.DefaultPool, status
	return &events.NodeRegistered{Node: n}
}

func TestValidate(t *testing.T) {
	withNode := func(f func(*events.Node)) node.Register {
		n := regNode("n1")
		f(&n)
		return node.Register{Node: n}
	}
	for _, tc := range []struct {
		name  string
		cmd   commands.Command
		field string
	}{
		{"register", node.Register{Node: regNode("n1")}, ""},
		{"register uuid", node.Register{Node: regNode("f3c1b2a4-5d6e-4f70-8a9b-0c1d2e3f4a5b")}, ""},
		{"register ready", withNode(func(n *events.Node) { n.Status = events.NodeStatusReady }), ""},
		{"register no id", withNode(func(n *events.Node) { n.ID = "" }), "ID"},
		{"register id slash", withNode(func(n *events.Node) { n.ID = "a/b" }), "ID"},
		{"register id too long", withNode(func(n *events.Node) { n.ID = strings.Repeat("a", 129) }), "ID"},
		{"register no name", withNode(func(n *events.Node) { n.Name = "" }), "Name"},
		{"register name newline", withNode(func(n *events.Node) { n.Name = "a\nb" }), "Name"},
		{"register no datacenter", withNode(func(n *events.Node) { n.Datacenter = "" }), "Datacenter"},
		{"register bad datacenter", withNode(func(n *events.Node) { n.Datacenter = "dc 1" }), "Datacenter"},
		{"register bad pool", withNode(func(n *events.Node) { n.NodePool = "*" }), "NodePool"},
		{"register as down", withNode(func(n *events.Node) { n.Status = events.NodeStatusDown }), "Status"},
		{"register bogus status", withNode(func(n *events.Node) { n.Status = "up" }), "Status"},
		{"register negative cpu", withNode(func(n *events.Node) { n.Resources.CPU = -1 }), "Resources.CPU"},
		{"register negative reserved mem", withNode(func(n *events.Node) { n.Reserved.MemoryMB = -1 }), "Reserved.MemoryMB"},
		{"register empty driver", withNode(func(n *events.Node) { n.Drivers = map[string]events.DriverInfo{"": {}} }), "Drivers"},
		{"register empty attribute", withNode(func(n *events.Node) { n.Attributes = map[string]string{"": "x"} }), "Attributes"},
		{"status ready", node.UpdateStatus{ID: "n1", Status: events.NodeStatusReady}, ""},
		{"status missed down", node.UpdateStatus{ID: "n1", Status: events.NodeStatusDown, MissedHeartbeat: true}, ""},
		{"status no id", node.UpdateStatus{Status: events.NodeStatusReady}, "ID"},
		{"status bogus", node.UpdateStatus{ID: "n1", Status: "up"}, "Status"},
		{"status empty", node.UpdateStatus{ID: "n1"}, "Status"},
		{"status missed ready", node.UpdateStatus{ID: "n1", Status: events.NodeStatusReady, MissedHeartbeat: true}, "Status"},
		{"eligible", node.UpdateEligibility{ID: "n1", Eligibility: events.NodeEligible}, ""},
		{"eligibility bogus", node.UpdateEligibility{ID: "n1", Eligibility: "yes"}, "Eligibility"},
		{"eligibility no id", node.UpdateEligibility{Eligibility: events.NodeEligible}, "ID"},
		{"drain", node.UpdateDrain{ID: "n1", Spec: &node.DrainSpec{Deadline: time.Hour}}, ""},
		{"drain stop", node.UpdateDrain{ID: "n1", MarkEligible: true}, ""},
		{"drain mark eligible while starting", node.UpdateDrain{ID: "n1", Spec: &node.DrainSpec{}, MarkEligible: true}, "MarkEligible"},
		{"drain no id", node.UpdateDrain{}, "ID"},
		{"deregister", node.Deregister{ID: "n1"}, ""},
		{"deregister no id", node.Deregister{}, "ID"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.cmd.Validate()
			if tc.field == "" {
				if err != nil {
					t.Fatalf("Validate() = %v", err)
				}
				return
			}
			commandstest.WantField(t, err, tc.field)
			if commands.Status(err) != 400 {
				t.Fatalf("Status = %d", commands.Status(err))
			}
		})
	}
}

func TestRegisterDecide(t *testing.T) {
	c := newCluster(t, registered("old", events.NodeStatusReady),
		&events.NodeStatusUpdated{ID: "old", Status: events.NodeStatusDisconnected, MissedHeartbeat: true})
	fresh := regNode("new")
	wantFresh := fresh
	wantFresh.NodePool, wantFresh.Status = node.DefaultPool, events.NodeStatusInitializing
	changed := regNode("old")
	changed.Status = events.NodeStatusReady // asks for ready: ignored for an existing node
	changed.Resources.CPU = 9000
	wantChanged := changed
	wantChanged.NodePool, wantChanged.Status = node.DefaultPool, events.NodeStatusDisconnected
	same := regNode("old")
	same.Attributes, same.Meta = map[string]string{}, map[string]string{}
	for _, tc := range []struct {
		name string
		n    events.Node
		want commands.Decision
	}{
		{"new node starts initializing", fresh, commands.Decision{
			Events:        []events.Payload{&events.NodeRegistered{Node: wantFresh}},
			Preconditions: []events.Precondition{{Table: nodes.Table, Key: "new", Op: events.Absent}}}},
		{"existing node keeps its status", changed, commands.Decision{
			Events:        []events.Payload{&events.NodeRegistered{Node: wantChanged}},
			Preconditions: []events.Precondition{{Table: nodes.Table, Key: "old", Op: events.Exists}}}},
		{"unchanged registration appends nothing", same, commands.Decision{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := node.Register{Node: tc.n}.Decide(c.View(), now, noIDs)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("Decide =\n %#v\nwant\n %#v", got, tc.want)
			}
		})
	}
}

func TestEffective(t *testing.T) {
	for _, tc := range []struct {
		status        string
		missed, alloc uint64
		ask, want     string
	}{
		{events.NodeStatusInitializing, 0, 0, events.NodeStatusReady, events.NodeStatusReady},
		{events.NodeStatusReady, 0, 0, events.NodeStatusReady, events.NodeStatusReady},
		{events.NodeStatusDown, 5, 0, events.NodeStatusReady, events.NodeStatusReady},
		{events.NodeStatusDisconnected, 5, 0, events.NodeStatusReady, events.NodeStatusInitializing},
		{events.NodeStatusDisconnected, 5, 5, events.NodeStatusReady, events.NodeStatusInitializing},
		{events.NodeStatusDisconnected, 5, 6, events.NodeStatusReady, events.NodeStatusReady},
		{events.NodeStatusInitializing, 5, 3, events.NodeStatusReady, events.NodeStatusInitializing},
		{events.NodeStatusInitializing, 5, 6, events.NodeStatusReady, events.NodeStatusReady},
		{events.NodeStatusDisconnected, 5, 0, events.NodeStatusDown, events.NodeStatusDown},
		{events.NodeStatusReady, 0, 0, events.NodeStatusDisconnected, events.NodeStatusDisconnected},
	} {
		n := &nodes.Node{Status: tc.status, LastMissedHeartbeatIndex: tc.missed, LastAllocUpdateIndex: tc.alloc}
		if got := node.Effective(n, tc.ask); got != tc.want {
			t.Errorf("%s (missed %d, alloc %d) asking %s -> %s, want %s", tc.status, tc.missed, tc.alloc, tc.ask, got, tc.want)
		}
	}
}

func TestUpdateStatusDecide(t *testing.T) {
	c := newCluster(t, registered("r", events.NodeStatusReady), registered("d", events.NodeStatusReady),
		&events.NodeStatusUpdated{ID: "d", Status: events.NodeStatusDisconnected, MissedHeartbeat: true})
	r, d := c.node("r"), c.node("d")
	pre := func(n *nodes.Node) []events.Precondition {
		return []events.Precondition{{Table: nodes.Table, Key: n.ID, Op: events.ModifyIndex, Index: n.ModifyIndex},
			{Table: nodes.AllocUpdatesTable, Key: n.ID, Op: events.ModifyIndex, Index: n.LastAllocUpdateIndex}}
	}
	for _, tc := range []struct {
		name string
		cmd  node.UpdateStatus
		want commands.Decision
	}{
		{"ready to ready appends nothing", node.UpdateStatus{ID: "r", Status: events.NodeStatusReady}, commands.Decision{}},
		{"missed heartbeat", node.UpdateStatus{ID: "r", Status: events.NodeStatusDown, Description: "missed", MissedHeartbeat: true},
			commands.Decision{Events: []events.Payload{&events.NodeStatusUpdated{ID: "r", Status: events.NodeStatusDown,
				Description: "missed", MissedHeartbeat: true, UpdatedAt: now.UnixNano()}}, Preconditions: pre(r)}},
		{"disconnected asking ready initializes", node.UpdateStatus{ID: "d", Status: events.NodeStatusReady},
			commands.Decision{Events: []events.Payload{&events.NodeStatusUpdated{ID: "d", Status: events.NodeStatusInitializing,
				Description: "reconnecting: waiting for the node to update its allocations", UpdatedAt: now.UnixNano()}}, Preconditions: pre(d)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.cmd.Decide(c.View(), now, noIDs)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("Decide =\n %#v\nwant\n %#v", got, tc.want)
			}
		})
	}
	_, err := node.UpdateStatus{ID: "nope", Status: events.NodeStatusReady}.Decide(c.View(), now, noIDs)
	if commands.Status(err) != 404 {
		t.Fatalf("missing node: %v", err)
	}
}

// TestStatusRaceIsRejected: a ready decided before an alloc update or a
// missed heartbeat lands is refused at apply instead of overwriting it.
func TestStatusRaceIsRejected(t *testing.T) {
	c := newCluster(t, registered("d", events.NodeStatusReady),
		&events.NodeStatusUpdated{ID: "d", Status: events.NodeStatusDisconnected, MissedHeartbeat: true})
	dec, err := node.UpdateStatus{ID: "d", Status: events.NodeStatusReady}.Decide(c.View(), now, noIDs)
	if err != nil {
		t.Fatal(err)
	}
	c.Apply(commands.Decision{Events: []events.Payload{&events.NodeAllocsUpdated{ID: "d"}}})
	res := c.Apply(dec)
	var re *fsm.RejectedError
	if !errors.As(res.Err, &re) || re.Precondition.Op != events.ModifyIndex {
		t.Fatalf("stale status decision applied: %v", res.Err)
	}
	if n := c.node("d"); n.Status != events.NodeStatusDisconnected {
		t.Fatalf("status = %s", n.Status)
	}
}

func TestEligibilityDecide(t *testing.T) {
	c := newCluster(t, registered("e", ""), registered("dr", ""),
		&events.NodeDrainUpdated{ID: "dr", DrainStrategy: &events.DrainStrategy{StartedAt: 1}})
	e := c.node("e")
	got, err := node.UpdateEligibility{ID: "e", Eligibility: events.NodeIneligible}.Decide(c.View(), now, noIDs)
	want := commands.Decision{Events: []events.Payload{&events.NodeEligibilityUpdated{ID: "e", Eligibility: events.NodeIneligible}},
		Preconditions: []events.Precondition{{Table: nodes.Table, Key: "e", Op: events.ModifyIndex, Index: e.ModifyIndex}}}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("Decide = %#v, %v", got, err)
	}
	if got, err := (node.UpdateEligibility{ID: "e", Eligibility: events.NodeEligible}).Decide(c.View(), now, noIDs); err != nil || len(got.Events) != 0 {
		t.Fatalf("no-op eligibility = %#v, %v", got, err)
	}
	_, err = node.UpdateEligibility{ID: "dr", Eligibility: events.NodeEligible}.Decide(c.View(), now, noIDs)
	commandstest.WantField(t, err, "Eligibility")
	if _, err := (node.UpdateEligibility{ID: "x", Eligibility: events.NodeEligible}).Decide(c.View(), now, noIDs); commands.Status(err) != 404 {
		t.Fatalf("missing node: %v", err)
	}
}

func TestDrainDecide(t *testing.T) {
	c := newCluster(t, registered("n", ""))
	dec, res := c.run(node.UpdateDrain{ID: "n", Spec: &node.DrainSpec{Deadline: time.Hour, IgnoreSystemJobs: true}})
	if res.Err != nil {
		t.Fatal(res.Err)
	}
	want := &events.DrainStrategy{Deadline: int64(time.Hour), IgnoreSystemJobs: true,
		ForceDeadline: now.Add(time.Hour).UnixNano(), StartedAt: now.UnixNano()}
	if got := dec.Events[0].(*events.NodeDrainUpdated).DrainStrategy; !reflect.DeepEqual(got, want) {
		t.Fatalf("drain strategy = %+v, want %+v", got, want)
	}
	n := c.node("n")
	if !n.Drain || n.SchedulingEligibility != events.NodeIneligible {
		t.Fatalf("draining node = %+v", n)
	}
	// Changing a running drain keeps its start; a negative deadline forces now.
	later := now.Add(time.Minute)
	dec, err := node.UpdateDrain{ID: "n", Spec: &node.DrainSpec{Deadline: -1}}.Decide(c.View(), later, noIDs)
	if err != nil {
		t.Fatal(err)
	}
	if ds := dec.Events[0].(*events.NodeDrainUpdated).DrainStrategy; ds.StartedAt != now.UnixNano() || ds.ForceDeadline != later.UnixNano() {
		t.Fatalf("updated drain = %+v", ds)
	}
	// Stopping without MarkEligible leaves it ineligible; stopping an
	// undrained eligible node appends nothing.
	if _, res := c.run(node.UpdateDrain{ID: "n"}); res.Err != nil {
		t.Fatal(res.Err)
	}
	if n := c.node("n"); n.Drain || n.SchedulingEligibility != events.NodeIneligible {
		t.Fatalf("stopped drain = %+v", n)
	}
	if _, res := c.run(node.UpdateDrain{ID: "n", MarkEligible: true}); res.Err != nil {
		t.Fatal(res.Err)
	}
	if n := c.node("n"); n.SchedulingEligibility != events.NodeEligible {
		t.Fatalf("mark eligible = %+v", n)
	}
	if dec, _ := c.run(node.UpdateDrain{ID: "n", MarkEligible: true}); len(dec.Events) != 0 {
		t.Fatalf("no-op drain stop = %#v", dec)
	}
}

func TestDeregisterDecide(t *testing.T) {
	c := newCluster(t, registered("n", ""))
	dec, err := node.Deregister{ID: "n"}.Decide(c.View(), now, noIDs)
	want := commands.Decision{Events: []events.Payload{&events.NodeDeregistered{ID: "n"}},
		Preconditions: []events.Precondition{{Table: nodes.Table, Key: "n", Op: events.Exists}}}
	if err != nil || !reflect.DeepEqual(dec, want) {
		t.Fatalf("Decide = %#v, %v", dec, err)
	}
	c.Apply(dec)
	if res := c.Apply(dec); res.Err == nil {
		t.Fatal("second deregister applied")
	}
	if _, err := (node.Deregister{ID: "n"}).Decide(c.View(), now, noIDs); commands.Status(err) != 404 {
		t.Fatalf("deregister missing: %v", err)
	}
}
