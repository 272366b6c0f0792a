package eventstest

import "github.com/ordoplane/ordo/events"

// nodeSamples returns a fully populated payload of every node event type.
func nodeSamples() map[string]events.Payload {
	return map[string]events.Payload{
		"NodeRegistered": &events.NodeRegistered{Node: events.Node{
			ID:         "f3c1b2a4-5d6e-4f70-8a9b-0c1d2e3f4a5b",
			Name:       "client-1",
			Datacenter: "dc1",
			NodeClass:  "compute",
			NodePool:   "default",
			Attributes: map[string]string{"kernel.name": "linux", "cpu.arch": "amd64"},
			Meta:       map[string]string{"rack": "r1"},
			Resources:  events.NodeResources{CPU: 4000, MemoryMB: 8192, DiskMB: 100000},
			Reserved:   events.NodeResources{CPU: 100, MemoryMB: 256, DiskMB: 1000},
			Drivers: map[string]events.DriverInfo{"exec": {Detected: true, Healthy: true,
				HealthDescription: "Healthy", Attributes: map[string]string{"driver.exec": "1"}}},
			HTTPAddr: "10.0.0.7:4646",
			CSIControllerPlugins: map[string]*events.CSIInfo{"hostpath": {PluginID: "hostpath", Healthy: true,
				ControllerInfo: &events.CSIControllerInfo{Capabilities: []string{"CREATE_DELETE_VOLUME"}}}},
			CSINodePlugins: map[string]*events.CSIInfo{"hostpath": {PluginID: "hostpath", Healthy: true,
				NodeInfo: &events.CSINodeInfo{ID: "client-1", MaxVolumes: 64}}},
			Networks:       []events.NodeNetwork{{Name: events.DefaultHostNetwork, Address: "10.0.0.7", Device: "eth0"}},
			MinDynamicPort: 20000, MaxDynamicPort: 32000, ReservedPorts: "22,8000-8100",
			HostVolumes: map[string]*events.ClientHostVolume{"certs": {Name: "certs", Path: "/etc/ssl/certs", ReadOnly: true}},
			Status:      events.NodeStatusInitializing,
		}},
		"NodeStatusUpdated": &events.NodeStatusUpdated{ID: "f3c1b2a4-5d6e-4f70-8a9b-0c1d2e3f4a5b",
			Status: events.NodeStatusDown, Description: "missed heartbeat", MissedHeartbeat: true,
			UpdatedAt: 1_700_000_000_123_456_789},
		"NodeEligibilityUpdated": &events.NodeEligibilityUpdated{ID: "f3c1b2a4-5d6e-4f70-8a9b-0c1d2e3f4a5b",
			Eligibility: events.NodeIneligible},
		"NodeDrainUpdated": &events.NodeDrainUpdated{ID: "f3c1b2a4-5d6e-4f70-8a9b-0c1d2e3f4a5b",
			DrainStrategy: &events.DrainStrategy{Deadline: 3_600_000_000_000, IgnoreSystemJobs: true,
				ForceDeadline: 1_700_003_600_000_000_000, StartedAt: 1_700_000_000_000_000_000},
			MarkEligible: true},
		"NodeAllocsUpdated": &events.NodeAllocsUpdated{ID: "f3c1b2a4-5d6e-4f70-8a9b-0c1d2e3f4a5b"},
		"NodeDeregistered":  &events.NodeDeregistered{ID: "f3c1b2a4-5d6e-4f70-8a9b-0c1d2e3f4a5b"},
	}
}
