package servers

import (
	"fmt"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
)

// Table holds one row per server.
const Table = "servers"

// Server is a registered server.
type Server = events.ServerRegistered

// Projection maintains the servers table.
type Projection struct{}

var _ projections.Projection = Projection{}

// Name implements projections.Projection.
func (Projection) Name() string { return "servers" }

// Version implements projections.Projection.
func (Projection) Version() int { return 1 }

// Tables implements projections.Projection.
func (Projection) Tables() []string { return []string{Table} }

// Apply implements projections.Projection.
func (Projection) Apply(tx *projections.Tx, ev *events.Event) error {
	switch ev.Type {
	case "ServerRegistered":
		p, err := events.Decode(ev)
		if err != nil {
			return err
		}
		s := p.(*events.ServerRegistered)
		b, err := msgpack.Marshal(s)
		if err != nil {
			return fmt.Errorf("encode server %q: %w", s.ID, err)
		}
		return tx.Put(Table, s.ID, b)
	case "ServerRemoved":
		p, err := events.Decode(ev)
		if err != nil {
			return err
		}
		_, err = tx.Delete(Table, p.(*events.ServerRemoved).ID)
		return err
	}
	return nil
}

// Get returns the server with raft id, or projections.ErrNotFound.
func Get(v projections.View, id string) (*Server, error) {
	r, err := v.Get(Table, id)
	if err != nil {
		return nil, err
	}
	var s Server
	if err := msgpack.Unmarshal(r.Value, &s); err != nil {
		return nil, fmt.Errorf("decode server %q: %w", id, err)
	}
	return &s, nil
}

// List returns every registered server by id.
func List(v projections.View) ([]*Server, error) {
	var out []*Server
	err := v.Scan(Table, "", false, func(_ string, r projections.Row) error {
		var s Server
		if err := msgpack.Unmarshal(r.Value, &s); err != nil {
			return err
		}
		out = append(out, &s)
		return nil
	})
	return out, err
}
