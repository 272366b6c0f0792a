package capacity_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"

	"github.com/ordoplane/ordo/processors/capacity"
)

// TestDecideScripts runs testdata/decide: capacity.Decide for one pool,
// driven by a script (datadriven; rewrite the expectations with
// -rewrite). Each "decide" block's input describes the pool's state, one
// item a line; times are offsets from a fixed now.
//
//	pool [max=4] [idle=10m]                    the pool (these defaults when absent)
//	demand placements=N [seen=index] [settling]
//	request <id> <requested|pending|fulfilled|failed> [index=N]
//	instance <id> [request=<id>] [node=<id> change=index allocs=N usable draining initializing]
//	         [idle-since=<offset>]
//	backoff [until=<offset>] [for=<duration>]
//
// The output is the decision: requests to create, release and clean up,
// instances to return, the wake-up, the open requests and the supply,
// the backoff deadline and the idle times kept.
func TestDecideScripts(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	datadriven.RunTest(t, "testdata/decide", func(t *testing.T, d *datadriven.TestData) string {
		if d.Cmd != "decide" {
			t.Fatalf("unknown command %q", d.Cmd)
		}
		in := capacity.Input{Now: now, Pool: capacity.Pool{Name: "batch", Label: "small", MaxRequests: 4, IdleTimeout: 10 * time.Minute}}
		for _, line := range strings.Split(d.Input, "\n") {
			cmd, args, err := datadriven.ParseLine(line)
			if err != nil {
				t.Fatal(err)
			}
			a := argMap(args)
			switch cmd {
			case "":
			case "pool":
				scanInt(t, a, "max", &in.Pool.MaxRequests)
				scanDur(t, a, "idle", &in.Pool.IdleTimeout)
			case "demand":
				scanInt(t, a, "placements", &in.Demand.Placements)
				var seen int
				scanInt(t, a, "seen", &seen)
				in.Demand.SeenIndex = uint64(seen)
				_, in.Demand.Settling = a["settling"]
			case "request":
				r := capacity.Request{ID: args[0].Key, State: args[1].Key}
				var idx int
				scanInt(t, a, "index", &idx)
				r.CreateIndex = uint64(idx)
				in.Requests = append(in.Requests, r)
			case "instance":
				inst := capacity.Instance{ID: args[0].Key, RequestID: a["request"]}
				if id, ok := a["node"]; ok {
					n := &capacity.Node{ID: id}
					var change int
					scanInt(t, a, "change", &change)
					n.ChangeIndex = uint64(change)
					scanInt(t, a, "allocs", &n.Allocs)
					_, n.Usable = a["usable"]
					_, n.Draining = a["draining"]
					_, n.Initializing = a["initializing"]
					inst.Node = n
				}
				if _, ok := a["idle-since"]; ok {
					var off time.Duration
					scanDur(t, a, "idle-since", &off)
					if in.IdleSince == nil {
						in.IdleSince = map[string]time.Time{}
					}
					in.IdleSince[inst.ID] = now.Add(off)
				}
				in.Instances = append(in.Instances, inst)
			case "backoff":
				if _, ok := a["until"]; ok {
					var off time.Duration
					scanDur(t, a, "until", &off)
					in.BackoffUntil = now.Add(off)
				}
				scanDur(t, a, "for", &in.Backoff)
			default:
				t.Fatalf("decide: unknown input %q", cmd)
			}
		}
		return renderDecision(capacity.Decide(in), now)
	})
}

func renderDecision(dec capacity.Decision, now time.Time) string {
	var b strings.Builder
	if dec.Create > 0 {
		fmt.Fprintf(&b, "create %d\n", dec.Create)
	}
	if len(dec.Release) > 0 {
		fmt.Fprintf(&b, "release %s\n", strings.Join(dec.Release, " "))
	}
	if len(dec.Cleanup) > 0 {
		fmt.Fprintf(&b, "cleanup %s\n", strings.Join(dec.Cleanup, " "))
	}
	for _, r := range dec.Return {
		fmt.Fprintf(&b, "return %s request=%q node=%q drain=%v idle=%s\n", r.InstanceID, r.RequestID, r.NodeID, r.Drain, r.Idle)
	}
	if dec.Wake > 0 {
		fmt.Fprintf(&b, "wake in %s\n", dec.Wake)
	}
	fmt.Fprintf(&b, "open %d, supply %d\n", dec.Open, dec.Supply)
	if !dec.BackoffUntil.IsZero() {
		fmt.Fprintf(&b, "backoff until %s\n", dec.BackoffUntil.Sub(now))
	}
	ids := make([]string, 0, len(dec.IdleSince))
	for id := range dec.IdleSince {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		fmt.Fprintf(&b, "idle %s since %s\n", id, dec.IdleSince[id].Sub(now))
	}
	return b.String()
}

// argMap maps a script line's argument names to their first value ("" for none).
func argMap(args []datadriven.CmdArg) map[string]string {
	m := map[string]string{}
	for _, a := range args {
		m[a.Key] = ""
		if len(a.Vals) > 0 {
			m[a.Key] = a.Vals[0]
		}
	}
	return m
}

func scanInt(t *testing.T, a map[string]string, key string, dst *int) {
	t.Helper()
	if v, ok := a[key]; ok {
		if _, err := fmt.Sscan(v, dst); err != nil {
			t.Fatalf("%s=%q: %v", key, v, err)
		}
	}
}

func scanDur(t *testing.T, a map[string]string, key string, dst *time.Duration) {
	t.Helper()
	if v, ok := a[key]; ok {
		d, err := time.ParseDuration(v)
		if err != nil {
			t.Fatalf("%s=%q: %v", key, v, err)
		}
		*dst = d
	}
}
