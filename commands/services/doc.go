// Package services owns the commands of Nomad-native service discovery: a
// client registering or updating its allocations' service instances
// (Register), a client removing them (Deregister), a user deleting one
// instance (Delete), and the cleanup the servers append to their own
// commands (ForAllocs, ForNode) when an allocation stops or is lost or
// collected, or a node goes down.
//
// # Usage
//
// Build a command from a decoded request and run it with
// commands.Pipeline.Run. A command that makes an allocation terminal,
// collects it or takes a node down appends ForAllocs's or ForNode's event
// to its own decision, so the registrations go in the same entry.
//
// # Concurrency
//
// Commands are values; Decide is pure.
//
// # Invariants
//
//   - A registration is checked against its allocation (exists, on the
//     registering node, not terminal, same namespace and job) when decided
//     and again at apply (services.AllocLivePrecondition); a bad one is a
//     *commands.ValidationError naming the field and nothing is appended.
//   - A registration identical to the stored one is not appended; a call
//     that changes nothing appends nothing.
//   - Deregistering ids that do not exist is not an error: they are gone.
package services
