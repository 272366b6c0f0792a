// Package backuptest holds what tests of snapshot restores share: reading
// a server's restore metrics (RestoreCounts). Tests only.
//
// # Concurrency
//
// RestoreCounts may be called from any goroutine.
package backuptest
