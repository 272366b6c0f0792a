package csi

import (
	"errors"
	"slices"
	"strings"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
)

// applyRegistered stores the volume's user-settable fields and secrets,
// keeping its claims (N18: a re-register leaves server fields alone).
func applyRegistered(tx *projections.Tx, p *events.CSIVolumeRegistered) error {
	key := Key(p.Volume.Namespace, p.Volume.ID)
	old, _, err := get[volumeRow](tx.View, VolumesTable, key)
	if err != nil && !errors.Is(err, projections.ErrNotFound) {
		return err
	}
	r := volumeRow{Volume: p.Volume, Secrets: p.Secrets}
	if old != nil {
		r.Claims = old.Claims
	}
	return put(tx, VolumesTable, key, &r)
}

// applyDeregistered removes the volume with whatever claims it had.
func applyDeregistered(tx *projections.Tx, p *events.CSIVolumeDeregistered) error {
	_, err := tx.Delete(VolumesTable, Key(p.Namespace, p.ID))
	return err
}

// applyClaimsUpdated replaces the stored claim of each claim's allocation
// when it moves the claim forward (ClaimRank); a freed claim is removed.
// A claim the volume no longer has (freed already, or the volume is gone)
// or one moving backwards is ignored.
func applyClaimsUpdated(tx *projections.Tx, p *events.CSIVolumeClaimsUpdated) error {
	key := Key(p.Namespace, p.VolumeID)
	r, _, err := get[volumeRow](tx.View, VolumesTable, key)
	if errors.Is(err, projections.ErrNotFound) {
		return nil
	} else if err != nil {
		return err
	}
	changed := false
	for _, c := range p.Claims {
		i := slices.IndexFunc(r.Claims, func(x events.CSIVolumeClaim) bool { return x.AllocID == c.AllocID })
		if i < 0 || ClaimRank(c.State) <= ClaimRank(r.Claims[i].State) {
			continue
		}
		if c.State == events.CSIClaimFreed {
			r.Claims = slices.Delete(r.Claims, i, i+1)
		} else {
			r.Claims[i] = c
		}
		changed = true
	}
	if !changed {
		return nil
	}
	return put(tx, VolumesTable, key, r)
}

// setClaim adds or replaces claim c in r, keeping the claims sorted by
// allocation id.
func (r *volumeRow) setClaim(c events.CSIVolumeClaim) {
	i, found := slices.BinarySearchFunc(r.Claims, c.AllocID, func(x events.CSIVolumeClaim, id string) int {
		return strings.Compare(x.AllocID, id)
	})
	if found {
		r.Claims[i] = c
		return
	}
	r.Claims = slices.Insert(r.Claims, i, c)
}
