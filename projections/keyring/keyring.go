package keyring

import (
	"errors"
	"fmt"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
)

// The projection's tables.
const (
	// Table holds one row per root key, keyed by id.
	Table = "root_keys"
	// DeletedTable holds one empty row per deleted root key, keyed by id.
	DeletedTable = "root_keys_deleted"
)

// Key is a root key's metadata as readers see it.
type Key struct {
	events.RootKeyMeta
	CreateIndex uint64
	ModifyIndex uint64
}

// Active reports whether the key is the active one.
func (k *Key) Active() bool { return k.State == events.RootKeyActive }

// Projection maintains the keyring tables.
type Projection struct{}

var _ projections.Projection = Projection{}

// Name implements projections.Projection.
func (Projection) Name() string { return "keyring" }

// Version implements projections.Projection.
func (Projection) Version() int { return 1 }

// Tables implements projections.Projection.
func (Projection) Tables() []string { return []string{Table, DeletedTable} }

// Apply implements projections.Projection: a row holds the key's last
// RootKeyUpserted payload.
func (Projection) Apply(tx *projections.Tx, ev *events.Event) error {
	switch ev.Type {
	case "RootKeyUpserted":
		raw, err := events.Upcast(ev)
		if err != nil {
			return err
		}
		id := ev.Key(events.KindRootKey)
		if _, err := tx.Delete(DeletedTable, id); err != nil {
			return err
		}
		return tx.Put(Table, id, raw)
	case "RootKeyDeleted":
		id := ev.Key(events.KindRootKey)
		removed, err := tx.Delete(Table, id)
		if err != nil || !removed {
			return err
		}
		return tx.Put(DeletedTable, id, nil)
	}
	return nil
}

func fromRow(r projections.Row) (*Key, error) {
	var p events.RootKeyUpserted
	if err := msgpack.Unmarshal(r.Value, &p); err != nil {
		return nil, fmt.Errorf("decode root key row: %w", err)
	}
	return &Key{RootKeyMeta: p.Key, CreateIndex: r.CreateIndex, ModifyIndex: r.ModifyIndex}, nil
}

// Get returns the key with id, or projections.ErrNotFound.
func Get(v projections.View, id string) (*Key, error) {
	r, err := v.Get(Table, id)
	if err != nil {
		return nil, err
	}
	return fromRow(r)
}

// List returns every key, by id.
func List(v projections.View) ([]*Key, error) {
	var out []*Key
	err := v.Scan(Table, "", false, func(_ string, r projections.Row) error {
		k, err := fromRow(r)
		if err != nil {
			return err
		}
		out = append(out, k)
		return nil
	})
	return out, err
}

// ErrNoActiveKey is returned by Active when no key is active (before the
// first leader created one).
var ErrNoActiveKey = errors.New("keyring: no active root key")

// Active returns the active key, or ErrNoActiveKey. When several are
// active (only possible through hand-made events) the newest wins.
func Active(v projections.View) (*Key, error) {
	list, err := List(v)
	if err != nil {
		return nil, err
	}
	var best *Key
	for _, k := range list {
		if k.Active() && (best == nil || k.CreateIndex > best.CreateIndex) {
			best = k
		}
	}
	if best == nil {
		return nil, ErrNoActiveKey
	}
	return best, nil
}

// Deleted returns the ids of deleted keys, sorted.
func Deleted(v projections.View) ([]string, error) {
	var out []string
	err := v.Scan(DeletedTable, "", false, func(id string, _ projections.Row) error {
		out = append(out, id)
		return nil
	})
	return out, err
}
