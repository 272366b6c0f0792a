package eventstest

import "github.com/ordoplane/ordo/events"

// SampleProvider returns a fully populated provider configuration.
func SampleProvider() events.ProviderConfig {
	return events.ProviderConfig{Name: "cheap-cloud", Driver: "sim", Priority: 50, LaunchRetries: 3,
		Pools: []events.ProviderPool{{Name: "main", MaxServers: 10, MaxCores: 64, MaxRAMMB: 65536,
			Labels: []string{"ubuntu-small"}, NodeAttributes: map[string]string{"zone": "a"}}},
		Labels: []events.LabelConfig{{Name: "ubuntu-small", InstanceType: "small", MinReady: 1}},
		Sim: &events.SimConfig{InstanceTypes: map[string]events.SimInstanceType{"small": {Cores: 2, RAMMB: 4096}},
			Quota: events.SimQuota{Instances: 20, Cores: 40, RAMMB: 81920}, BootTime: 30e9},
		Static: &events.StaticConfig{Hosts: []events.StaticHost{{Name: "h1", Address: "10.0.0.5", Labels: []string{"ubuntu-small"}}}},
	}
}

// launcherSamples returns a sample of every launcher event type.
func launcherSamples() map[string]events.Payload {
	const req, inst = "2TzMX6QwYSRWVAlRWX2zTqU0sRq", "2TzMXAvkIl0Ba6VgI5UvyyXfZmj"
	return map[string]events.Payload{
		"ProviderApplied": &events.ProviderApplied{Provider: SampleProvider()},
		"ProviderDeleted": &events.ProviderDeleted{Name: "cheap-cloud"},
		"ProviderPaused": &events.ProviderPaused{Name: "cheap-cloud", ConfigIndex: 7, Paused: true, RequestID: req,
			Reason: "quota: 2 cores free, 4 needed"},
		"ProviderLabelErrored": &events.ProviderLabelErrored{Name: "cheap-cloud", ConfigIndex: 7, Label: "ubuntu-small",
			Reason: "instance type \"small\" does not exist"},
		"TenantApplied": &events.TenantApplied{Tenant: events.Tenant{Name: "team-a", MaxServers: 5, MaxCores: 8, MaxRAMMB: 16384}},
		"TenantDeleted": &events.TenantDeleted{Name: "team-a"},
		"NodeRequestCreated": &events.NodeRequestCreated{Request: events.NodeRequest{ID: req,
			Labels: []string{"ubuntu-small", "ubuntu-large"}, Requestor: "ci-42", Tenant: "team-a", RelativePriority: 1, MinReady: true}},
		"NodeRequestStateChanged": &events.NodeRequestStateChanged{ID: req, State: events.RequestPending,
			Provider: "cheap-cloud", Pool: "main", Reason: "accepted"},
		"NodeRequestDeclined":  &events.NodeRequestDeclined{ID: req, Provider: "cheap-cloud", Reason: "no pool serves label \"gpu\""},
		"NodeRequestFulfilled": &events.NodeRequestFulfilled{ID: req, Provider: "cheap-cloud", Instances: []string{inst}},
		"NodeRequestFailed":    &events.NodeRequestFailed{ID: req, Provider: "cheap-cloud", Reason: "every provider declined"},
		"NodeRequestDeleted":   &events.NodeRequestDeleted{ID: req},
		"InstanceCreated": &events.InstanceCreated{Instance: events.Instance{ID: inst, Provider: "cheap-cloud", ConfigIndex: 7,
			Pool: "main", Label: "ubuntu-small", InstanceType: "small", Cores: 2, RAMMB: 4096, RequestID: req,
			Requestor: "ci-42", Tenant: "team-a", Attributes: map[string]string{"zone": "a"}}},
		"InstanceStateChanged": &events.InstanceStateChanged{ID: inst, State: events.InstanceReady, ExternalID: "sim-17",
			Addresses: []string{"10.0.0.17"}, Reason: "booted"},
		"InstanceAssigned": &events.InstanceAssigned{ID: inst, RequestID: req, Requestor: "ci-42", Tenant: "team-a"},
		"InstanceReleased": &events.InstanceReleased{ID: inst, RequestID: req},
		"InstanceDeleted":  &events.InstanceDeleted{ID: inst},
		"ComponentRegistered": &events.ComponentRegistered{Component: events.Component{Kind: events.ComponentLauncher, Server: "server-1",
			Pools: []events.LauncherPool{{Provider: "cheap-cloud", Pool: "main", ConfigIndex: 7, Driver: "sim", Priority: 50,
				Labels: []string{"ubuntu-small"}}}}},
		"ComponentDeregistered": &events.ComponentDeregistered{Kind: events.ComponentLauncher, Server: "server-1"},
	}
}
