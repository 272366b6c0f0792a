// Package mirror owns the Kafka mirror: a leader-only processor that
// copies every archived event, in log order, to a Kafka topic, and the
// tools that read the topic back (Verify, ReadTopic).
//
// Records are keyed by the entity the event concerns (RecordKey) and
// placed by Kafka's default partitioner hash (Partition), so each
// entity's events share a partition and keep their order. The value is
// the event's envelope and redacted payload (JSON, or msgpack); headers
// carry the position (ordo-index, ordo-seq), the type and version, and
// the CloudEvents Kafka binding (ce_*). docs/mirror.md describes the
// record format and what consumers can rely on.
//
// A record is built straight from the archived event's bytes where it
// can be (rawrecord.go: the payload's JSON transcoded from its msgpack by
// a plan compiled per type, transcode.go), and otherwise from the decoded
// event (record, record.go): types with sensitive fields, payloads to
// upcast, the msgpack format. Both make the same bytes.
//
// # Usage
//
// Build a Mirror with New over the state store and the FSM's notifier,
// hand it to the supervisor (it is a supervisor.Processor) and read its
// Status for the API. Verify checks a topic against an archive.
//
// # Concurrency
//
// Run is called by one goroutine at a time (the supervisor's); Status,
// Mirrored and the metrics may be read from any goroutine. Each Run
// session owns its franz-go client, a goroutine filling chunks (a large
// one on a goroutine a core) and one committing them.
//
// # Invariants
//
//   - Each chunk of up to ChunkEvents events is one Kafka transaction
//     (one a Linger at most once caught up); chunks commit in log
//     order, so a read-committed consumer sees a prefix of the log. On
//     start a session fences any earlier producer of the same
//     transactional id (a deposed leader's) and resumes after the
//     greatest position committed in any partition: no gap and no
//     duplicate across restarts, crashes and failovers.
//   - Fields that event types declare Sensitive never leave in clear.
//   - The mirror only reads snapshots of the archive: Kafka being slow or
//     down never delays a command or an apply.
//   - record, the fast path, RecordKey and Partition are pure; time
//     comes from Config.Clock.
package mirror
