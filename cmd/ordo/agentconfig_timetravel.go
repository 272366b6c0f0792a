package main

import (
	"fmt"
	"strings"

	"github.com/hashicorp/hcl/v2"

	"github.com/ordoplane/ordo/history/timetravel"
)

// timeTravelBlock is the agent file's time_travel block: the versions
// store behind reads at_index and at_time (history/timetravel.Options).
//
//	time_travel {
//	  disable_versions = false   # keep no row versions: serve no past state
//	  versions_kept    = 0       # newest entries the row versions answer for; 0 keeps all
//	}
//
// An attribute left out keeps its default. The attributes of the
// checkpoints, redo log and state cache that earlier versions read past
// states from are refused by name (removedTimeTravel).
type timeTravelBlock struct {
	DisableVersions *bool  `hcl:"disable_versions,optional"`
	VersionsKept    *int64 `hcl:"versions_kept,optional"`

	// Removed attributes, refused with a message that says so.
	CheckpointEvery       *hcl.Attribute `hcl:"checkpoint_every,optional"`
	CheckpointMinInterval *hcl.Attribute `hcl:"checkpoint_min_interval,optional"`
	CheckpointsKept       *hcl.Attribute `hcl:"checkpoints_kept,optional"`
	SparseCheckpointsKept *hcl.Attribute `hcl:"sparse_checkpoints_kept,optional"`
	CacheSize             *hcl.Attribute `hcl:"cache_size,optional"`
	DisableCheckpoints    *hcl.Attribute `hcl:"disable_checkpoints,optional"`
	DisableRedo           *hcl.Attribute `hcl:"disable_redo,optional"`
}

// removedTimeTravel returns the names of the removed attributes b sets.
func (b *timeTravelBlock) removedTimeTravel() []string {
	var names []string
	for _, a := range []struct {
		name string
		set  bool
	}{
		{"checkpoint_every", b.CheckpointEvery != nil}, {"checkpoint_min_interval", b.CheckpointMinInterval != nil},
		{"checkpoints_kept", b.CheckpointsKept != nil}, {"sparse_checkpoints_kept", b.SparseCheckpointsKept != nil},
		{"cache_size", b.CacheSize != nil}, {"disable_checkpoints", b.DisableCheckpoints != nil},
		{"disable_redo", b.DisableRedo != nil},
	} {
		if a.set {
			names = append(names, a.name)
		}
	}
	return names
}

// applyTo sets in o what the block sets; path names the file in errors,
// which name the attribute as time_travel.<name>.
func (b *timeTravelBlock) applyTo(o *timetravel.Options, path string) error {
	bad := func(field, format string, args ...any) error {
		return fmt.Errorf("time_travel.%s in %s: %s", field, path, fmt.Sprintf(format, args...))
	}
	if removed := b.removedTimeTravel(); len(removed) > 0 {
		return bad(removed[0], "removed: every past index is now read from the versions store, so there are no "+
			"checkpoints, redo log or state cache to tune; delete %s (docs/history.md)", strings.Join(removed, ", "))
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
