package csi

import (
	"errors"
	"fmt"
	"sort"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
)

// ErrClaimsTaken refuses placements whose CSI claims the volume can no
// longer grant (see PlanClaims).
var ErrClaimsTaken = errors.New("ordo: CSI volume claims taken")

// PlanClaims checks the CSI claims placements would make against the
// volumes as v holds them — a single-node volume attached to another
// node by another job, or more write claims than the volume allows
// (other jobs' claims, live or being released, plus the placements') —
// and returns one precondition per volume claimed: its modify index as
// read here. The scheduler checked the same on its snapshot; this check,
// made where the plan is decided, catches a plan committed since, and
// the preconditions catch one committed between this decision and its
// apply, so two plans racing for one volume cannot both claim it.
//
// A failed check is an error wrapping ErrClaimsTaken, naming the volume.
func PlanClaims(v projections.View, placements []events.Allocation) ([]events.Precondition, error) {
	type want struct {
		ns, job string
		writes  int
		nodes   map[string]bool
		single  bool // a request asked a single-node access mode
	}
	wants := map[string]*want{}
	for i := range placements {
		a := &placements[i]
		if a.Terminal() {
			continue
		}
		reqs, err := placementRequests(v, a)
		if err != nil {
			return nil, err
		}
		for j := range reqs {
			req := &reqs[j]
			key := Key(a.Namespace, Source(req, AllocIndex(a.Name)))
			w := wants[key]
			if w == nil {
				w = &want{ns: a.Namespace, job: a.JobID, nodes: map[string]bool{}}
				wants[key] = w
			}
			if ClaimMode(req) == events.CSIClaimWrite {
				w.writes++
			}
			w.nodes[a.NodeID] = true
			w.single = w.single || req.AccessMode == events.CSIAccessSingleNodeReader || req.AccessMode == events.CSIAccessSingleNodeWriter
		}
	}
	keys := make([]string, 0, len(wants))
	for k := range wants {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var pre []events.Precondition
	for _, key := range keys {
		w := wants[key]
		ns, id := SplitKey(key)
		vol, err := GetVolume(v, ns, id)
		if errors.Is(err, projections.ErrNotFound) {
			continue // no claim is made on a volume that is gone (claimPlaced)
		} else if err != nil {
			return nil, err
		}
		pre = append(pre, events.Precondition{Table: VolumesTable, Key: key, Op: events.ModifyIndex, Index: vol.ModifyIndex})
		if err := grants(vol, w.ns, w.job, w.writes, w.nodes, w.single); err != nil {
			return nil, err
		}
	}
	return pre, nil
}

// grants reports, as an error, why vol cannot grant job's claims: writes
// write claims on nodes.
func grants(vol *Volume, ns, job string, writes int, nodes map[string]bool, single bool) error {
	other := func(c *events.CSIVolumeClaim) bool { return c.Namespace != ns || c.JobID != job }
	if single {
		for i := range vol.Claims {
			if c := &vol.Claims[i]; other(c) && !nodes[c.NodeID] {
				return fmt.Errorf("%w: volume %s is single-node and attached to node %s by allocation %s", ErrClaimsTaken, vol.ID, c.NodeID, c.AllocID)
			}
		}
	}
	if writes == 0 {
		return nil
	}
	maxW := vol.MaxWriters()
	if maxW < 0 {
		return nil
	}
	held := 0
	for i := range vol.Claims {
		if c := &vol.Claims[i]; c.Mode == events.CSIClaimWrite && other(c) {
			held++
		}
	}
	if held+writes > maxW {
		return fmt.Errorf("%w: volume %s allows %d writers; %d held by other jobs, %d asked", ErrClaimsTaken, vol.ID, maxW, held, writes)
	}
	return nil
}
