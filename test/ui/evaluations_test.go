package ui

import (
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
	s.waitText("main .explain table", "echo.echo[0]") // the placement on both sides
	s.shot("evaluation-explain")
	s.checkA11y("evaluation")
}
