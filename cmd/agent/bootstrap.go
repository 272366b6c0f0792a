package agent

import (
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/servers"
	"github.com/ordoplane/ordo/storage/kv"
	"github.com/ordoplane/ordo/storage/raftlog"
)

type raftServer struct{ ID, Address string }

// bootstrap forms the cluster from servers, all voters.
func (a *Agent) bootstrap(list []raftServer) error {
	var rs []raftlog.Server
	for _, s := range list {
		rs = append(rs, raftlog.Server{ID: s.ID, Address: s.Address, Voter: true})
	}
	return a.node.BootstrapCluster(rs)
}

// registered reports whether the servers projection holds id.
func registered(store *kv.Store, id string) bool {
	snap := store.Snapshot()
	defer snap.Close()
	_, err := servers.Get(projections.NewView(snap), id)
	return err == nil
}
