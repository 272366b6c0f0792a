package acl

import (
	"time"

	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	acls "github.com/ordoplane/ordo/projections/acl"
)

// Bootstrap creates the first management token. It succeeds once; after
// that only when ResetIndex equals the index bootstrap last happened at
// (Nomad's reset index, which the operator writes to the leader's
// acl-bootstrap-reset file).
type Bootstrap struct {
	AccessorID string
	SecretHash string
	ResetIndex uint64
}

var _ commands.Command = Bootstrap{}

// BootstrapDoneError refuses a second bootstrap and names the reset index.
type BootstrapDoneError struct{ ResetIndex uint64 }

func (e *BootstrapDoneError) Error() string {
	return "ACL bootstrap already done (reset index: " + uitoa(e.ResetIndex) + ")"
}

func uitoa(u uint64) string {
	var b [20]byte
	i := len(b)
	for {
		i--
		b[i] = byte('0' + u%10)
		u /= 10
		if u == 0 {
			return string(b[i:])
		}
	}
}

// Validate implements commands.Command.
func (b Bootstrap) Validate() error {
	if b.AccessorID == "" || len(b.SecretHash) != 64 {
		return commands.Invalid("SecretID", "missing")
	}
	return nil
}

// Decide implements commands.Command.
func (b Bootstrap) Decide(v projections.View, now time.Time, _ commands.IDs) (commands.Decision, error) {
	index, _, err := acls.Bootstrap(v)
	if err != nil {
		return commands.Decision{}, err
	}
	if index != 0 && b.ResetIndex != index {
		return commands.Decision{}, commands.Invalid("ResetIndex", "%v", &BootstrapDoneError{ResetIndex: index})
	}
	pre := events.Precondition{Table: acls.TableBootstrap, Key: acls.BootstrapKey, Op: events.ModifyIndex, Index: index}
	reset := uint64(0)
	if index != 0 {
		reset = b.ResetIndex
	}
	return commands.Decision{
		Events: []events.Payload{
			&events.ACLTokenUpserted{AccessorID: b.AccessorID, SecretHash: b.SecretHash, Name: "Bootstrap Token",
				Type: events.ACLTokenManagement, Global: true, CreateTime: now.UnixNano()},
			&events.ACLBootstrapped{AccessorID: b.AccessorID, ResetIndex: reset},
		},
		Preconditions: []events.Precondition{pre},
	}, nil
}
