package eventstest

import "github.com/ordoplane/ordo/events"

// aclSamples returns a sample of every ACL event type.
func aclSamples() map[string]events.Payload {
	return map[string]events.Payload{
		"ACLPolicyUpserted": &events.ACLPolicyUpserted{Name: "readonly-web", Description: "read web",
			Rules:  "namespace \"default\" {\n  policy = \"read\"\n}\n",
			JobACL: &events.ACLWorkload{Namespace: "default", JobID: "web", Group: "api", Task: "server"}},
		"ACLPolicyDeleted": &events.ACLPolicyDeleted{Name: "readonly-web"},
		"ACLTokenUpserted": &events.ACLTokenUpserted{AccessorID: "2f6d4c4e-6b43-4a8c-9d0d-3a0f3c0b1a11",
			SecretHash: "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
			Name:       "alice", Type: events.ACLTokenClient, Policies: []string{"readonly"},
			Roles: []string{"2TzMX6QwYSRWVAlRWX2zTqU0sRq"}, Global: true,
			CreateTime: 1700000000000000000, ExpirationTime: 1700028800000000000},
		"ACLTokensDeleted": &events.ACLTokensDeleted{AccessorIDs: []string{"2f6d4c4e-6b43-4a8c-9d0d-3a0f3c0b1a11"}, Expired: true},
		"ACLRoleUpserted": &events.ACLRoleUpserted{ID: "2TzMX6QwYSRWVAlRWX2zTqU0sRq", Name: "ops",
			Description: "operators", Policies: []string{"readonly", "ops"}},
		"ACLRoleDeleted":  &events.ACLRoleDeleted{ID: "2TzMX6QwYSRWVAlRWX2zTqU0sRq"},
		"ACLBootstrapped": &events.ACLBootstrapped{AccessorID: "2f6d4c4e-6b43-4a8c-9d0d-3a0f3c0b1a11", ResetIndex: 42},
	}
}
