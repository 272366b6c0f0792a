package drainer

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"

	"github.com/ordoplane/ordo/events"
)

// TestDecideScripts runs testdata/decide: decide driven by a script
// (datadriven; rewrite the expectations with -rewrite). Each "decide
// now=<ns>" block's input describes the state, one item a line:
//
//	drain <node> [deadline=<ns>] [ignore-system]     a draining node
//	job <id> <type> [max_parallel=N]                 a job with group g (a migrate block when max_parallel is set)
//	alloc <id> job=<id> node=<id> [marked] [stopped] [pending|failed|complete]
//	      [next=<id>] [prev=<id>] [deployment] [healthy=true|false]
//	                                                 an allocation of the job's group g, running unless said
//
// The output is the plan: a line per allocation marked (node/alloc and
// why), per node whose drain is complete, and the next force deadline.
func TestDecideScripts(t *testing.T) {
	datadriven.RunTest(t, "testdata/decide", func(t *testing.T, d *datadriven.TestData) string {
		if d.Cmd != "decide" {
			t.Fatalf("unknown command %q", d.Cmd)
		}
		var now int64
		if arg, ok := d.Arg("now"); ok {
			now = parseInt(t, arg.Vals[0])
		}
		w := newWorld()
		for _, line := range strings.Split(d.Input, "\n") {
			cmd, args, err := datadriven.ParseLine(line)
			if err != nil {
				t.Fatal(err)
			}
			if cmd == "" {
				continue
			}
			id := args[0].Key
			vals := map[string]string{}
			for _, a := range args[1:] {
				vals[a.Key] = strings.Join(a.Vals, ",")
			}
			switch cmd {
			case "drain":
				var ds events.DrainStrategy
				if v, ok := vals["deadline"]; ok {
					ds.ForceDeadline = parseInt(t, v)
				}
				_, ds.IgnoreSystemJobs = vals["ignore-system"]
				w.drain(id, ds)
			case "job":
				var migrate *events.MigrateStrategy
				if v, ok := vals["max_parallel"]; ok {
					migrate = &events.MigrateStrategy{MaxParallel: int(parseInt(t, v))}
				}
				w.job(id, args[1].Key, migrate)
			case "alloc":
				w.alloc(id, vals["job"], vals["node"], allocOpts(t, vals)...)
			default:
				t.Fatalf("decide: unknown input %q", cmd)
			}
		}
		before := fmt.Sprint(w.s.Allocs)
		p := decide(w.s, now)
		if fmt.Sprint(w.s.Allocs) != before {
			t.Fatal("decide changed its state")
		}
		var b strings.Builder
		for _, m := range p.Marks {
			fmt.Fprintf(&b, "mark %s/%s (%s)\n", m.NodeID, m.AllocID, m.Reason)
		}
		for _, n := range p.Complete {
			fmt.Fprintf(&b, "complete %s\n", n.ID)
		}
		if p.Next != 0 {
			fmt.Fprintf(&b, "next deadline %d\n", p.Next)
		}
		if b.Len() == 0 {
			return "nothing to do"
		}
		return b.String()
	})
}

// allocOpts turns an alloc line's arguments into world options.
func allocOpts(t *testing.T, vals map[string]string) []func(*events.Allocation) {
	var opts []func(*events.Allocation)
	for k, v := range vals {
		switch k {
		case "job", "node":
		case "marked":
			opts = append(opts, marked)
		case "stopped":
			opts = append(opts, stopped)
		case "pending":
			opts = append(opts, pending)
		case "failed":
			opts = append(opts, failed)
		case "complete":
			opts = append(opts, complete)
		case "next":
			opts = append(opts, next(v))
		case "prev":
			opts = append(opts, prev(v))
		case "deployment":
			var healthy *bool
			if h, ok := vals["healthy"]; ok {
				b := h == "true"
				healthy = &b
			}
			opts = append(opts, inDeployment(healthy))
		case "healthy":
		default:
			t.Fatalf("alloc: unknown argument %q", k)
		}
	}
	return opts
}

func parseInt(t *testing.T, s string) int64 {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		t.Fatalf("bad number %q", s)
	}
	return n
}
