package csi

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/commands/namespace"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	pc "github.com/ordoplane/ordo/projections/csi"
)

// Deregister removes volume ID of Namespace: the exact id, never a
// prefix (N19). A volume with claims (live or not yet released) is
// refused unless Force.
type Deregister struct {
	Namespace string
	ID        string
	Force     bool
}

var _ commands.Command = Deregister{}

// Validate implements commands.Command.
func (d Deregister) Validate() error {
	if err := namespace.ValidName("namespace", d.Namespace); err != nil {
		return err
	}
	return ValidID("id", d.ID)
}

// Decide implements commands.Command.
func (d Deregister) Decide(v projections.View, _ time.Time, _ commands.IDs) (commands.Decision, error) {
	vol, pre, err := existingVolume(v, d.Namespace, d.ID)
	if err != nil {
		return commands.Decision{}, err
	}
	if len(vol.Claims) > 0 && !d.Force {
		return commands.Decision{}, &commands.ConflictError{Precondition: pre, Reason: inUse(vol)}
	}
	return commands.Decision{
		Events:        []events.Payload{&events.CSIVolumeDeregistered{Namespace: d.Namespace, ID: d.ID, Force: d.Force}},
		Preconditions: []events.Precondition{pre},
	}, nil
}

// inUse says who holds the volume.
func inUse(vol *pc.Volume) string {
	var held []string
	for _, c := range vol.Claims {
		held = append(held, fmt.Sprintf("%s (%s, %s)", c.AllocID, c.Mode, c.State))
	}
	return fmt.Sprintf("volume %q is in use by %s; stop them or deregister with force", vol.ID, strings.Join(held, ", "))
}

// existingVolume returns volume id of namespace and the precondition that
// it is unchanged when the decision commits; a missing volume is a
// *commands.NotFoundError.
func existingVolume(v projections.View, namespace, id string) (*pc.Volume, events.Precondition, error) {
	vol, err := pc.GetVolume(v, namespace, id)
	if errors.Is(err, projections.ErrNotFound) {
		return nil, events.Precondition{}, &commands.NotFoundError{Kind: "volume", ID: id}
	} else if err != nil {
		return nil, events.Precondition{}, err
	}
	return vol, events.Precondition{Table: pc.VolumesTable, Key: pc.Key(namespace, id), Op: events.ModifyIndex, Index: vol.ModifyIndex}, nil
}
