// Package launcher owns the launcher's commands: providers applied from
// HCL files (their configuration is itself an event, P6/P16), tenants with
// resource limits (P13), node requests created and deleted by requestors,
// instances held or deleted by operators, and the commands the launcher
// processor issues as it handles requests (accept, decline, fail, release,
// pause, launch, instance state changes).
//
// # Usage
//
//	cfg, err := launcher.ParseProvider(src, "cheap-cloud.hcl")
//	out, err := pipeline.Run(ctx, "provider.apply", req, launcher.ApplyProvider{Config: cfg})
//	create := &launcher.CreateRequest{Labels: []string{"ubuntu-small"}, Requestor: "ci-42"}
//	out, err = pipeline.Run(ctx, "node-request.create", req, create) // create.ID() is the new id
//
// # Concurrency
//
// Commands are values (CreateRequest is a pointer that records its minted
// id); Decide is pure and reads only the view.
//
// # Invariants
//
//   - Invalid input is a *commands.ValidationError naming the field; no
//     event is decided.
//   - A configuration equal by value to the provider's current one decides
//     nothing (P16).
//   - Assigning a ready instance carries the instance's modify index as a
//     precondition (P4): two launchers racing for one instance cannot both
//     apply. Launching for a tenant carries the tenant-fits precondition
//     (P13). Whatever a processor decided on a request carries the
//     request's modify index, so a request changed or deleted meanwhile
//     (P20) is refused with 409, not acted on twice.
package launcher
