// Package launcher owns the launcher's read models: providers (their
// applied configuration, generation, pause state and errored labels),
// tenants, node requests and instances, with the indexes the launcher
// processor reads — open requests by state in priority order, instances
// by provider and by tenant — and the registered components (P10): the
// pools each server's launcher runs, seen live by every server.
//
// # Usage
//
// The FSM applies Projection like every other (projections/all); readers
// use the query functions on a projections.View:
//
//	p, err := launcher.GetProvider(v, "cheap-cloud")
//	err = launcher.ScanRequests(v, events.RequestRequested, func(r *launcher.Request) error { … })
//	insts, err := launcher.ProviderInstances(v, "cheap-cloud")
//
// Commands that launch for a tenant carry TenantFits, a precondition the
// FSM decides at apply, so concurrent launches on two providers cannot
// take a tenant past its limits (P13).
//
// # Concurrency
//
// Apply runs on the FSM's goroutine; queries read a View and may run on
// any goroutine.
//
// # Invariants
//
//   - Every row is derived from launcher events alone; apply reads only
//     the projection's own tables.
//   - A provider's ConfigIndex is the index of its last ProviderApplied: a
//     new configuration is a new generation with no paused request and no
//     errored label (P2, P6). Pause and label events for another
//     generation change nothing.
//   - RequestsByStateTable holds exactly one row per requested or pending
//     request; InstancesByProviderTable and InstancesByTenantTable one per
//     instance.
package launcher
