package csi

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/commands/namespace"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/allocs"
	pc "github.com/ordoplane/ordo/projections/csi"
)

// claimStates are the states a claim update may set, in release order.
var claimStates = []string{events.CSIClaimUnpublishing, events.CSIClaimNodeDetached, events.CSIClaimControllerDetached, events.CSIClaimFreed}

// UpdateClaims moves claims of one volume along the release steps (the
// volume watcher's command). A claim may only move forward; a claim the
// volume no longer has is skipped.
type UpdateClaims struct {
	Namespace string
	VolumeID  string
	Claims    []events.CSIVolumeClaim
}

var _ commands.Command = UpdateClaims{}

// Validate implements commands.Command.
func (u UpdateClaims) Validate() error {
	if err := namespace.ValidName("Namespace", u.Namespace); err != nil {
		return err
	}
	if err := ValidID("VolumeID", u.VolumeID); err != nil {
		return err
	}
	if len(u.Claims) == 0 {
		return commands.Invalid("Claims", "no claims to update")
	}
	for _, c := range u.Claims {
		if c.AllocID == "" {
			return commands.Invalid("Claims.AllocationID", "is required")
		}
		if !slices.Contains(claimStates, c.State) {
			return commands.Invalid("Claims.State", "%q is not a release state %v", c.State, claimStates)
		}
	}
	return nil
}

// Decide implements commands.Command.
func (u UpdateClaims) Decide(v projections.View, _ time.Time, _ commands.IDs) (commands.Decision, error) {
	vol, err := pc.GetVolume(v, u.Namespace, u.VolumeID)
	if errors.Is(err, projections.ErrNotFound) {
		return commands.Decision{}, nil // deregistered (forced) meanwhile: nothing to release
	} else if err != nil {
		return commands.Decision{}, err
	}
	var out []events.CSIVolumeClaim
	for _, c := range u.Claims {
		cur, ok := vol.Claim(c.AllocID)
		if !ok || stateRank(c.State) <= stateRank(cur.State) {
			continue
		}
		out = append(out, c)
	}
	if len(out) == 0 {
		return commands.Decision{}, nil
	}
	return commands.Decision{
		Events: []events.Payload{&events.CSIVolumeClaimsUpdated{Namespace: u.Namespace, VolumeID: u.VolumeID, Claims: out}},
		Preconditions: []events.Precondition{{Table: pc.VolumesTable, Key: pc.Key(u.Namespace, u.VolumeID),
			Op: events.ModifyIndex, Index: vol.ModifyIndex}},
	}, nil
}

// stateRank orders claim states: taken first, freed last.
func stateRank(s string) int { return slices.Index(claimStates, s) + 1 }

// Detach releases volume ID's claims on NodeID (Nomad's `volume detach`):
// claims of allocations that stopped or are gone are marked for the
// volume watcher to release; a claim of an allocation still running on
// the node is refused, naming it.
type Detach struct {
	Namespace string
	ID        string
	NodeID    string
}

var _ commands.Command = Detach{}

// Validate implements commands.Command.
func (d Detach) Validate() error {
	if err := namespace.ValidName("namespace", d.Namespace); err != nil {
		return err
	}
	if err := ValidID("id", d.ID); err != nil {
		return err
	}
	if d.NodeID == "" {
		return commands.Invalid("node", "is required")
	}
	return nil
}

// Decide implements commands.Command.
func (d Detach) Decide(v projections.View, _ time.Time, _ commands.IDs) (commands.Decision, error) {
	vol, err := pc.GetVolume(v, d.Namespace, d.ID)
	if errors.Is(err, projections.ErrNotFound) {
		return commands.Decision{}, &commands.NotFoundError{Kind: "volume", ID: d.ID}
	} else if err != nil {
		return commands.Decision{}, err
	}
	pre := events.Precondition{Table: pc.VolumesTable, Key: pc.Key(d.Namespace, d.ID), Op: events.ModifyIndex, Index: vol.ModifyIndex}
	var out []events.CSIVolumeClaim
	for _, c := range vol.Claims {
		if c.NodeID != d.NodeID {
			continue
		}
		if pc.Live(&c) {
			if a, err := allocs.Get(v, c.AllocID); err == nil && !a.Terminal() {
				return commands.Decision{}, &commands.ConflictError{Precondition: pre,
					Reason: fmt.Sprintf("allocation %s still runs on node %s with the volume; stop it first", c.AllocID, d.NodeID)}
			}
			c.State = events.CSIClaimUnpublishing
			out = append(out, c)
		}
	}
	if len(out) == 0 {
		return commands.Decision{}, nil // nothing live to release; past claims are the watcher's already
	}
	return commands.Decision{
		Events:        []events.Payload{&events.CSIVolumeClaimsUpdated{Namespace: d.Namespace, VolumeID: d.ID, Claims: out}},
		Preconditions: []events.Precondition{pre},
	}, nil
}
