package all_test

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/allocs"
	"github.com/ordoplane/ordo/projections/jobs"
	"github.com/ordoplane/ordo/projections/nodes"
	pt "github.com/ordoplane/ordo/projections/projectionstest"
	"github.com/ordoplane/ordo/projections/services"
	"github.com/ordoplane/ordo/projections/variables"
)

// TestScripts runs the scripts in testdata: events in, table dumps out,
// through an FSM over a real store maintaining every projection
// (datadriven; rewrite the expectations with -rewrite). Each file starts
// from an empty store.
//
//	apply            one entry at the next index; its input holds one event a
//	                 line, "<event type> <payload as JSON>"; prints the index
//	                 or the rejection
//	jobs             the jobs table: each job with its version, status,
//	                 indexes and task group summary
//	allocs           the allocations in creation order
//	nodes            the nodes by id
//	variables        the variables' metadata (never their encrypted data)
//	services         the service instances by namespace, name and id, with
//	                 their node and allocation, and each service's change index
func TestScripts(t *testing.T) {
	datadriven.Walk(t, "testdata", func(t *testing.T, path string) {
		store := pt.OpenStore(t)
		f := pt.NewFSM(t, store)
		var index uint64
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			v := projections.NewView(store)
			switch d.Cmd {
			case "apply":
				index++
				res := pt.ApplyOne(t, f, index, pt.Entry(t, "", payloads(t, d.Input)...))
				if res.Err != nil {
					return fmt.Sprintf("index %d: %v", index, res.Err)
				}
				return fmt.Sprintf("index %d", index)
			case "jobs":
				return dumpJobs(t, v)
			case "allocs":
				return dumpAllocs(t, v)
			case "nodes":
				return dumpNodes(t, v)
			case "variables":
				return dumpVariables(t, v)
			case "services":
				return dumpServices(t, v)
			}
			t.Fatalf("unknown command %q", d.Cmd)
			return ""
		})
	})
}

// payloads decodes an apply block's events, one "<type> <json>" a line.
func payloads(t *testing.T, input string) []events.Payload {
	var out []events.Payload
	for _, line := range strings.Split(input, "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		name, body, _ := strings.Cut(line, " ")
		typ, ok := events.Lookup(name)
		if !ok {
			t.Fatalf("unknown event type %q", name)
		}
		p := typ.New()
		if err := json.Unmarshal([]byte(body), p); err != nil {
			t.Fatalf("%s payload: %v", name, err)
		}
		out = append(out, p)
	}
	return out
}

func dumpJobs(t *testing.T, v projections.View) string {
	var b strings.Builder
	err := jobs.Scan(v, jobs.Query{Namespace: jobs.AllNamespaces}, func(s *jobs.Stub) error {
		j, err := jobs.Get(v, s.Namespace, s.ID)
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, "%s/%s v%d %s status=%s stop=%v create=%d modify=%d job-modify=%d\n", s.Namespace, s.ID,
			j.Version, s.Type, s.Status, s.Stop, s.CreateIndex, s.ModifyIndex, s.JobModifyIndex)
		if s.JobSummary != nil {
			groups := make([]string, 0, len(s.JobSummary.Summary))
			for g := range s.JobSummary.Summary {
				groups = append(groups, g)
			}
			sort.Strings(groups)
			for _, g := range groups {
				c := s.JobSummary.Summary[g]
				fmt.Fprintf(&b, "  %s: queued=%d starting=%d running=%d complete=%d failed=%d lost=%d unknown=%d\n",
					g, c.Queued, c.Starting, c.Running, c.Complete, c.Failed, c.Lost, c.Unknown)
			}
		}
		return nil
	})
	return dump(t, &b, err)
}

func dumpAllocs(t *testing.T, v projections.View) string {
	var b strings.Builder
	err := allocs.Scan(v, allocs.Query{}, func(a *allocs.Alloc) error {
		fmt.Fprintf(&b, "%s %s job=%s/%s v%d node=%s desired=%s client=%s create=%d modify=%d\n", a.ID, a.Name,
			a.Namespace, a.JobID, a.JobVersion, a.NodeID, a.DesiredStatus, a.ClientStatus, a.CreateIndex, a.ModifyIndex)
		return nil
	})
	return dump(t, &b, err)
}

func dumpNodes(t *testing.T, v projections.View) string {
	var b strings.Builder
	err := nodes.Scan(v, nodes.Query{}, func(n *nodes.Node) error {
		fmt.Fprintf(&b, "%s %s pool=%s status=%s eligibility=%s drain=%v create=%d modify=%d\n", n.ID, n.Datacenter,
			n.NodePool, n.Status, n.SchedulingEligibility, n.Drain, n.CreateIndex, n.ModifyIndex)
		return nil
	})
	return dump(t, &b, err)
}

func dumpVariables(t *testing.T, v projections.View) string {
	var b strings.Builder
	err := variables.Scan(v, variables.Query{Namespace: variables.AllNamespaces}, func(x *variables.Variable) error {
		fmt.Fprintf(&b, "%s/%s key=%s bytes=%d create=%d modify=%d\n", x.Namespace, x.Path, x.KeyID, len(x.Data),
			x.CreateIndex, x.ModifyIndex)
		return nil
	})
	return dump(t, &b, err)
}

func dumpServices(t *testing.T, v projections.View) string {
	var b strings.Builder
	err := services.Scan(v, services.AllNamespaces, func(s *events.ServiceRegistration) error {
		ni, err := services.NameIndex(v, s.Namespace, s.ServiceName)
		var checks []string
		for _, c := range s.Checks {
			checks = append(checks, c.Name+"="+c.Status)
		}
		fmt.Fprintf(&b, "%s/%s %s %s:%d tags=%v checks=%v node=%s alloc=%s create=%d modify=%d service-index=%d\n", s.Namespace,
			s.ServiceName, s.ID, s.Address, s.Port, s.Tags, checks, s.NodeID, s.AllocID, s.CreateIndex, s.ModifyIndex, ni)
		return err
	})
	return dump(t, &b, err)
}

func dump(t *testing.T, b *strings.Builder, err error) string {
	if err != nil {
		t.Fatal(err)
	}
	if b.Len() == 0 {
		return "empty"
	}
	return b.String()
}
