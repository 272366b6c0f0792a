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
