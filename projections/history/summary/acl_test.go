package summary_test

import (
	"strings"
	"testing"

	"github.com/ordoplane/ordo/events"
)

// TestACLAndKeyringSummaries: the lines of ACL and root key events say
// what changed and never show a token's secret hash.
func TestACLAndKeyringSummaries(t *testing.T) {
	tok := &events.ACLTokenUpserted{AccessorID: "acc-1", SecretHash: "c2VjcmV0LWhhc2g", Name: "alice", Type: events.ACLTokenClient,
		Policies: []string{"write", "read"}, ExpirationTime: 1_800_000_000_000_000_000}
	renamed := *tok
	renamed.Name, renamed.Roles = "alice-2", []string{"ops"}
	for _, tc := range []struct {
		name, kind, id string
		events         []events.Payload
		want           []string // each line's first line
	}{
		{"token", events.KindACLToken, "acc-1", []events.Payload{tok, &renamed,
			&events.ACLTokensDeleted{AccessorIDs: []string{"acc-1"}, Expired: true}},
			[]string{"client token acc-1 created (alice), policies read, write, roles (none), expires 2027-01-15T08:00:00Z",
				"token updated: name alice → alice-2; roles ops", "token deleted (expired)"}},
		{"policy attached to a workload", events.KindACLPolicy, "readonly", []events.Payload{
			&events.ACLPolicyUpserted{Name: "readonly", Description: "read web", Rules: `namespace "default" { policy = "read" }`},
			&events.ACLPolicyUpserted{Name: "readonly", Description: "read web", Rules: `namespace "default" { policy = "read" }`,
				JobACL: &events.ACLWorkload{Namespace: "default", JobID: "web", Group: "api"}},
			&events.ACLPolicyDeleted{Name: "readonly"}},
			[]string{"policy readonly created (read web)", "policy updated: workload default/web/api", "policy readonly deleted"}},
		{"role", events.KindACLRole, "r1", []events.Payload{
			&events.ACLRoleUpserted{ID: "r1", Name: "ops", Policies: []string{"readonly"}},
			&events.ACLRoleUpserted{ID: "r1", Name: "ops", Policies: []string{"readonly", "deploy"}}},
			[]string{"role ops created, policies readonly", "role updated: policies readonly → deploy, readonly"}},
		{"root key", "root_key", "k1", []events.Payload{
			&events.RootKeyUpserted{Key: events.RootKeyMeta{KeyID: "k1", Algorithm: "aes256-gcm", State: events.RootKeyActive}},
			&events.RootKeyUpserted{Key: events.RootKeyMeta{KeyID: "k1", Algorithm: "aes256-gcm", State: events.RootKeyInactive}},
			&events.RootKeyDeleted{KeyID: "k1"}},
			[]string{"root key k1 created (aes256-gcm, active)", "root key state active → inactive", "root key k1 deleted"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := fold(t, tc.kind, tc.id, tc.events...)
			for i, line := range got {
				if strings.Contains(line, tok.SecretHash) {
					t.Errorf("line %d shows the secret hash: %s", i, line)
				}
				first, _, _ := strings.Cut(line, "\n")
				if i >= len(tc.want) || first != tc.want[i] {
					t.Errorf("line %d:\n got %s\nwant %s", i, first, tc.want[min(i, len(tc.want)-1)])
				}
			}
		})
	}
}
