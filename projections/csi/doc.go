// Package csi owns the CSI projection: volumes (their user-settable
// fields, secrets and claims), plugins (the controller and node instances
// nodes report, and the counts their jobs expect), and the small indexes
// that let apply find them from job, allocation and node events without
// reading another projection's tables.
//
// # Usage
//
// The FSM applies CSIVolume* events, JobRegistered/JobDeregistered,
// Allocs* and Node* events through Projection. Readers call GetVolume,
// ScanVolumes, GetPlugin and ScanPlugins with a projections.View;
// GetVolume turns claims whose allocation is gone or terminal into past
// claims on read (N22), so every reader — the API, the scheduler, the
// volume watcher — sees the same claims to release.
//
// # Concurrency
//
// Stateless: safe for concurrent use; each call uses the view it is given.
//
// # Invariants
//
//   - A register replaces a volume's user-settable fields and never its
//     claims (N18); a deregister removes the volume and its claims.
//   - A claim is made at apply when an allocation of a group that asks
//     for the volume is placed, with the request's modes, and becomes a
//     past claim (state unpublishing) when the allocation stops on its
//     client or is deleted; the volume watcher moves it on to freed.
//   - A plugin's expected counts are the sums over the jobs that run it,
//     taken from each job's registration: a job stopped or purged stops
//     counting; an allocation stopping (a drain) changes nothing (N21).
//   - Capabilities are stored sorted (N16).
//   - Apply reads only this projection's tables; reads (GetVolume) may
//     read the allocs table.
package csi
