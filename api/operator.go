package api

// RaftConfiguration is the answer of GET /v1/operator/raft/configuration
// (Nomad's api.RaftConfiguration).
type RaftConfiguration struct {
	Servers []RaftServer
	Index   uint64
}

// RaftServer is one server of the raft configuration.
type RaftServer struct {
	ID           string
	Node         string
	Address      string
	Leader       bool
	Voter        bool
	RaftProtocol string
}

// ReadIndex is the answer of GET /v1/operator/raft/read-index, which a
// follower asks the leader before answering a read from its own state.
type ReadIndex struct {
	// Index is the leader's applied index once a quorum confirmed it leads.
	Index uint64
}
