package csi

import (
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
)

// Projection maintains the CSI tables.
type Projection struct{}

var _ projections.Projection = Projection{}

// Name implements projections.Projection.
func (Projection) Name() string { return "csi" }

// Version implements projections.Projection.
func (Projection) Version() int { return 1 }

// Tables implements projections.Projection.
func (Projection) Tables() []string {
	return []string{VolumesTable, PluginsTable, JobsTable, AllocsTable, NodesTable}
}

// Apply implements projections.Projection.
func (Projection) Apply(tx *projections.Tx, ev *events.Event) error {
	p, err := events.DecodeIf(ev, "CSIVolumeRegistered", "CSIVolumeDeregistered", "CSIVolumeClaimsUpdated",
		"JobRegistered", "JobDeregistered",
		"AllocsPlaced", "AllocsDesiredUpdated", "AllocsClientUpdated", "AllocsDeleted",
		"NodeRegistered", "NodeStatusUpdated", "NodeDeregistered")
	if p == nil || err != nil {
		return err
	}
	switch p := p.(type) {
	case *events.CSIVolumeRegistered:
		return applyRegistered(tx, p)
	case *events.CSIVolumeDeregistered:
		return applyDeregistered(tx, p)
	case *events.CSIVolumeClaimsUpdated:
		return applyClaimsUpdated(tx, p)
	case *events.JobRegistered:
		return applyJob(tx, &p.Job)
	case *events.JobDeregistered:
		return applyJobDeregistered(tx, p)
	case *events.AllocsPlaced:
		for i := range p.Allocs {
			if err := claimPlaced(tx, &p.Allocs[i]); err != nil {
				return err
			}
		}
	case *events.AllocsDesiredUpdated:
		for _, u := range p.Updates {
			if terminalStatus(u.ClientStatus) {
				if err := allocStopped(tx, u.ID, false); err != nil {
					return err
				}
			}
		}
	case *events.AllocsClientUpdated:
		for _, u := range p.Updates {
			if terminalStatus(u.ClientStatus) {
				if err := allocStopped(tx, u.ID, false); err != nil {
					return err
				}
			}
		}
	case *events.AllocsDeleted:
		for _, id := range p.IDs {
			if err := allocStopped(tx, id, true); err != nil {
				return err
			}
		}
	case *events.NodeRegistered:
		return applyNode(tx, &p.Node)
	case *events.NodeStatusUpdated:
		return applyNodeStatus(tx, p.ID, p.Status == events.NodeStatusDown)
	case *events.NodeDeregistered:
		return applyNode(tx, &events.Node{ID: p.ID})
	}
	return nil
}

// terminalStatus reports whether client status s means the allocation
// stopped on its node.
func terminalStatus(s string) bool {
	switch s {
	case events.AllocClientComplete, events.AllocClientFailed, events.AllocClientLost:
		return true
	}
	return false
}
