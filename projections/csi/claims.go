package csi

import (
	"errors"
	"slices"
	"strconv"
	"strings"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
)

// Source returns the id of the volume request r claims for the allocation
// at index: "<source>[<index>]" for a per-alloc request, else the source.
func Source(r *events.VolumeRequest, index int) string {
	if r.PerAlloc {
		return r.Source + "[" + strconv.Itoa(index) + "]"
	}
	return r.Source
}

// AllocIndex returns the index of an allocation named "job.group[index]";
// 0 when the name carries none.
func AllocIndex(name string) int {
	i := strings.LastIndexByte(name, '[')
	if i < 0 || !strings.HasSuffix(name, "]") {
		return 0
	}
	n, err := strconv.Atoi(name[i+1 : len(name)-1])
	if err != nil {
		return 0
	}
	return n
}

// ClaimMode returns the claim (read or write) request r makes.
func ClaimMode(r *events.VolumeRequest) string {
	if r.ReadOnly || r.AccessMode == events.CSIAccessSingleNodeReader || r.AccessMode == events.CSIAccessMultiNodeReader {
		return events.CSIClaimRead
	}
	return events.CSIClaimWrite
}

// CSIRequests returns the CSI volume requests of group tg, sorted by name.
func CSIRequests(tg *events.TaskGroup) []events.VolumeRequest {
	var out []events.VolumeRequest
	for _, r := range tg.Volumes {
		if r != nil && r.Type == events.VolumeTypeCSI {
			out = append(out, *r)
		}
	}
	slices.SortFunc(out, func(a, b events.VolumeRequest) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// claimPlaced claims, for a placed allocation, every volume its group asks
// for (as recorded from the job's registration), with the request's modes.
func claimPlaced(tx *projections.Tx, a *events.Allocation) error {
	if a.Terminal() {
		return nil
	}
	reqs, err := placementRequests(tx.View, a)
	if err != nil || len(reqs) == 0 {
		return err
	}
	ar := allocRow{}
	for i := range reqs {
		req := &reqs[i]
		key := Key(a.Namespace, Source(req, AllocIndex(a.Name)))
		vr, _, err := get[volumeRow](tx.View, VolumesTable, key)
		if errors.Is(err, projections.ErrNotFound) {
			continue // the scheduler refuses this; a volume deregistered since
		} else if err != nil {
			return err
		}
		c := events.CSIVolumeClaim{AllocID: a.ID, NodeID: a.NodeID, Namespace: a.Namespace, JobID: a.JobID,
			Mode: ClaimMode(req), AccessMode: req.AccessMode, AttachmentMode: req.AttachmentMode, State: events.CSIClaimTaken}
		if (c.AccessMode == "" || c.AttachmentMode == "") && len(vr.Volume.RequestedCapabilities) > 0 {
			// The claim keeps the modes it is published with (N22).
			first := vr.Volume.RequestedCapabilities[0]
			c.AccessMode = cmpOr(c.AccessMode, first.AccessMode)
			c.AttachmentMode = cmpOr(c.AttachmentMode, first.AttachmentMode)
		}
		vr.setClaim(c)
		if err := put(tx, VolumesTable, key, vr); err != nil {
			return err
		}
		ar.Volumes = append(ar.Volumes, key)
	}
	if len(ar.Volumes) == 0 {
		return nil
	}
	slices.Sort(ar.Volumes)
	ar.Volumes = slices.Compact(ar.Volumes)
	return put(tx, AllocsTable, a.ID, &ar)
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// allocStopped turns the live claims of an allocation that stopped on its
// node (or was deleted) into past claims, state unpublishing, for the
// volume watcher to release. A deleted allocation's row goes too.
func allocStopped(tx *projections.Tx, id string, deleted bool) error {
	ar, _, err := get[allocRow](tx.View, AllocsTable, id)
	if errors.Is(err, projections.ErrNotFound) {
		return nil
	} else if err != nil {
		return err
	}
	if !ar.Terminal {
		for _, key := range ar.Volumes {
			if err := releaseClaim(tx, key, id); err != nil {
				return err
			}
		}
	}
	if deleted {
		_, err := tx.Delete(AllocsTable, id)
		return err
	}
	if ar.Terminal {
		return nil
	}
	ar.Terminal = true
	return put(tx, AllocsTable, id, ar)
}

// releaseClaim marks allocation alloc's claim on volume key as past.
func releaseClaim(tx *projections.Tx, key, alloc string) error {
	vr, _, err := get[volumeRow](tx.View, VolumesTable, key)
	if errors.Is(err, projections.ErrNotFound) {
		return nil
	} else if err != nil {
		return err
	}
	for i := range vr.Claims {
		if c := &vr.Claims[i]; c.AllocID == alloc && Live(c) {
			c.State = events.CSIClaimUnpublishing
			return put(tx, VolumesTable, key, vr)
		}
	}
	return nil
}

// placementRequests returns the CSI volume requests of allocation a's
// group in the job version it runs: none when the job is unknown.
func placementRequests(v projections.View, a *events.Allocation) ([]events.VolumeRequest, error) {
	j, _, err := get[jobRow](v, JobsTable, Key(a.Namespace, a.JobID))
	if errors.Is(err, projections.ErrNotFound) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	var reqs []events.VolumeRequest
	for _, ver := range j.Versions {
		if ver.Version != a.JobVersion {
			continue
		}
		for _, g := range ver.Groups {
			if g.Group == a.TaskGroup {
				reqs = g.Requests
			}
		}
	}
	return reqs, nil
}
