// Package snapshots owns ordo's snapshot file: a whole state store — the
// archive and every projection, as one server held them at one applied
// index — in one checked file, the backup `ordo operator snapshot save`
// writes and `ordo operator snapshot restore` installs into a cluster
// (Nomad's `nomad operator snapshot`).
//
// # The file
//
// Integers are big-endian; the layout is
//
//	magic     8 bytes   "ORDOSNP\n"
//	version   uint16    format version, 1 (Version)
//	hdrlen    uint32    length of the header, at most MaxHeader
//	header    JSON      Header: cluster, saving server, applied index and
//	                    its leader time, projection versions, created
//	                    time, ordo version
//	records   'R' klen uint32 vlen uint32 key value
//	          one key of the state store, keys strictly ascending
//	trailer   'T' rows uint64, then the SHA-256 of every byte before
//	          it (magic, 'T' and count included); nothing may follow it
//
// Records are bounded (MaxKey, MaxValue) so a damaged length cannot make
// a reader allocate much; the reader's buffer grows only as bytes arrive.
//
// # Usage
//
//	w, err := snapshots.NewWriter(f, snapshots.Header{ClusterID: …, Index: 48213, …})
//	err = w.Row(key, value)     // in key order
//	err = w.Close()             // the trailer
//
//	r, err := snapshots.NewReader(f)   // magic, version, header
//	for { k, v, err := r.Next(); if err == io.EOF { break } … }
//
//	sum, err := snapshots.Verify(f)   // read and check a whole file
//
// # Concurrency
//
// A Reader or a Writer belongs to one goroutine.
//
// # Invariants
//
//   - A Reader returns io.EOF only after the trailer's row count and
//     checksum and the end of the stream checked out; every other problem
//     is an error wrapping ErrMagic, ErrVersion, ErrTruncated, ErrCorrupt
//     or ErrChecksum, with the byte offset where it was found. A restore
//     reads the whole file before it installs any of it.
//   - A Writer refuses what a Reader would refuse (keys out of order,
//     empty or oversized), so every file it closes reads back whole.
package snapshots
