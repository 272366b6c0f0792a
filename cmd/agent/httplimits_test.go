package agent

import (
	"errors"
	"testing"

	"github.com/ordoplane/ordo/storage/raftlog"
)

// TestPeerHostsExemptsOtherServers: the hosts of the other servers in the
// raft configuration are exempt from the per-address cap, this server's
// own host is not (unless another server shares it), and a failed read
// keeps the last set.
func TestPeerHostsExemptsOtherServers(t *testing.T) {
	servers := []raftlog.Server{{ID: "self", Address: "10.0.0.1:4647"}, {ID: "b", Address: "10.0.0.2:4647"},
		{ID: "c", Address: "[fd00::3]:4647"}}
	var fail error
	p := &peerHosts{self: "self", servers: func() ([]raftlog.Server, error) { return servers, fail }}
	for ip, want := range map[string]bool{"10.0.0.1": false, "10.0.0.2": true, "fd00::3": true, "127.0.0.1": false} {
		if got := p.has(ip); got != want {
			t.Errorf("has(%s) = %v, want %v", ip, got, want)
		}
	}
	fail = errors.New("no leader")
	if !p.has("10.0.0.2") {
		t.Error("a failed read dropped the known servers")
	}
}
