package rebuild

import (
	"bytes"
	"fmt"

	"github.com/ordoplane/ordo/projections/internal/layout"
	"github.com/ordoplane/ordo/storage/kv"
)

// shadowWriter is what the projections being rebuilt write through: it
// refuses any key outside their tables, so a rebuild writes nothing else
// (no archive, no applied index, no other projection) and a projection
// that read another's table fails loudly instead of reading an empty one,
// and it records the keys written once asked to (track).
type shadowWriter struct {
	w     kv.Writer
	owned map[string]bool
	// touched, when set, records the keys written.
	touched map[string]struct{}
	// err is the first refusal, in case a projection drops the error.
	err error
	// lastOwned is the rows' prefix of the table of the last key found
	// owned (rowPrefix): a key it starts is owned, without a lookup.
	lastOwned []byte
}

var (
	_ kv.Writer          = (*shadowWriter)(nil)
	_ layout.ValueWriter = (*shadowWriter)(nil)
	_ layout.OwnedSetter = (*shadowWriter)(nil)
)

// check refuses k unless it is a key of an owned table.
func (s *shadowWriter) check(k []byte) error {
	if len(s.lastOwned) > 0 && bytes.HasPrefix(k, s.lastOwned) {
		return nil
	}
	tb := layout.KeyTable(k)
	if !s.owned[string(tb)] { // no allocation for the lookup
		err := fmt.Errorf("%w: %q, outside the tables of the projections replayed", ErrForeignTable, k)
		if s.err == nil {
			s.err = err
		}
		return err
	}
	s.lastOwned = layout.RowPrefix(s.lastOwned[:0], tb)
	return nil
}

func (s *shadowWriter) Get(k []byte) ([]byte, error) {
	if err := s.check(k); err != nil {
		return nil, err
	}
	return s.w.Get(k)
}

func (s *shadowWriter) Scan(lower, upper []byte, reverse bool, fn func(k, v []byte) error) error {
	if err := s.check(lower); err != nil {
		return err
	}
	return s.w.Scan(lower, upper, reverse, fn)
}

func (s *shadowWriter) Set(k, v []byte) error {
	if err := s.check(k); err != nil {
		return err
	}
	s.touch(k)
	return s.w.Set(k, v)
}

// SetOwned is Set handing k and v over: the writer below keeps v when
// it can.
func (s *shadowWriter) SetOwned(k, v []byte) error {
	if err := s.check(k); err != nil {
		return err
	}
	s.touch(k)
	return layout.SetOwned(s.w, k, v)
}

func (s *shadowWriter) Delete(k []byte) error {
	if err := s.check(k); err != nil {
		return err
	}
	s.touch(k)
	return s.w.Delete(k)
}

// Value implements layout.ValueWriter: the writer below's, for an owned
// table.
func (s *shadowWriter) Value(k []byte) (any, uint64, uint64, layout.ValueState) {
	vw, ok := s.w.(layout.ValueWriter)
	if !ok || s.check(k) != nil {
		return nil, 0, 0, layout.ValueUnknown // Get refuses it
	}
	return vw.Value(k)
}

// KeepValue implements layout.ValueWriter.
func (s *shadowWriter) KeepValue(k []byte, v any) {
	if vw, ok := s.w.(layout.ValueWriter); ok {
		vw.KeepValue(k, v)
	}
}

// SetValue implements layout.ValueWriter: as SetOwned, with the value
// encoded here when the writer below keeps no values.
func (s *shadowWriter) SetValue(k []byte, create, modify uint64, v any, enc layout.Encoder) error {
	if err := s.check(k); err != nil {
		return err
	}
	s.touch(k)
	if vw, ok := s.w.(layout.ValueWriter); ok {
		return vw.SetValue(k, create, modify, v, enc)
	}
	b, err := enc.AppendEncoded(layout.EncodeRow(create, modify, nil), v)
	if err != nil {
		return err
	}
	return layout.SetOwned(s.w, k, b)
}

func (s *shadowWriter) touch(k []byte) {
	if s.touched != nil {
		s.touched[string(k)] = struct{}{}
	}
}
