package projections

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections/internal/layout"
)

// Codec encodes the rows of a table whose values are T: as events.Marshal
// and msgpack.Unmarshal, the projections' row encoding. Reading and
// writing rows through it (GetValue, PutValue) gives the same rows as
// Get and Put of the encoded bytes; during a replay the writer keeps the
// decoded values too, so a row a run of entries keeps rewriting (an
// allocation, a job's summary) is decoded once and encoded once per
// commit instead of once per entry.
type Codec[T any] struct {
	// Name names the rows in errors ("alloc", "job summary").
	Name string
}

// decode decodes a row value.
func (c *Codec[T]) decode(b []byte) (*T, error) {
	v := new(T)
	if err := events.Unmarshal(b, v); err != nil {
		return nil, fmt.Errorf("decode %s row: %w", c.Name, err)
	}
	return v, nil
}

// AppendEncoded appends the encoding of v, a *T, to dst: the writer of a
// replay encodes the values it kept with it.
func (c *Codec[T]) AppendEncoded(dst []byte, v any) ([]byte, error) {
	b, err := events.AppendMarshal(dst, v.(*T))
	if err != nil {
		return dst, fmt.Errorf("encode %s row: %w", c.Name, err)
	}
	return b, nil
}

// GetValue returns the decoded value of the row at key in table, and the
// row (its Value unset when the writer kept the decoded value), or
// ErrNotFound. The value may be shared with the writer: the caller must
// not change it (copy it, change the copy, PutValue the copy).
func GetValue[T any](tx *Tx, c *Codec[T], table, key string) (*T, Row, error) {
	vw, _ := tx.w.(layout.ValueWriter)
	var k []byte
	if vw != nil {
		// In the Tx's key buffer: Get lays out the same key there.
		k = tx.key(table, key)
		v, create, modify, st := vw.Value(k)
		if t, ok := v.(*T); st == layout.ValueKept && ok {
			tx.last = lastRow{table: table, key: key, create: create, found: true, valid: true}
			return t, Row{CreateIndex: create, ModifyIndex: modify}, nil
		}
		if st == layout.ValueAbsent {
			tx.last = lastRow{table: table, key: key, valid: true}
			return nil, Row{}, ErrNotFound
		}
	}
	r, err := tx.Get(table, key)
	if err != nil {
		return nil, r, err
	}
	t, err := c.decode(r.Value)
	if err != nil {
		return nil, r, fmt.Errorf("%s/%s: %w", table, key, err)
	}
	if vw != nil {
		vw.KeepValue(k, t)
	}
	return t, r, nil
}

// LookupValue is GetValue with an absent row as nil.
func LookupValue[T any](tx *Tx, c *Codec[T], table, key string) (*T, Row, error) {
	v, r, err := GetValue(tx, c, table, key)
	if errors.Is(err, ErrNotFound) {
		return nil, Row{}, nil
	}
	return v, r, err
}

// PutValue writes v at key in table as Put writes its encoding, keeping
// the row's create index. v is handed over: the caller must not change it
// afterwards.
func PutValue[T any](tx *Tx, c *Codec[T], table, key string, v *T) error {
	vw, ok := tx.w.(layout.ValueWriter)
	if !ok {
		b, err := c.AppendEncoded(nil, v)
		if err != nil {
			return fmt.Errorf("%s/%s: %w", table, key, err)
		}
		return tx.Put(table, key, b)
	}
	create, err := tx.rowCreate(table, key)
	if err != nil {
		return err
	}
	if err := vw.SetValue(tx.key(table, key), create, tx.index, v, c); err != nil {
		return fmt.Errorf("put %s/%s: %w", table, key, err)
	}
	tx.wrote(table, key, create)
	return nil
}

// PutValueChanged is PutValue unless the row holds v already, when it
// writes nothing (N15: a table's index moves only when a row changed).
// same must say whether two values encode to the same bytes: a replay's
// writer compares the values it keeps, any other writer the encoded
// bytes.
func PutValueChanged[T any](tx *Tx, c *Codec[T], table, key string, v *T, same func(a, b *T) bool) error {
	if _, ok := tx.w.(layout.ValueWriter); ok {
		old, _, err := LookupValue(tx, c, table, key)
		if err != nil || old != nil && same(old, v) {
			return err
		}
		return PutValue(tx, c, table, key, v)
	}
	b, err := c.AppendEncoded(nil, v)
	if err != nil {
		return fmt.Errorf("%s/%s: %w", table, key, err)
	}
	if old, err := tx.Get(table, key); err == nil && bytes.Equal(old.Value, b) {
		return nil
	} else if err != nil && !errors.Is(err, ErrNotFound) {
		return err
	}
	return tx.Put(table, key, b)
}
