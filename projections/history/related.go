package history

import (
	"fmt"
	"slices"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/history/summary"
	"github.com/ordoplane/ordo/storage/kv"
)

// Entity names one entity of a timeline: its kind and history id.
type Entity struct {
	Kind, ID string
}

// Members returns the evaluations, allocations and deployments of a job
// (id as JobID names it), in the order the job's own events first name
// them. They are found in the job's own events — the events keyed to the
// job, read through its index rows, never a scan of the archive: the evals
// an EvalsUpserted or AllocsPlaced names, the allocations an AllocsPlaced
// places, the deployment a DeploymentUpserted records, each only when it
// belongs to the job (an EvalsUpserted keyed to a job can carry other
// jobs' evals). An eval whose every event names another job first (one of
// a node update's evals, say) is found once an event keyed to the job
// names it — the scheduler's update of it does. r is where the events are
// read from (nil: the view's store).
func Members(v projections.View, id string, r kv.Reader) ([]Entity, error) {
	m, _, err := members(v, id, r)
	return m, err
}

// members returns the job's members and the job's own events by position.
func members(v projections.View, id string, r kv.Reader) ([]Entity, map[Pos]*events.Event, error) {
	if r == nil {
		r = v.Reader()
	}
	ns, job, _ := SplitJobID(id)
	own := map[Pos]*events.Event{}
	var out []Entity
	seen := map[Entity]bool{}
	add := func(kind, eid, ens, ejob string) {
		e := Entity{Kind: kind, ID: eid}
		if eid == "" || ens != ns || ejob != job || seen[e] {
			return
		}
		seen[e] = true
		out = append(out, e)
	}
	err := Scan(v, events.KindJob, id, false, func(p Pos) error {
		ev, err := readEvent(r, p)
		if err != nil || ev == nil {
			return err
		}
		own[p] = ev
		switch ev.Type {
		case "EvalsUpserted", "AllocsPlaced", "DeploymentUpserted":
		default:
			return nil
		}
		pl, err := events.Decode(ev)
		if err != nil {
			return nil // an event this build cannot read names nothing it can follow
		}
		switch pl := pl.(type) {
		case *events.EvalsUpserted:
			for _, e := range pl.Evals {
				add(events.KindEval, e.ID, e.Namespace, e.JobID)
			}
		case *events.AllocsPlaced:
			for _, a := range pl.Allocs {
				add(events.KindEval, pl.EvalID, a.Namespace, a.JobID)
				add(events.KindAlloc, a.ID, a.Namespace, a.JobID)
			}
		case *events.DeploymentUpserted:
			d := pl.Deployment
			add(events.KindDeployment, d.ID, d.Namespace, d.JobID)
		}
		return nil
	})
	return out, own, err
}

// entityLine is what one event did to one entity of a related timeline.
type entityLine struct {
	entity Entity
	line   summary.Line
}

// relatedTimeline answers a job's Query with Related set: the job's own
// events and every event of its members (Members), merged in commit order,
// each event once. An event keyed to the job shows as the job's line; an
// event that reaches the job only through its members shows one line per
// member it touched (an eval's only when it touched none of the job's
// allocations), each as that member's own timeline tells it (its tracker
// folds all of the member's events, so old values are right). A page
// holds PerPage events, with all their lines.
func relatedTimeline(v projections.View, q Query) (Page, error) {
	src := q.Archive
	if src == nil {
		src = v.Reader()
	}
	mem, own, err := members(v, q.ID, src)
	if err != nil {
		return Page{}, err
	}
	if len(own) == 0 {
		if ok, err := Exists(v, q.Kind, q.ID); err != nil || !ok {
			if err == nil {
				err = fmt.Errorf("%s %q: %w", q.Kind, q.ID, ErrNoHistory)
			}
			return Page{}, err
		}
	}
	// touched maps each position to the members it touched.
	touched := map[Pos][]int{}
	for i, m := range mem {
		if err := Scan(v, m.Kind, m.ID, false, func(p Pos) error {
			if q.ToIndex > 0 && p.Index > q.ToIndex {
				return kv.ErrStop
			}
			touched[p] = append(touched[p], i)
			return nil
		}); err != nil {
			return Page{}, err
		}
	}
	positions := make([]Pos, 0, len(own)+len(touched))
	if err := Scan(v, q.Kind, q.ID, false, func(p Pos) error {
		positions = append(positions, p) // also those no longer archived
		return nil
	}); err != nil {
		return Page{}, err
	}
	jobPos := map[Pos]bool{}
	for _, p := range positions {
		jobPos[p] = true
	}
	for p := range touched {
		if !jobPos[p] {
			positions = append(positions, p)
		}
	}
	slices.SortFunc(positions, func(a, b Pos) int {
		switch {
		case a.Less(b):
			return -1
		case b.Less(a):
			return 1
		}
		return 0
	})

	job := Entity{Kind: q.Kind, ID: q.ID}
	jt := summary.NewTracker(q.Kind, q.ID)
	trackers := make([]*summary.Tracker, len(mem))
	for i, m := range mem {
		trackers[i] = summary.NewTracker(m.Kind, m.ID)
	}
	sel := newSelection(q)
	for _, p := range positions {
		if q.ToIndex > 0 && p.Index > q.ToIndex {
			break
		}
		if q.Reverse && q.Next != (Pos{}) && q.Next.Less(p) {
			break
		}
		ev, ok := own[p]
		if !ok {
			if ev, err = readEvent(src, p); err != nil {
				return Page{}, err
			}
		}
		var lines []entityLine
		if ev != nil {
			if jobPos[p] {
				lines = append(lines, entityLine{entity: job, line: jt.Next(ev)})
			}
			allocs := slices.ContainsFunc(touched[p], func(i int) bool { return mem[i].Kind == events.KindAlloc })
			for _, i := range touched[p] {
				l := trackers[i].Next(ev) // folded even when its line is not shown
				// The job's line tells the event; else each member's does,
				// but an eval's not beside its allocations' (theirs say
				// what the eval did to them).
				if !jobPos[p] && !(allocs && mem[i].Kind == events.KindEval) {
					lines = append(lines, entityLine{entity: mem[i], line: l})
				}
			}
		} else if jobPos[p] {
			lines = []entityLine{{entity: job}}
		} else {
			lines = []entityLine{{entity: mem[touched[p][0]]}}
		}
		if !q.selects(p, ev) {
			continue
		}
		if done := sel.addLines(p, ev, lines); done {
			break
		}
	}
	return sel.page(q), nil
}
