package csi

import (
	"testing"

	"github.com/ordoplane/ordo/client/serverapi"
	"github.com/ordoplane/ordo/events"
)

// TestExclusive: a single-writer volume is not published for writing
// while another job's allocation holds a write claim (two plans racing
// for it); the allocation's own claim, its job's older allocations,
// readers and multi-writer volumes pass.
func TestExclusive(t *testing.T) {
	a := events.Allocation{ID: "a2", Namespace: "default", JobID: "app"}
	vol := func(claims ...events.CSIVolumeClaim) *serverapi.CSIVolume {
		v := &serverapi.CSIVolume{CSIVolume: events.CSIVolume{ID: "db"}, WriteClaims: map[string]events.CSIVolumeClaim{}}
		for _, c := range claims {
			v.WriteClaims[c.AllocID] = c
		}
		return v
	}
	writer := &events.VolumeRequest{AccessMode: events.CSIAccessSingleNodeWriter}
	own := events.CSIVolumeClaim{AllocID: "a2", Namespace: "default", JobID: "app"}
	older := events.CSIVolumeClaim{AllocID: "a1", Namespace: "default", JobID: "app"}
	other := events.CSIVolumeClaim{AllocID: "b1", Namespace: "default", JobID: "other"}
	for _, tc := range []struct {
		name string
		v    *serverapi.CSIVolume
		r    *events.VolumeRequest
		ok   bool
	}{
		{"free", vol(), writer, true},
		{"own claim", vol(own), writer, true},
		{"older allocation of the job", vol(own, older), writer, true},
		{"another job", vol(own, other), writer, false},
		{"reader", vol(other), &events.VolumeRequest{ReadOnly: true, AccessMode: events.CSIAccessMultiNodeReader}, true},
		{"multi-writer", vol(other), &events.VolumeRequest{AccessMode: events.CSIAccessMultiNodeMultiW}, true},
	} {
		if err := exclusive(tc.v, tc.r, a); (err == nil) != tc.ok {
			t.Errorf("%s: %v, want ok=%v", tc.name, err, tc.ok)
		}
	}
}
