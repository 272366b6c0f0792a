package lint

import "testing"

// The projections tree has three layers: the base package projections,
// the rebuild engine above it, the FSM above both. A projection package
// (projections/jobs, …) implements the base's interface and imports
// nothing above it, so that the FSM and the engine can change without
// touching a projection.
var (
	projectionsBase   = "projections"
	projectionsLayers = map[string]int{"projections/rebuild": 1, "projections/fsm": 2}
)

func TestProjectionsLayers(t *testing.T) {
	for _, p := range listPackages(t) {
		if top(p.ImportPath) != projectionsBase || isTestHelper(p.ImportPath) {
			continue
		}
		from := projectionsLayers[rel(p.ImportPath)] // 0: the base or a projection
		for _, imp := range p.Imports {
			if to, ok := projectionsLayers[rel(imp)]; ok && to >= from && rel(imp) != rel(p.ImportPath) {
				t.Errorf("%s imports %s: only the layers above it may (base ← rebuild ← fsm)", rel(p.ImportPath), rel(imp))
			}
		}
	}
}
