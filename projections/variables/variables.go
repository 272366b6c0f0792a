package variables

import (
	"errors"
	"fmt"
	"strings"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
)

// The tables of the projection.
const (
	// Table holds one row per variable, keyed Key(namespace, path).
	Table = "variables"
	// UsageTable holds one Usage per namespace that has variables, keyed
	// by namespace.
	UsageTable = "variables_usage"
	// ByKeyTable indexes variables by the id of the key that encrypted
	// them: KeyIndex(keyID, namespace, path).
	ByKeyTable = "variables_by_key"
)

// AllNamespaces is the namespace argument that selects every namespace.
const AllNamespaces = "*"

// Key returns the row key of the variable at path in namespace ns,
// "<namespace>/<path>": namespace names have no slash, so the first one
// ends the namespace, and the key reads well in precondition errors.
func Key(ns, path string) string { return ns + "/" + path }

// SplitKey returns the namespace and path of a row key.
func SplitKey(k string) (ns, path string) {
	ns, path, _ = strings.Cut(k, "/")
	return ns, path
}

// KeyIndex returns the ByKeyTable key of a variable encrypted with keyID.
func KeyIndex(keyID, ns, path string) string { return keyID + "\x00" + Key(ns, path) }

// Variable is a stored variable: its metadata and encrypted items. It is
// Nomad's VariableMetadata in JSON, plus the key id (the ciphertext is not
// shown).
type Variable struct {
	Namespace   string
	Path        string
	CreateIndex uint64
	ModifyIndex uint64
	// CreateTime and ModifyTime are leader times in Unix nanoseconds.
	CreateTime int64
	ModifyTime int64
	// KeyID names the root key Data is encrypted with.
	KeyID string `json:"-"`
	// Data is the encrypted items.
	Data []byte `json:"-"`
}

// Size is the bytes the variable counts for in its namespace's usage.
func (v *Variable) Size() int64 { return int64(len(v.Data)) }

// Usage is what a namespace's variables store (N13).
type Usage struct {
	// Bytes is the sum of the variables' encrypted sizes.
	Bytes int64 `msgpack:"b"`
	// Count is the number of variables.
	Count int64 `msgpack:"n"`
}

// row is a variable's stored value; indexes come from the projection row.
type row struct {
	KeyID      string `msgpack:"kid"`
	Data       []byte `msgpack:"data"`
	CreateTime int64  `msgpack:"ct"`
	ModifyTime int64  `msgpack:"mt"`
}

// Projection maintains the variables tables.
type Projection struct{}

var _ projections.Projection = Projection{}

// Name implements projections.Projection.
func (Projection) Name() string { return "variables" }

// Version implements projections.Projection.
func (Projection) Version() int { return 1 }

// Tables implements projections.Projection.
func (Projection) Tables() []string { return []string{Table, UsageTable, ByKeyTable} }

// Apply implements projections.Projection.
func (Projection) Apply(tx *projections.Tx, ev *events.Event) error {
	p, err := events.DecodeIf(ev, "VariableUpserted", "VariableDeleted")
	if p == nil || err != nil {
		return err
	}
	switch p := p.(type) {
	case *events.VariableUpserted:
		return applyUpserted(tx, p)
	case *events.VariableDeleted:
		return applyDeleted(tx, p)
	}
	return nil
}

func applyUpserted(tx *projections.Tx, p *events.VariableUpserted) error {
	key := Key(p.Namespace, p.Path)
	old, _, err := getRow(tx.View, key)
	if err != nil && !errors.Is(err, projections.ErrNotFound) {
		return err
	}
	r := row{KeyID: p.KeyID, Data: p.Data, CreateTime: tx.Time(), ModifyTime: tx.Time()}
	delta := Usage{Bytes: p.Size(), Count: 1}
	if old != nil {
		r.CreateTime = old.CreateTime
		delta = Usage{Bytes: p.Size() - int64(len(old.Data))}
		if old.KeyID != p.KeyID {
			if _, err := tx.Delete(ByKeyTable, KeyIndex(old.KeyID, p.Namespace, p.Path)); err != nil {
				return err
			}
		}
	}
	b, err := msgpack.Marshal(&r)
	if err != nil {
		return fmt.Errorf("encode variable %q: %w", p.Path, err)
	}
	if err := tx.Put(Table, key, b); err != nil {
		return err
	}
	if old == nil || old.KeyID != p.KeyID {
		if err := tx.PutIndex(ByKeyTable, KeyIndex(p.KeyID, p.Namespace, p.Path)); err != nil {
			return err
		}
	}
	return addUsage(tx, p.Namespace, delta)
}

func applyDeleted(tx *projections.Tx, p *events.VariableDeleted) error {
	key := Key(p.Namespace, p.Path)
	old, _, err := getRow(tx.View, key)
	if errors.Is(err, projections.ErrNotFound) {
		return nil
	} else if err != nil {
		return err
	}
	if _, err := tx.Delete(Table, key); err != nil {
		return err
	}
	if _, err := tx.Delete(ByKeyTable, KeyIndex(old.KeyID, p.Namespace, p.Path)); err != nil {
		return err
	}
	return addUsage(tx, p.Namespace, Usage{Bytes: -int64(len(old.Data)), Count: -1})
}

// addUsage adds d to namespace ns's usage, removing the row when the
// namespace has no variables left. A zero change writes nothing.
func addUsage(tx *projections.Tx, ns string, d Usage) error {
	if d == (Usage{}) {
		return nil
	}
	u, err := UsageOf(tx.View, ns)
	if err != nil {
		return err
	}
	u.Bytes += d.Bytes
	u.Count += d.Count
	if u.Count <= 0 {
		_, err := tx.Delete(UsageTable, ns)
		return err
	}
	b, err := msgpack.Marshal(&u)
	if err != nil {
		return fmt.Errorf("encode usage of %q: %w", ns, err)
	}
	return tx.Put(UsageTable, ns, b)
}

func getRow(v projections.View, key string) (*row, projections.Row, error) {
	pr, err := v.Get(Table, key)
	if err != nil {
		return nil, pr, err
	}
	r, err := decodeRow(pr)
	return r, pr, err
}

func decodeRow(pr projections.Row) (*row, error) {
	var r row
	if err := msgpack.Unmarshal(pr.Value, &r); err != nil {
		return nil, fmt.Errorf("decode variable row: %w", err)
	}
	return &r, nil
}

// FromRow decodes the variable stored under key k (Key) as row pr, such as
// a write's answered row (fsm.AnsweredRow).
func FromRow(k string, pr projections.Row) (*Variable, error) { return fromRow(k, pr) }

func fromRow(k string, pr projections.Row) (*Variable, error) {
	r, err := decodeRow(pr)
	if err != nil {
		return nil, err
	}
	ns, path := SplitKey(k)
	return &Variable{Namespace: ns, Path: path, CreateIndex: pr.CreateIndex, ModifyIndex: pr.ModifyIndex,
		CreateTime: r.CreateTime, ModifyTime: r.ModifyTime, KeyID: r.KeyID, Data: r.Data}, nil
}
