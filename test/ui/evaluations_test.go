package ui

import (
	"strings"
	"testing"
)

// An evaluation of a job shows its facts and allocation; "Explain this
// decision" re-runs it and shows the plans side by side and that the
// re-run reproduces the recorded plan.
func TestEvaluationExplain(t *testing.T) {
	s := start(t)
	alloc := runningAlloc(t, s, echoJob("echo"))

	s.open("/evaluations")
	s.waitText("main table", "job-register")
	s.shot("evaluations")
	s.checkA11y("evaluations")

	s.open("/evaluations/" + alloc.EvalID)
	s.waitText("main h1", alloc.EvalID[:8])
	s.waitText("main", "job-register")
	s.waitText("main table[aria-label=allocations]", alloc.ID[:8])
	s.click("main .explain button", "Explain this decision")
	s.waitText("main .explain", "the re-run reproduces the recorded plan")
	s.waitText("main .explain .nodiff", "No difference")
	if got := s.textOf("main .explain"); strings.Contains(got, "differs") {
		t.Fatalf("an equal re-run shows a row that differs:\n%s", got)
	}
	s.waitText("main .explain table", "echo.echo[0]") // the placement on both sides
	// The re-run's scores of the node it weighed, the chosen one marked.
	s.waitText(`main .explain table[aria-label="node scores of echo.echo[0]"]`, "binpack")
	s.waitText(`main .explain table[aria-label="node scores of echo.echo[0]"]`, "chosen")
	s.shot("evaluation-explain")
	s.checkA11y("evaluation")

	// A re-run that differs (none does on a dev agent, so the answer is
	// made up) shows each side, what differs and the re-run's reasons.
	if err := s.eval(`(Promise.all([import('/ui/ui.js'), import('/ui/pages/evaluations.js')]).then(([ui, ev]) => {
	  const div = document.createElement('div');
	  div.id = 'rerun-probe';
	  document.body.appendChild(div);
	  const placed = (node, metrics) => ({ID: 'a1111111-0000-0000-0000-000000000000', Name: 'web.web[0]', TaskGroup: 'web', NodeID: node, Metrics: metrics});
	  const r = {EvalID: 'e1', SnapshotIndex: 7, Equal: false, Nodes: {n1: 'host-1', n2: 'host-2'}, Allocs: {}, EarlierAttempts: [],
	    Recorded: {Placements: [placed('n1')], Stops: [{ID: 'b2222222-0000-0000-0000-000000000000', DesiredStatus: 'stop'}], QueuedAllocations: {web: 0}},
	    Recomputed: {Placements: [placed('n2', {NodesEvaluated: 2, NodesFiltered: 1, NodesAvailable: {dc1: 2}, ConstraintFiltered: {'kernel = windows': 1}})], QueuedAllocations: {web: 0}},
	    Diff: [{Kind: 'placement', ID: 'a1111111-0000-0000-0000-000000000000', Recorded: true, Recomputed: true, Fields: [{Name: 'NodeID', Recorded: 'n1', Recomputed: 'n2'}]},
	      {Kind: 'stop', ID: 'b2222222-0000-0000-0000-000000000000', Recorded: true, Recomputed: false, Fields: [{Name: 'DesiredStatus', Recorded: 'stop'}]}]};
	  ui.render(ui.h(ev.Rerun, {r}), div);
	}), true)`, nil); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"differs from the recorded plan (2 differences)", "web.web[0] on host-1", "web.web[0] on host-2",
		"differs", "recorded, not recomputed", `Constraint "kernel = windows" filtered 1 node`, "2 nodes evaluated, 1 filtered"} {
		s.waitText("#rerun-probe", want)
	}
	s.shot("evaluation-rerun-diff")
}
