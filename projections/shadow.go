package projections

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/ordoplane/ordo/storage/kv"
)

// The shadow keyspace ("sh/") is where servers before the scratch store
// (shadowBuild) built projections, in the live store; nothing writes it
// now, and a server discards what an older one left there on start. Raft
// snapshots leave it out.
const shadowPrefix = "sh/"

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

var _ kv.Writer = (*shadowWriter)(nil)

// check refuses k unless it is a key of an owned table.
func (s *shadowWriter) check(k []byte) error {
	if len(s.lastOwned) > 0 && bytes.HasPrefix(k, s.lastOwned) {
		return nil
	}
	tb := keyTable(k)
	if !s.owned[string(tb)] { // no allocation for the lookup
		err := fmt.Errorf("%w: %q, outside the tables of the projections replayed", ErrForeignTable, k)
		if s.err == nil {
			s.err = err
		}
		return err
	}
	s.lastOwned = rowPrefix(s.lastOwned[:0], tb)
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

// setOwned is Set handing k and v over: the writer below keeps v when
// it can.
func (s *shadowWriter) setOwned(k, v []byte) error {
	if err := s.check(k); err != nil {
		return err
	}
	s.touch(k)
	return setOwned(s.w, k, v)
}

func (s *shadowWriter) Delete(k []byte) error {
	if err := s.check(k); err != nil {
		return err
	}
	s.touch(k)
	return s.w.Delete(k)
}

// value implements valueWriter: the writer below's, for an owned table.
func (s *shadowWriter) value(k []byte) (any, Row, valueState) {
	vw, ok := s.w.(valueWriter)
	if !ok || s.check(k) != nil {
		return nil, Row{}, valueUnknown // Get refuses it
	}
	return vw.value(k)
}

// keepValue implements valueWriter.
func (s *shadowWriter) keepValue(k []byte, v any) {
	if vw, ok := s.w.(valueWriter); ok {
		vw.keepValue(k, v)
	}
}

// setValue implements valueWriter: as setOwned, with the value encoded
// here when the writer below keeps no values.
func (s *shadowWriter) setValue(k []byte, r Row, v any, enc encoder) error {
	if err := s.check(k); err != nil {
		return err
	}
	s.touch(k)
	if vw, ok := s.w.(valueWriter); ok {
		return vw.setValue(k, r, v, enc)
	}
	b, err := enc.appendEncoded(encodeRow(r), v)
	if err != nil {
		return err
	}
	return setOwned(s.w, k, b)
}

func (s *shadowWriter) touch(k []byte) {
	if s.touched != nil {
		s.touched[string(k)] = struct{}{}
	}
}

// shadowBuild is one rebuild of some projections into a scratch store
// beside the live one (kv.Store.OpenScratch), from the live store's
// archive: the live store's LSM takes none of the build's writes and
// compactions, only the finished tables, ingested at the switch. It
// replays range after range (catchUp), each starting where the last
// ended, then switches.
type shadowBuild struct {
	store *kv.Store // the live store
	// scratch holds the projections being built, under their live keys.
	scratch *kv.Store
	projs   []Projection
	tables  []string
	l       *lanes
	// upTo is the index through which the archive has been replayed.
	upTo uint64
	// files, once prepared, replace the live tables at the switch.
	files []*kv.TableFile
}

// newShadowBuild returns a build of projs in a new scratch store beside
// store.
func newShadowBuild(store *kv.Store, projs []Projection) (*shadowBuild, error) {
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
	scratch, err := store.OpenScratch()
	if err != nil {
		return nil, err
	}
	// The scratch store is empty and only this build writes it, so each
	// lane's writer answers point reads from memory; rows no lane reads
	// stay in the lanes' logs until the switch's table files take them.
	l := newLanes(scratch, true, projs, nil)
	l.keepRowsInMemory()
	return &shadowBuild{store: store, scratch: scratch, projs: projs, tables: tables, l: l}, nil
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

// close ends the build, switched or not: it releases the open batches
// and the table file not ingested, and deletes the scratch store.
func (s *shadowBuild) close() error {
	s.l.close()
	discardFiles(s.files)
	s.files = nil
	return s.scratch.Close()
}

// prepare writes what the scratch store holds into table files that
// replace the live tables of the built projections when the switch
// ingests them, and from then on has the build record the keys it writes,
// which the switch copies over the files'. An online rebuild prepares
// before it takes the FSM's apply lock, so the bulk of the copy does not
// stop the FSM.
//
// The files also delete the projections' stored versions: a stop between
// their ingest and the switch's batch, which writes them back, leaves the
// projections stale, rebuilt before the server serves again.
func (s *shadowBuild) prepare() error {
	versions, err := s.store.NewTableFile()
	if err != nil {
		return err
	}
	names := names(s.projs)
	slices.Sort(names)
	for _, n := range names {
		if err == nil {
			err = versions.Delete(projectionMetaKey(n))
		}
	}
	if err == nil {
		err = versions.Finish() // its sync, too, out of the switch
	}
	if err != nil {
		versions.Discard()
		return err
	}
	files, err := tableFiles(s.scratch, s.store, s.tables, true, s.l.workers(), s.l.logs())
	if err != nil {
		versions.Discard()
		return err
	}
	s.files = append(files, versions)
	s.l.track()
	return nil
}

// switchLive replaces the live tables of the built projections with the
// ones built: it ingests the prepared files (preparing them now if the
// build has not), then commits, in one synced batch, the keys the build
// wrote since, the projections' versions and their rebuild markers
// cleared. Readers wait for both steps, so a reader sees the old
// projections or the new, never a mix; a stop between the two leaves the
// projections stale (see prepare). The caller holds the FSM's apply lock
// and has caught the build up to the applied index. It returns how long
// readers waited.
func (s *shadowBuild) switchLive() (time.Duration, error) {
	if s.files == nil {
		if err := s.prepare(); err != nil {
			return 0, err
		}
	}
	wb := s.store.WriteBatch()
	defer wb.Close() // (nothing once Replace committed it)
	for _, k := range s.l.touched() {
		v, err := s.scratch.Get(k)
		switch {
		case err == nil:
			err = wb.Set(k, v)
		case errors.Is(err, kv.ErrNotFound):
			err = wb.Delete(k)
		}
		if err != nil {
			return 0, err
		}
	}
	if err := s.finalWrites(wb); err != nil {
		return 0, err
	}
	// The ingest overlaps what the memtables hold (the live tables the FSM
	// writes): Pebble queues the file behind them rather than flushing them
	// first (the store's format, kv.Open), so readers wait for neither.
	fs := s.files
	s.files = nil
	return s.store.Replace(fs, wb)
}

// finalWrites adds to wb what the switch commits after the ingest besides
// the keys written since: the versions, the markers.
func (s *shadowBuild) finalWrites(wb *kv.WriteBatch) error {
	for _, p := range s.projs {
		if err := writeMeta(wb, p); err != nil {
			return err
		}
		if err := wb.Delete(markerKey(p.Name())); err != nil {
			return err
		}
	}
	return nil
}

// discardShadow deletes the whole shadow keyspace.
func discardShadow(store *kv.Store) error {
	lower := []byte(shadowPrefix)
	return store.DeleteRange(lower, kv.PrefixEnd(lower), false)
}

// withoutLocal hides what is local to a server (isLocal) from a raft
// snapshot's export.
type withoutLocal struct{ r kv.Reader }

func (l withoutLocal) Get(k []byte) ([]byte, error) { return l.r.Get(k) }

func (l withoutLocal) Scan(lower, upper []byte, reverse bool, fn func(k, v []byte) error) error {
	return l.r.Scan(lower, upper, reverse, func(k, v []byte) error {
		if isLocal(k) {
			return nil
		}
		return fn(k, v)
	})
}

// isLocal reports a key of what is local to one server: the shadow
// keyspace of a rebuild and the rebuild markers.
func isLocal(k []byte) bool {
	return bytes.HasPrefix(k, []byte(shadowPrefix)) || bytes.HasPrefix(k, []byte(markerPrefix))
}
