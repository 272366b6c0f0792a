package api

import "time"

// NodeWriteResponse is the answer of a node register, heartbeat, drain or
// eligibility update (Nomad's NodeUpdateResponse and its kin); the
// servers create no evaluations there, so EvalIDs is empty.
type NodeWriteResponse struct {
	// HeartbeatTTL is the time within which the node must heartbeat next
	// (nanoseconds on the wire); register and heartbeat only.
	HeartbeatTTL    time.Duration `json:",omitempty"`
	EvalIDs         []string
	EvalCreateIndex uint64
	NodeModifyIndex uint64
	Index           uint64
	Duplicate       bool
}
