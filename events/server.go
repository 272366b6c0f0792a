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

// SnapshotRestored records an operator's restore of a snapshot file
// (`ordo operator snapshot restore`): the cluster's whole state — the
// archive and every projection — was replaced at raft index Index by the
// state the file holds, saved at SnapshotIndex. Events the archive held
// after SnapshotIndex before the restore are gone from it; this event,
// appended by the leader that installed the file right after, says so.
type SnapshotRestored struct {
	// Server is the leader that installed the file.
	Server string `msgpack:"server" json:"Server"`
	// Index is the raft index the state was installed at.
	Index uint64 `msgpack:"index" json:"Index"`
	// SnapshotIndex is the index the state was saved at, ClusterID the
	// cluster it was saved from, SavedBy the server that saved it and
	// SavedAt when (Unix nanoseconds, that server's clock).
	SnapshotIndex uint64 `msgpack:"sidx" json:"SnapshotIndex"`
	ClusterID     string `msgpack:"cluster" json:"ClusterID"`
	SavedBy       string `msgpack:"by,omitempty" json:"SavedBy"`
	SavedAt       int64  `msgpack:"at,omitempty" json:"SavedAt"`
	// Rows is how many rows the file held, Checksum its SHA-256 (hex).
	Rows     uint64 `msgpack:"rows" json:"Rows"`
	Checksum string `msgpack:"sha" json:"Checksum"`
}

// EntityKeys implements Payload.
func (p *SnapshotRestored) EntityKeys() []Key { return []Key{{Kind: KindServer, Value: p.Server}} }

func init() {
	Register(Type{Name: "SnapshotRestored", Version: 1, Topic: "Server",
		New: func() Payload { return new(SnapshotRestored) }})
	Register(Type{Name: "ServerRegistered", Version: 1, Topic: "Server",
		New: func() Payload { return new(ServerRegistered) }})
	Register(Type{Name: "ServerRemoved", Version: 1, Topic: "Server",
		New: func() Payload { return new(ServerRemoved) }})
}
