package schedstate

import (
	"github.com/ordoplane/ordo/processors/scheduler"
	"github.com/ordoplane/ordo/projections/csi"
)

var (
	_ scheduler.VolumeState = (*State)(nil)
	_ scheduler.VolumeState = JobOverlay{}
)

// CSIVolume implements scheduler.VolumeState: the volume with its claims
// as the csi projection reads them (past claims resolved, N22).
func (s *State) CSIVolume(namespace, id string) (*csi.Volume, bool) {
	v, err := csi.GetVolume(s.v, namespace, id)
	if err != nil {
		s.fail(err)
		return nil, false
	}
	return v, true
}

// CSIPlugin implements scheduler.VolumeState.
func (s *State) CSIPlugin(id string) (*csi.Plugin, bool) {
	p, err := csi.GetPlugin(s.v, id)
	if err != nil {
		s.fail(err)
		return nil, false
	}
	return p, true
}

// CSIVolume implements scheduler.VolumeState through the State beneath.
func (o JobOverlay) CSIVolume(namespace, id string) (*csi.Volume, bool) {
	if vs, ok := o.State.(scheduler.VolumeState); ok {
		return vs.CSIVolume(namespace, id)
	}
	return nil, false
}

// CSIPlugin implements scheduler.VolumeState through the State beneath.
func (o JobOverlay) CSIPlugin(id string) (*csi.Plugin, bool) {
	if vs, ok := o.State.(scheduler.VolumeState); ok {
		return vs.CSIPlugin(id)
	}
	return nil, false
}
