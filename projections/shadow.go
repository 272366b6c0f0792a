package projections

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/ordoplane/ordo/storage/kv"
)

// The shadow keyspace holds projections being rebuilt next to the live
// ones, in the same store: build n writes a live key K (a row
// "t/<table>\x00<key>" or a table index "ti/<table>") at "sh/<n>/"+K.
// Nothing reads it but the build; the switch moves it over the live keys in
// one batch. It is local to a server: raft snapshots leave it out, and a
// server discards all of it on start (a shadow found then is a build a
// crash interrupted).
const shadowPrefix = "sh/"

// buildPrefix is the part of the shadow keyspace of build n.
func buildPrefix(n uint64) []byte { return fmt.Appendf(nil, "%s%d/", shadowPrefix, n) }

func prefixed(prefix, k []byte) []byte {
	out := make([]byte, 0, len(prefix)+len(k))
	return append(append(out, prefix...), k...)
}

// shadowWriter is what the projections being rebuilt write through: it
// maps their keys into the shadow keyspace, and refuses any key outside
// their tables, so a rebuild writes nothing else (no archive, no applied
// index, no other projection) and a projection that read another's table
// fails loudly instead of reading an empty shadow.
type shadowWriter struct {
	w      kv.Writer
	prefix []byte
	owned  map[string]bool
	// err is the first refusal, in case a projection drops the error.
	err error
}

var _ kv.Writer = (*shadowWriter)(nil)

func (s *shadowWriter) key(k []byte) ([]byte, error) {
	if !s.owned[string(keyTable(k))] { // no allocation for the lookup
		err := fmt.Errorf("%w: %q, outside the tables of the projections replayed", ErrForeignTable, k)
		if s.err == nil {
			s.err = err
		}
		return nil, err
	}
	return prefixed(s.prefix, k), nil
}

func (s *shadowWriter) Get(k []byte) ([]byte, error) {
	sk, err := s.key(k)
	if err != nil {
		return nil, err
	}
	return s.w.Get(sk)
}

func (s *shadowWriter) Scan(lower, upper []byte, reverse bool, fn func(k, v []byte) error) error {
	sl, err := s.key(lower)
	if err != nil {
		return err
	}
	su := kv.PrefixEnd(s.prefix)
	if upper != nil {
		su = prefixed(s.prefix, upper)
	}
	return s.w.Scan(sl, su, reverse, func(k, v []byte) error { return fn(k[len(s.prefix):], v) })
}

func (s *shadowWriter) Set(k, v []byte) error {
	sk, err := s.key(k)
	if err != nil {
		return err
	}
	return s.w.Set(sk, v)
}

func (s *shadowWriter) Delete(k []byte) error {
	sk, err := s.key(k)
	if err != nil {
		return err
	}
	return s.w.Delete(sk)
}

// shadowBuild is one rebuild of some projections into the shadow keyspace
// of a store, from that store's archive. It replays range after range
// (catchUp), each starting where the last ended, then switches.
type shadowBuild struct {
	store  *kv.Store
	prefix []byte
	projs  []Projection
	tables []string
	l      *lanes
	// upTo is the index through which the archive has been replayed.
	upTo uint64
}

// newShadowBuild returns build n of projs, into its part of the shadow
// keyspace, which it clears.
func newShadowBuild(store *kv.Store, n uint64, projs []Projection) (*shadowBuild, error) {
	prefix := buildPrefix(n)
	if err := store.DeleteRange(prefix, kv.PrefixEnd(prefix), false); err != nil {
		return nil, err
	}
	owned := map[string]bool{}
	var tables []string
	for _, p := range projs {
		for _, t := range p.Tables() {
			if owned[t] {
				return nil, fmt.Errorf("projections: table %s is listed twice", t)
			}
			owned[t] = true
			tables = append(tables, t)
		}
	}
	// The shadow is empty and only this build writes it, so each lane's
	// writer answers point reads from memory.
	return &shadowBuild{store: store, prefix: prefix, projs: projs, tables: tables, l: newLanes(store, prefix, true, projs, nil)}, nil
}

// catchUp replays the archive of src after the last index replayed through
// index to. src must hold the archive through to.
func (s *shadowBuild) catchUp(src kv.Reader, to uint64) error {
	if to <= s.upTo {
		return nil
	}
	if err := s.l.run(src, s.upTo+1, to); err != nil {
		return err
	}
	s.upTo = to
	return nil
}

// close releases the open batch; the shadow stays until discarded or
// switched.
func (s *shadowBuild) close() { s.l.close() }

// discard deletes the build's part of the shadow keyspace.
func (s *shadowBuild) discard() error {
	return s.store.DeleteRange(s.prefix, kv.PrefixEnd(s.prefix), false)
}

// switchLive replaces the live tables of the built projections with the
// shadow in one synced batch that also records their versions and clears
// their rebuild markers: a reader sees the old projections or the new,
// never a mix, and a crash leaves one or the other. The caller holds the
// FSM's apply lock and has caught the shadow up to the applied index.
func (s *shadowBuild) switchLive() error {
	wb := s.store.WriteBatch()
	defer wb.Close()
	for _, t := range s.tables {
		live := tablePrefix(t)
		if err := wb.DeleteRange(live, kv.PrefixEnd(live)); err != nil {
			return err
		}
		if err := wb.Delete(tableIndexKey(t)); err != nil {
			return err
		}
		sh := prefixed(s.prefix, live)
		err := s.store.Scan(sh, kv.PrefixEnd(sh), false, func(k, v []byte) error {
			return wb.Set(k[len(s.prefix):], v)
		})
		if err != nil {
			return fmt.Errorf("switch %s: %w", t, err)
		}
		idx, err := s.store.Get(prefixed(s.prefix, tableIndexKey(t)))
		switch {
		case err == nil:
			if err := wb.Set(tableIndexKey(t), idx); err != nil {
				return err
			}
		case !errors.Is(err, kv.ErrNotFound):
			return err
		}
	}
	if err := wb.DeleteRange(s.prefix, kv.PrefixEnd(s.prefix)); err != nil {
		return err
	}
	for _, p := range s.projs {
		if err := writeMeta(wb, p); err != nil {
			return err
		}
		if err := wb.Delete(markerKey(p.Name())); err != nil {
			return err
		}
	}
	return wb.Commit(true)
}

// discardShadow deletes the whole shadow keyspace.
func discardShadow(store *kv.Store) error {
	lower := []byte(shadowPrefix)
	return store.DeleteRange(lower, kv.PrefixEnd(lower), false)
}

// hasShadow reports whether r holds any shadow key.
func hasShadow(r kv.Reader) (bool, error) {
	found := false
	lower := []byte(shadowPrefix)
	err := r.Scan(lower, kv.PrefixEnd(lower), false, func(_, _ []byte) error {
		found = true
		return kv.ErrStop
	})
	return found, err
}

// withoutLocal hides what is local to a server (the shadow keyspace and
// the rebuild markers) from a raft snapshot's export.
type withoutLocal struct{ r kv.Reader }

func (l withoutLocal) Get(k []byte) ([]byte, error) { return l.r.Get(k) }

func (l withoutLocal) Scan(lower, upper []byte, reverse bool, fn func(k, v []byte) error) error {
	return l.r.Scan(lower, upper, reverse, func(k, v []byte) error {
		if bytes.HasPrefix(k, []byte(shadowPrefix)) || bytes.HasPrefix(k, []byte(markerPrefix)) {
			return nil
		}
		return fn(k, v)
	})
}
