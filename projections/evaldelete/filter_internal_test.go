package evaldelete

import (
	"fmt"
	"testing"

	"github.com/ordoplane/ordo/events"
)

// TestFastFilter: the compiled fast path gives go-bexpr's answer on every
// eval of a grid, for each filter it takes; filters it does not take
// (other operators, other fields) fall back to go-bexpr.
func TestFastFilter(t *testing.T) {
	fast := []string{
		`Status == "pending"`,
		`Status != "pending"`,
		`Status == "pending" and JobID == "web"`,
		`Status == "pending" or Namespace == "prod"`,
		`not (JobID == "web")`,
		`not Status == "complete" and (Type == "batch" or TriggeredBy != "job-register")`,
		`ID == "e1" or NodeID == "n1" or DeploymentID == ""`,
		`Status == pending`,
	}
	slow := []string{
		`JobID matches "^w"`,
		`"pending" in Status`,
		`Priority == 50`,
		`JobID contains "e"`,
		`status == "pending"`, // no such field: an error either way
		`Status == "pending" and Priority != 10`,
	}
	var grid []events.Evaluation
	i := 0
	for _, st := range []string{"pending", "complete", "blocked"} {
		for _, job := range []string{"web", "we\"b", "api"} {
			for _, ns := range []string{"default", "prod"} {
				for _, typ := range []string{"service", "batch"} {
					i++
					grid = append(grid, events.Evaluation{ID: fmt.Sprint("e", i), Status: st, JobID: job, Namespace: ns, Type: typ,
						TriggeredBy: []string{"job-register", "node-update"}[i%2], NodeID: []string{"", "n1"}[i%2],
						DeploymentID: []string{"d", ""}[i%3%2], Priority: 50})
				}
			}
		}
	}
	for _, expr := range append(append([]string{}, fast...), slow...) {
		f, err := Compile(expr)
		if err != nil {
			t.Fatalf("%s: %v", expr, err)
		}
		isFast := false
		for _, x := range fast {
			isFast = isFast || x == expr
		}
		if (f.fast != nil) != isFast {
			t.Fatalf("%s: fast path %v, want %v", expr, f.fast != nil, isFast)
		}
		for k := range grid {
			e := &grid[k]
			want, werr := f.ev.Evaluate(e)
			got, gerr := Match(f, e)
			if (werr != nil) != (gerr != nil) || got != want {
				t.Fatalf("%s on %+v: Match %v (%v), go-bexpr %v (%v)", expr, *e, got, gerr, want, werr)
			}
		}
	}
}

func BenchmarkMatch(b *testing.B) {
	e := &events.Evaluation{ID: "e1", Status: "pending", JobID: "web", Namespace: "default", Priority: 50}
	for _, expr := range []string{`Status == "pending" and JobID == "web"`, `JobID matches "^w"`} {
		f, _ := Compile(expr)
		b.Run(expr, func(b *testing.B) {
			for range b.N {
				_, _ = Match(f, e)
			}
		})
	}
}

// Pages in flight are applied together: by default their evals stay
// within EvalsInFlight, and there is always one.
func TestDefaultInFlight(t *testing.T) {
	for _, c := range []struct{ page, want int }{{0, 4}, {1, 4}, {50, 4}, {100, 4}, {101, 3}, {200, 2}, {250, 1}, {10000, 1}} {
		if got := DefaultInFlight(c.page); got != c.want {
			t.Errorf("DefaultInFlight(%d) = %d, want %d", c.page, got, c.want)
		}
	}
}
