// Package redo keeps a redo log: the write batches a state store
// committed, each with the applied index before and after it, in segment
// files on disk. Replaying the chain of records that starts at a
// checkpoint's index onto a copy of that checkpoint rebuilds the store as
// it stood at any later batch boundary without re-running projections
// (history/timetravel uses it for at_index reads).
//
// A record is [length u32][CRC-32C u32][from u64][to u64][batch], all
// big-endian; a segment starts with a magic line and a tag (the
// projection versions that wrote it), and segments of another tag are
// dropped on open, as is a record a crash cut short. Records are indexed
// in memory by the index they start from; when two start from the same
// index (a batch re-applied after a crash), the later one wins — both
// describe the same deterministic transition.
package redo
