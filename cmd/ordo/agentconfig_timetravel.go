package main

import (
	"fmt"
	"time"

	"github.com/ordoplane/ordo/history/timetravel"
)

// timeTravelBlock is the agent file's time_travel block: the checkpoints
// behind reads at_index and at_time (history/timetravel.Options).
//
//	time_travel {
//	  checkpoint_every        = 10000   # applied entries between two checkpoints
//	  checkpoint_min_interval = "10s"   # least time between two checkpoints
//	  checkpoints_kept        = 10      # the newest kept, checkpoint_every apart
//	  sparse_checkpoints_kept = 10      # older ones kept below them; 0 keeps none
//	  cache_size              = 4       # materialised past states kept open
//	  disable_checkpoints     = false   # take none (reads replay from the archive's start)
//	  disable_redo            = false   # keep no redo log (with disable_versions only)
//	  disable_versions        = false   # keep no row versions (reads copy a checkpoint and replay)
//	  versions_kept           = 0       # newest entries the row versions answer for; 0 keeps all
//	}
//
// An attribute left out keeps its default.
type timeTravelBlock struct {
	CheckpointEvery       *int64  `hcl:"checkpoint_every,optional"`
	CheckpointMinInterval *string `hcl:"checkpoint_min_interval,optional"`
	CheckpointsKept       *int    `hcl:"checkpoints_kept,optional"`
	SparseCheckpointsKept *int    `hcl:"sparse_checkpoints_kept,optional"`
	CacheSize             *int    `hcl:"cache_size,optional"`
	DisableCheckpoints    *bool   `hcl:"disable_checkpoints,optional"`
	DisableRedo           *bool   `hcl:"disable_redo,optional"`
	DisableVersions       *bool   `hcl:"disable_versions,optional"`
	VersionsKept          *int64  `hcl:"versions_kept,optional"`
}

// applyTo sets in o what the block sets; path names the file in errors,
// which name the attribute as time_travel.<name>.
func (b *timeTravelBlock) applyTo(o *timetravel.Options, path string) error {
	bad := func(field, format string, args ...any) error {
		return fmt.Errorf("time_travel.%s in %s: %s", field, path, fmt.Sprintf(format, args...))
	}
	if b.CheckpointEvery != nil {
		if *b.CheckpointEvery < 1 {
			return bad("checkpoint_every", "%d must be at least 1 (applied entries between two checkpoints)", *b.CheckpointEvery)
		}
		o.CheckpointEvery = uint64(*b.CheckpointEvery)
	}
	if b.CheckpointMinInterval != nil {
		d, err := time.ParseDuration(*b.CheckpointMinInterval)
		switch {
		case err != nil:
			return bad("checkpoint_min_interval", "%q is not a duration (10s, 1m)", *b.CheckpointMinInterval)
		case d <= 0:
			return bad("checkpoint_min_interval", "%q must be positive", *b.CheckpointMinInterval)
		}
		o.CheckpointMinInterval = d
	}
	if b.CheckpointsKept != nil {
		if *b.CheckpointsKept < 1 {
			return bad("checkpoints_kept", "%d must be at least 1", *b.CheckpointsKept)
		}
		o.CheckpointsKept = *b.CheckpointsKept
	}
	if b.SparseCheckpointsKept != nil {
		switch n := *b.SparseCheckpointsKept; {
		case n < 0:
			return bad("sparse_checkpoints_kept", "%d must not be negative (0 keeps none)", n)
		case n == 0:
			o.SparseCheckpointsKept = -1 // Options' zero value is the default; negative keeps none
		default:
			o.SparseCheckpointsKept = n
		}
	}
	if b.CacheSize != nil {
		if *b.CacheSize < 1 {
			return bad("cache_size", "%d must be at least 1", *b.CacheSize)
		}
		o.CacheSize = *b.CacheSize
	}
	if b.DisableCheckpoints != nil {
		o.DisableCheckpoints = *b.DisableCheckpoints
	}
	if b.DisableRedo != nil {
		o.DisableRedo = *b.DisableRedo
	}
	if b.DisableVersions != nil {
		o.DisableVersions = *b.DisableVersions
	}
	if b.VersionsKept != nil {
		if *b.VersionsKept < 0 {
			return bad("versions_kept", "%d must not be negative (0 keeps every version)", *b.VersionsKept)
		}
		o.VersionsKept = uint64(*b.VersionsKept)
	}
	return nil
}
