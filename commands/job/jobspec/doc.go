// Package jobspec owns turning a user's jobspec into the canonical
// events.Job that JobRegistered carries: parsing Nomad-style HCL (ParseHCL)
// and Nomad's API JSON (ParseJSON), filling in Nomad's defaults, and
// checking Nomad's rules (Validate). docs/jobspec.md lists the blocks,
// attributes, defaults and rules.
//
// # Usage
//
//	job, err := jobspec.ParseHCL("web.hcl", src)   // or ParseJSON(r, limit)
//	var ve *commands.ValidationError
//	if errors.As(err, &ve) { … ve.Field is like "job.group[web].count" … }
//
// Both parsers return a job that is canonical (every default filled in) and
// valid, or a *commands.ValidationError naming the field in HCL terms; from
// ParseHCL its Reason starts with file:line:col.
//
// # Concurrency
//
// Every function is pure and may be called from any goroutine.
//
// # Invariants
//
//   - The same job written in HCL and in JSON parses to equal values.
//   - A parsed job survives events.Marshal and decoding unchanged (task
//     config values are in events.TaskConfig's canonical form).
//   - Parsing never panics and never evaluates anything but literals:
//     runtime interpolations such as ${attr.kernel.name}, ${node.class},
//     ${meta.x}, ${env["X"]} and ${NOMAD_*} are kept as text for the
//     scheduler and the client; other variables and functions are errors.
package jobspec
