package scheduler

import (
	"fmt"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections/csi"
)

// VolumeState is what a State offers for CSI volume feasibility: the
// volumes (claims as the csi projection reads them, past claims included)
// and plugins. A State that does not implement it places no group that
// asks for a CSI volume.
type VolumeState interface {
	CSIVolume(namespace, id string) (*csi.Volume, bool)
	CSIPlugin(id string) (*csi.Plugin, bool)
}

// planClaims counts the claims this plan's placements make, by volume key.
type planClaims map[string]struct{ read, write int }

// csiFeasible reports whether the allocation at index of group tg may be
// placed on node n as far as its CSI volumes go: each volume exists, its
// plugin runs healthy on n (and has a healthy controller when it needs
// one), it supports the request's modes, n is in its topology, and it has
// a free claim of the request's kind. When not, the reason says what is
// wrong; for exhausted write claims it says whether the claim will clear
// by itself (its allocation stopped or is gone: the volume watcher is
// releasing it) or needs the user (another job's allocation runs with it),
// N22. Claims held by the job's own allocations do not block its
// placements, so a new version can replace an old one.
func (s *sched) csiFeasible(tg *events.TaskGroup, index int, n *Node) (bool, string) {
	reqs := csi.CSIRequests(tg)
	if len(reqs) == 0 {
		return true, ""
	}
	vs, ok := s.st.(VolumeState)
	if !ok {
		return false, "CSI volumes are unavailable to this scheduler"
	}
	for i := range reqs {
		req := &reqs[i]
		id := csi.Source(req, index)
		vol, ok := vs.CSIVolume(s.job.Namespace, id)
		if !ok {
			return false, fmt.Sprintf("missing CSI volume %s", id)
		}
		plugin, ok := vs.CSIPlugin(vol.PluginID)
		if !ok {
			return false, fmt.Sprintf("CSI plugin %s of volume %s is missing", vol.PluginID, id)
		}
		info, healthy := plugin.NodeHealthy(n.ID)
		if !healthy {
			return false, fmt.Sprintf("CSI plugin %s is missing or unhealthy on the node", vol.PluginID)
		}
		if plugin.ControllerRequired && plugin.ControllersHealthy == 0 {
			return false, fmt.Sprintf("CSI plugin %s has no healthy controller", vol.PluginID)
		}
		if !vol.Supports(req.AccessMode, req.AttachmentMode) {
			return false, fmt.Sprintf("CSI volume %s does not support access mode %q with attachment mode %q", id, req.AccessMode, req.AttachmentMode)
		}
		if len(vol.Topologies) > 0 {
			var top *events.CSITopology
			if info.NodeInfo != nil {
				top = info.NodeInfo.AccessibleTopology
			}
			in := false
			for _, t := range vol.Topologies {
				in = in || t.Matches(top)
			}
			if !in {
				return false, fmt.Sprintf("CSI volume %s is not accessible from the node's topology", id)
			}
		}
		if ok, why := s.freeClaim(vol, req, id, n); !ok {
			return false, why
		}
	}
	return true, ""
}

// freeClaim reports whether volume vol has a free claim for request req
// on node n, counting this plan's placements.
func (s *sched) freeClaim(vol *csi.Volume, req *events.VolumeRequest, id string, n *Node) (bool, string) {
	key := csi.Key(vol.Namespace, vol.ID)
	mine := func(c *events.CSIVolumeClaim) bool { return c.Namespace == s.job.Namespace && c.JobID == s.job.ID }
	single := false
	for _, c := range vol.RequestedCapabilities {
		if c.AccessMode == req.AccessMode || req.AccessMode == "" {
			single = c.AccessMode == events.CSIAccessSingleNodeReader || c.AccessMode == events.CSIAccessSingleNodeWriter
			break
		}
	}
	if single {
		for i := range vol.Claims {
			if c := &vol.Claims[i]; c.NodeID != n.ID && !mine(c) {
				return false, fmt.Sprintf("CSI volume %s is single-node and attached to node %s by allocation %s%s", id, c.NodeID, c.AllocID, clears(c))
			}
		}
	}
	if csi.ClaimMode(req) != events.CSIClaimWrite {
		return true, ""
	}
	max := vol.MaxWriters()
	if max == 0 {
		return false, fmt.Sprintf("CSI volume %s has no writer access mode", id)
	}
	if max < 0 {
		return true, ""
	}
	others := s.planClaims[key].write
	var blocker *events.CSIVolumeClaim
	for i := range vol.Claims {
		c := &vol.Claims[i]
		if c.Mode != events.CSIClaimWrite || mine(c) {
			continue
		}
		others++
		if blocker == nil || (csi.Live(c) && !csi.Live(blocker)) {
			blocker = c // a live claim of another job is the one to name
		}
	}
	if others < max {
		return true, ""
	}
	if blocker == nil {
		return false, fmt.Sprintf("CSI volume %s has exhausted its available writer claims within this plan", id)
	}
	return false, fmt.Sprintf("CSI volume %s has exhausted its available writer claims: held by allocation %s of job %s%s",
		id, blocker.AllocID, blocker.JobID, clears(blocker))
}

// clears says whether claim c will clear by itself (N22).
func clears(c *events.CSIVolumeClaim) string {
	if csi.Live(c) {
		return ", which is running: stop it to free the volume"
	}
	return ", which has stopped or was garbage collected: the claim is being released, no action needed"
}

// claimPlaced counts a placement's claims in the plan.
func (s *sched) claimPlaced(tg *events.TaskGroup, index int) {
	for _, req := range csi.CSIRequests(tg) {
		if s.planClaims == nil {
			s.planClaims = planClaims{}
		}
		key := csi.Key(s.job.Namespace, csi.Source(&req, index))
		c := s.planClaims[key]
		if csi.ClaimMode(&req) == events.CSIClaimWrite {
			c.write++
		} else {
			c.read++
		}
		s.planClaims[key] = c
	}
}

// hasCSI reports whether a group asks for CSI volumes.
func hasCSI(tg *events.TaskGroup) bool { return len(csi.CSIRequests(tg)) > 0 }
