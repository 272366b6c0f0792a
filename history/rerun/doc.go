// Package rerun re-runs recorded scheduling decisions. A decision is a
// pure function of (snapshot, eval): the worker records the index of the
// state it computed on as the eval's SnapshotIndex, so rebuilding the
// projections from the archive up to that index and calling
// scheduler.Compute again must reproduce the plan it committed, byte for
// byte. This package reads what the log recorded (Recorded), recomputes it
// (Rerun) and explains any difference (Diff).
//
// # Usage
//
//	rec, err := rerun.Recorded(store, evalID)   // what was committed
//	plan, err := rerun.Rerun(store, evalID, dir) // recomputed in a scratch store under dir
//	d := rerun.Diff(rec, plan)                  // d.Empty() when reproduced
//	fmt.Print(d)
//
// store is any kv.Reader holding the archive: a snapshot of a live
// server's state store, or a copy opened on its own. Rerun rebuilds every
// projection (projections/all) up to the snapshot index into a fresh
// Pebble store it creates under dir and removes; it costs a rebuild of the
// archive's prefix per call.
//
// # What a decision is
//
// A worker computes a plan and submits it to the plan applier, which
// commits what still fits (commands/plan.Commit: AllocsPlaced and
// AllocsDesiredUpdated carrying the eval id, DeploymentUpserted, and
// EvalsUpserted). The eval's own update — complete, with the snapshot
// index, queued counts, failures and its blocked eval — is committed only
// with a plan that fits whole. When the applier refuses part of a plan
// (a node no longer fits, processors/plan), it commits the rest and
// the worker plans again on newer state. So for a completed eval:
//
//   - Record.Final, the commit with the eval's completing update, is the
//     whole plan of the worker's last attempt, computed at SnapshotIndex.
//     Diff compares it with the re-run: any Change is a real divergence.
//   - Record.Earlier are the commits of earlier attempts, each refused in
//     part by the applier. The final snapshot already holds what they
//     committed, so the re-run does not reproduce them; Diff lists them
//     apart (Report.Earlier), never as divergences.
//   - Record.Trigger is what the entry that created the eval changed with
//     it: the node drainer's migrate marks (node.MarkMigrate) or an
//     operator's stop (alloc.Stop) carry the new eval's id too. They
//     caused the eval and are no attempt of its plan; TriggerLines says
//     what each did.
//
// Limitations: the parts of a plan the applier refused are not in the
// log, and neither is the snapshot index of an earlier attempt, so earlier
// attempts cannot be re-run or checked. An eval whose last permitted
// attempt was still refused in part is never completed (worker
// MaxPlanAttempts) and has no snapshot index: Recorded reports its
// commits as Earlier and Rerun returns ErrNotDecided. Plan.Complete is not
// logged, and the blocked eval's times come from the worker's clock; Diff
// compares neither.
//
// # Concurrency
//
// Recorded, Rerun and Diff keep no state; calls may run concurrently on
// the same source (each Rerun uses its own scratch store).
//
// # Invariants
//
//   - Nothing here writes to the source store (replay has no side
//     effects); the scratch store is removed when Rerun returns.
//   - Rerun computes on the state at exactly the recorded snapshot index,
//     with the eval as the log held it there (pending, the version the
//     worker dequeued), and fails rather than guess when either is absent.
package rerun
