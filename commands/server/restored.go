package server

import (
	"time"

	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
)

// RecordRestore records that the leader installed an operator's snapshot
// restore (history/backup): the archive then says where its history was
// replaced, by what, and who asked.
type RecordRestore struct {
	Restore events.SnapshotRestored
}

var _ commands.Command = RecordRestore{}

// Validate implements commands.Command.
func (r RecordRestore) Validate() error {
	switch p := r.Restore; {
	case p.Server == "":
		return commands.Invalid("Server", "required")
	case p.Index == 0:
		return commands.Invalid("Index", "required")
	case p.Checksum == "":
		return commands.Invalid("Checksum", "required")
	}
	return nil
}

// Decide implements commands.Command.
func (r RecordRestore) Decide(projections.View, time.Time, commands.IDs) (commands.Decision, error) {
	p := r.Restore
	return commands.Decision{Events: []events.Payload{&p}}, nil
}
