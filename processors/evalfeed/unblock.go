package evalfeed

import "github.com/ordoplane/ordo/events"

// unblocks is Nomad's rule for a capacity change on nodes of computed class
// class: it may let blocked eval e place when e escaped computed classes
// (its constraints test what a class does not capture), when e has no
// entry for the class (the scheduler never saw such a node: it might fit),
// or when the entry says the class was feasible. An entry of false — the
// job cannot run on that class — skips it.
func unblocks(e *events.Evaluation, class string) bool {
	if e.EscapedComputedClass {
		return true
	}
	eligible, known := e.ClassEligibility[class]
	return !known || eligible
}

// missed reports whether blocked eval e missed a capacity change it may
// use: one that unblocks it, on a class changed (per changes: class →
// index of its last capacity change) after the snapshot e was computed on.
func missed(e *events.Evaluation, changes map[string]uint64) bool {
	for class, at := range changes {
		if at > e.SnapshotIndex && unblocks(e, class) {
			return true
		}
	}
	return false
}
