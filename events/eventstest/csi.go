package eventstest

import "github.com/ordoplane/ordo/events"

// csiSamples returns a sample of every CSI volume event type.
func csiSamples() map[string]events.Payload {
	return map[string]events.Payload{
		"CSIVolumeRegistered": &events.CSIVolumeRegistered{Volume: events.CSIVolume{
			ID: "db[0]", Name: "db", Namespace: "payments", PluginID: "hostpath", ExternalID: "vol-0a1b",
			RequestedCapabilities: []events.CSIVolumeCapability{{AccessMode: events.CSIAccessSingleNodeWriter, AttachmentMode: events.CSIAttachmentFilesystem}},
			MountOptions:          &events.CSIMountOptions{FSType: "ext4", MountFlags: []string{"noatime"}},
			Parameters:            map[string]string{"tier": "fast"},
			Context:               map[string]string{"path": "/srv/vol-0a1b"},
			RequestedCapacityMin:  1 << 30, RequestedCapacityMax: 2 << 30, Capacity: 1 << 30,
			RequestedTopologies: &events.CSITopologyRequest{Required: []events.CSITopology{{Segments: map[string]string{"zone": "a"}}}},
			Topologies:          []events.CSITopology{{Segments: map[string]string{"zone": "a"}}},
		}, Secrets: map[string]string{"token": "s3cr3t"}},
		"CSIVolumeDeregistered": &events.CSIVolumeDeregistered{Namespace: "payments", ID: "db[0]", Force: true},
		"CSIVolumeClaimsUpdated": &events.CSIVolumeClaimsUpdated{Namespace: "payments", VolumeID: "db[0]",
			Claims: []events.CSIVolumeClaim{{AllocID: "8d2a4c1e-0b7f-4e1a-9c3d-5f6a7b8c9d0e", NodeID: "f3c1b2a4-5d6e-4f70-8a9b-0c1d2e3f4a5b",
				Namespace: "payments", JobID: "db", Mode: events.CSIClaimWrite, AccessMode: events.CSIAccessSingleNodeWriter,
				AttachmentMode: events.CSIAttachmentFilesystem, State: events.CSIClaimNodeDetached}}},
	}
}
