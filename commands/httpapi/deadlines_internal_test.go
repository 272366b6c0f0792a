package httpapi

import "testing"

// TestDeadlineRoutesAreRegistered: every route named for a deadline
// extension is a registered route, so renaming a route cannot silently
// leave it under the plain write or body timeout.
func TestDeadlineRoutesAreRegistered(t *testing.T) {
	registered := map[string]bool{}
	for _, p := range registeredPatterns(t) {
		registered[p] = true
	}
	for _, set := range []map[string]bool{streamRoutes, uploadRoutes, slowRoutes} {
		for p := range set {
			if !registered[p] {
				t.Errorf("deadlines.go names %q, which is not a registered route", p)
			}
		}
	}
}
