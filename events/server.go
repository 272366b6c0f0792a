package events

// ServerRegistered records a server joining the raft configuration with the
// addresses others reach it at.
type ServerRegistered struct {
	ID       string `msgpack:"id" json:"ID"`
	RaftAddr string `msgpack:"raft" json:"RaftAddr"`
	HTTPAddr string `msgpack:"http" json:"HTTPAddr"`
}

// EntityKeys implements Payload.
func (p *ServerRegistered) EntityKeys() []Key { return []Key{{Kind: KindServer, Value: p.ID}} }

// ServerRemoved records a server leaving the raft configuration.
type ServerRemoved struct {
	ID string `msgpack:"id" json:"ID"`
}

// EntityKeys implements Payload.
func (p *ServerRemoved) EntityKeys() []Key { return []Key{{Kind: KindServer, Value: p.ID}} }

func init() {
	Register(Type{Name: "ServerRegistered", Version: 1, Topic: "Server",
		New: func() Payload { return new(ServerRegistered) }})
	Register(Type{Name: "ServerRemoved", Version: 1, Topic: "Server",
		New: func() Payload { return new(ServerRemoved) }})
}
