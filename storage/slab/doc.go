// Package slab holds bulk, pointer-free bytes outside Go's heap: what a
// projection rebuild keeps in memory for seconds and drops at once (its
// row logs, projections.rowLog).
//
// Bytes on Go's heap count towards the collector's goal: a rebuild that
// held 450 MB of logged rows had, at a collector target of 400%, a heap
// goal of 2.2 GB, and nearly every byte it allocated landed on memory the
// process had never touched, a page fault each 4 KiB (30% of that
// rebuild's CPU went to the kernel). A Slab maps its regions from the
// operating system instead, asks for transparent huge pages on them (one
// fault each 2 MiB where the kernel grants them), and unmaps them when
// released; the collector neither counts nor scans them.
//
// # Usage
//
// New a Slab, Alloc from it, Release it when nothing refers to what it
// gave out any more. Where the system cannot map memory (other than
// Linux, or a failed mapping), a Slab hands out ordinary Go slices, which
// Release leaves to the collector.
//
// # Concurrency
//
// A Slab is not safe for concurrent Alloc or Release; the bytes it gave
// out may be read by any number of goroutines until it is released.
//
// # Invariants
//
// Alloc's bytes are zero, 8-byte aligned and never handed out twice. After
// Release, every slice Alloc returned is invalid: on Linux, touching one
// faults the process. The caller must make sure nothing does.
package slab
