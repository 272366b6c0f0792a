package eventstest

import "github.com/ordoplane/ordo/events"

// serviceSamples returns a fully populated payload of every service event
// type.
func serviceSamples() map[string]events.Payload {
	return map[string]events.Payload{
		"ServicesRegistered": &events.ServicesRegistered{NodeID: "node-1", Services: []events.ServiceRegistration{{
			ID: "_ordo-alloc-1-web-http", ServiceName: "web", Namespace: "payments", NodeID: "node-1",
			Datacenter: "dc1", JobID: "web", AllocID: "alloc-1", Tags: []string{"v1", "public"},
			Address: "10.0.0.7", Port: 23456,
			Checks: []events.CheckStatus{{Name: "alive", Status: events.CheckPassing, Output: "HTTP GET: 200 OK",
				Timestamp: 1700000005000000000}},
			CreateIndex: 40, ModifyIndex: 41}}},
		"ServicesDeregistered": &events.ServicesDeregistered{IDs: []string{"_ordo-alloc-1-web-http"},
			Reason: "alloc stopped"},
	}
}
