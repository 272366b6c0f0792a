// Package schema generates JSON Schemas (draft 2020-12) for ordo's events
// from the event registry: one for the payload of every registered type and
// version, one for the record a consumer receives (the envelope the event
// stream and the Kafka mirror write), and docs/events.md, which lists them.
//
// Payload schemas describe the JSON that leaves the cluster: the payload as
// events.Redacted renders it (encoding/json of the current-version Go
// payload), so field names follow json tags, omitempty and omitzero fields
// are not required, nil maps, slices and pointers may be null, durations
// are integers of nanoseconds, times RFC 3339 strings and []byte base64
// strings. Fields a type declares Sensitive are always the string
// "<redacted>" there; their schema says so (const and x-ordo-sensitive).
//
// Old versions: the registry keeps only the current Go payload of a type
// and upcasters from every older version, and every reader outside the
// cluster sees events upcast to the current version. So the schema of an
// older version N is the current payload's schema, titled for version N and
// marked with x-ordo-payload-version: the record's Version still says what
// the event was written at, but its Payload always has the current shape.
//
// # Usage
//
//	s, err := schema.Lookup("NamespaceUpserted", 0) // 0: the current version
//	b, err := s.MarshalIndent()
//	entries, err := schema.List()                   // every type, for listings
//	env := schema.Envelope()                        // the record around the payload
//
// `ordo events schema [type] [-version N]` prints them, GET /v1/events/schema
// serves them, and `go test ./events/schema -update` rewrites docs/events.md
// (a test fails when it is out of date).
//
// # Concurrency
//
// Everything here reads the registry, which is read-only after init, and
// builds fresh values on every call: any function may be called from any
// goroutine. A returned Schema belongs to the caller.
//
// # Invariants
//
//   - Every registered type has a schema for every version from 1 to its
//     current one, and the generator fails (rather than guess) on a payload
//     encoding/json cannot encode or a Sensitive name that is not a
//     top-level JSON field of the payload.
//   - Struct schemas forbid unknown properties, so a payload whose shape
//     drifts from its schema fails the tests that validate real payloads.
package schema
