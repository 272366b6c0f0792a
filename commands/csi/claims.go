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
	pc "github.com/ordoplane/ordo/projections/csi"
	"github.com/ordoplane/ordo/projections/nodes"
)

// claimStates are the states a claim update may set, in release order.
var claimStates = []string{events.CSIClaimUnpublishing, events.CSIClaimNodeDetached, events.CSIClaimControllerDetached, events.CSIClaimFreed}

// UpdateClaims moves claims of volumes along the release steps (the
// volume watcher's command), one event per volume in one entry. A claim
// may only move forward, which apply checks again (csi.ClaimRank); a
// claim the volume no longer has is skipped, so no precondition is needed
// and a batch is never refused for one volume that changed meanwhile.
type UpdateClaims struct {
	Volumes []VolumeClaims
}

// VolumeClaims are the claim updates of one volume.
type VolumeClaims struct {
	Namespace string
	VolumeID  string
	Claims    []events.CSIVolumeClaim
}

var _ commands.Command = UpdateClaims{}

// Validate implements commands.Command.
func (u UpdateClaims) Validate() error {
	if len(u.Volumes) == 0 {
		return commands.Invalid("Volumes", "no claims to update")
	}
	for _, vc := range u.Volumes {
		if err := namespace.ValidName("Namespace", vc.Namespace); err != nil {
			return err
		}
		if err := ValidID("VolumeID", vc.VolumeID); err != nil {
			return err
		}
		if len(vc.Claims) == 0 {
			return commands.Invalid("Claims", "no claims to update on volume %q", vc.VolumeID)
		}
		for _, c := range vc.Claims {
			if c.AllocID == "" {
				return commands.Invalid("Claims.AllocationID", "is required")
			}
			if !slices.Contains(claimStates, c.State) {
				return commands.Invalid("Claims.State", "%q is not a release state %v", c.State, claimStates)
			}
		}
	}
	return nil
}

// Decide implements commands.Command.
func (u UpdateClaims) Decide(v projections.View, _ time.Time, _ commands.IDs) (commands.Decision, error) {
	var evs []events.Payload
	for _, vc := range u.Volumes {
		vol, err := pc.GetVolume(v, vc.Namespace, vc.VolumeID)
		if errors.Is(err, projections.ErrNotFound) {
			continue // deregistered (forced) meanwhile: nothing to release
		} else if err != nil {
			return commands.Decision{}, err
		}
		var out []events.CSIVolumeClaim
		for _, c := range vc.Claims {
			if cur, ok := vol.Claim(c.AllocID); ok && pc.ClaimRank(c.State) > pc.ClaimRank(cur.State) {
				out = append(out, c)
			}
		}
		if len(out) > 0 {
			evs = append(evs, &events.CSIVolumeClaimsUpdated{Namespace: vc.Namespace, VolumeID: vc.VolumeID, Claims: out})
		}
	}
	return commands.Decision{Events: evs}, nil
}

// Detach releases volume ID's claims on NodeID (Nomad's `volume detach`)
// for a node whose client cannot report its allocations stopped (down,
// disconnected or gone): their claims are marked for the volume watcher
// to release. On a node that can report, a live claim is refused, naming
// its allocation; claims of stopped allocations are the watcher's already.
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
	vol, pre, err := existingVolume(v, d.Namespace, d.ID)
	if err != nil {
		return commands.Decision{}, err
	}
	var out []events.CSIVolumeClaim
	for _, c := range vol.Claims {
		if c.NodeID != d.NodeID {
			continue
		}
		if !pc.Live(&c) {
			continue // the watcher's already
		}
		// A live claim's allocation has not stopped on its client: detach
		// it only when that client cannot report (its node is down,
		// disconnected or gone), never under a task that may still run.
		if n, err := nodes.Get(v, d.NodeID); err == nil && n.Status != events.NodeStatusDown && n.Status != events.NodeStatusDisconnected {
			return commands.Decision{}, &commands.ConflictError{Precondition: pre,
				Reason: fmt.Sprintf("allocation %s has not stopped on node %s (%s); stop it first", c.AllocID, d.NodeID, n.Status)}
		} else if err != nil && !errors.Is(err, projections.ErrNotFound) {
			return commands.Decision{}, err
		}
		c.State = events.CSIClaimUnpublishing
		out = append(out, c)
	}
	if len(out) == 0 {
		return commands.Decision{}, nil // nothing live to release; past claims are the watcher's already
	}
	return commands.Decision{
		Events:        []events.Payload{&events.CSIVolumeClaimsUpdated{Namespace: d.Namespace, VolumeID: d.ID, Claims: out}},
		Preconditions: []events.Precondition{pre},
	}, nil
}
