// Package policy parses ACL policy rules (Nomad's HCL and JSON forms) and
// compiles a set of policies into an ACL: the object that answers "may this
// caller do that" for namespace capabilities, variables paths and the
// node, agent, operator, plugin and quota rules.
//
// # Usage
//
//	p, err := policy.Parse(rules)          // validate when a policy is applied
//	acl, err := policy.Compile([]*policy.Policy{p, q})
//	acl.AllowNamespace("default", policy.CapSubmitJob)
//
// Management tokens use policy.Management, which allows everything.
//
// # Concurrency
//
// Parse and Compile are pure. An ACL is immutable once compiled and safe
// for concurrent use.
//
// # Invariants
//
//   - deny wins: a deny anywhere in the merged policies for a namespace,
//     variables path or rule removes every other capability there.
//   - A namespace is matched exactly first, then by the glob whose literal
//     characters cover most of the name; variables paths likewise.
package policy
