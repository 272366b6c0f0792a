// Package evaldelete decides, inside the projections at apply, which
// evaluations may be deleted and which a bulk delete by filter deletes.
//
// It owns two rules:
//
//   - N6, eval-delete safety lives in state: an eval may be deleted only
//     when its job is terminal (gone, stopped or dead) and every
//     allocation it placed is terminal (Safe). The decision reads the jobs
//     and allocs tables at apply, never a handler's snapshot.
//   - N4, bulk delete by filter: an EvalsPageDeleted entry carries (filter,
//     from, to, page size, scan limit); at apply, an expander registered with
//     projections.RegisterExpander re-creates that page from the evals in
//     creation order (Walk) and fills the event with the ids it deletes, so
//     the archive records what was removed and a rebuild needs no other
//     table.
//
// Deleting evals by id carries one OpDeletable precondition per eval,
// checked at apply with the same rule.
//
// # Usage
//
//	f, err := evaldelete.Compile(`Status == "pending"`)
//	page, err := evaldelete.Walk(view, f, from, to, 100, 400, true)
//
// # Concurrency
//
// Pure functions of a View; a Filter from Compile may be shared.
//
// # Invariants
//
//   - Walk is deterministic: the same view and arguments give the same page.
//   - A page holds at most PageSize selected evals and looks at no more than
//     ScanLimit evals, so one apply stays short whatever the filter.
//   - A page with a To reads and deletes nothing at or after To: pages of
//     disjoint ranges are independent and may be in flight together.
//   - Evals created after a walk passed their position are not in its page
//     (they sort after it only if created later; an eval that starts to
//     match behind the cursor is missed): a bulk delete is not a snapshot.
package evaldelete
