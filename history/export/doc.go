// Package export owns ordo's portable history file (".olog"): a slice of
// the archive — the Raft-ordered event log — written to one file that can
// leave the cluster, be checked, and be replayed on a laptop with no
// cluster (`ordo replay FILE -- <read command>`).
//
// # The file
//
// Integers are big-endian; the layout is
//
//	magic     8 bytes   "ORDOLOG\n"
//	version   uint16    format version, 1 (Version)
//	hdrlen    uint32    length of the header, at most 1 MiB
//	header    JSON      Header: cluster id and its source, the exporting
//	                    server, the range asked for, first and last index,
//	                    event count, state rows, created time, ordo version
//	records   one after another, each starting with a tag byte:
//	  'S' klen uint32 vlen uint32 key value
//	        a row of the projections as they stood at Header.StateIndex
//	        (From-1), all before the first event; present only when the
//	        export was asked for its base state (see Options.State)
//	  'E' index uint64 seq uint32 len uint32 data
//	        one archived event: data is the msgpack envelope
//	        (events.Event) exactly as the archive holds it at
//	        log/<index>/<seq>; events come in commit order
//	trailer   'T' then the SHA-256 of every byte before the 'T'
//	          (magic included); nothing may follow it
//
// The header is written first, so it carries counts the exporter learns
// in a first pass over the same snapshot; a Reader checks them against the
// records it read once it reaches the trailer. Records are bounded
// (MaxRecord) so a damaged length cannot make a reader allocate much.
//
// # Usage
//
//	h, err := export.Export(w, snap, export.Options{From: 1, To: 500000, …})
//
//	r, err := export.NewReader(f)     // magic, version, header
//	for { rec, err := r.Next(); if err == io.EOF { break } … }  // io.EOF only after the trailer checked out
//
//	st, err := export.Load(path, store, all.Projections())  // replay into an empty store
//
// Export, ClusterID and Load read and write stores; Reader and Writer
// only streams.
//
// # Concurrency
//
// A Reader or Writer belongs to one goroutine. Export reads a kv.Reader
// (a snapshot) that others may read too.
//
// # Invariants
//
//   - A Reader returns io.EOF only after the checksum, the counts in the
//     header, the order of the records and the end of the stream all
//     checked out; every other problem is an error wrapping ErrMagic,
//     ErrVersion, ErrTruncated, ErrCorrupt or ErrChecksum, with the byte
//     offset where it was found.
//   - Events are copied byte for byte: an exported event is the archived
//     one, so a replay applies exactly what the cluster applied.
//   - Export and Load never write to the store they read; Load writes
//     only to the store it is given, which must be empty.
package export
