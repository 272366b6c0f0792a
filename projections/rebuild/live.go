package rebuild

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/internal/layout"
	"github.com/ordoplane/ordo/storage/kv"
)

// Build is one online rebuild of some projections into a scratch store
// beside the live one (kv.Store.OpenScratch), from the live store's
// archive: the live store's LSM takes none of the build's writes and
// compactions, only the finished tables, ingested at the switch. It
// replays range after range (CatchUp), each starting where the last
// ended, then switches (Switch). The FSM drives it (projections/fsm):
// it decides when to catch up and holds its apply lock for the switch.
type Build struct {
	store *kv.Store // the live store
	// scratch holds the projections being built, under their live keys.
	scratch *kv.Store
	projs   []projections.Projection
	tables  []string
	l       *lanes
	// upTo is the index through which the archive has been replayed.
	upTo uint64
	// files, once prepared, replace the live tables at the switch.
	files []*kv.TableFile
}

// NewBuild returns a build of projs in a new scratch store beside store.
// Close it, switched or not.
func NewBuild(store *kv.Store, projs []projections.Projection) (*Build, error) {
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
	return &Build{store: store, scratch: scratch, projs: projs, tables: tables, l: l}, nil
}

// CatchUp replays the archive of src after the last index replayed through
// index to. src must hold the archive through to.
func (s *Build) CatchUp(src kv.Reader, to uint64) error {
	if to <= s.upTo {
		return nil
	}
	if err := s.l.run(src, s.upTo+1, to); err != nil {
		return err
	}
	s.upTo = to
	return nil
}

// UpTo returns the index through which the build has replayed the
// archive.
func (s *Build) UpTo() uint64 { return s.upTo }

// Projections returns the projections the build rebuilds.
func (s *Build) Projections() []projections.Projection { return s.projs }

// Limit has at most n projections replay at once (0: all of them) while
// busy reports true (nil: always): a build beside a serving server leaves
// it cores while it applies entries.
func (s *Build) Limit(n int, busy func() bool) { s.l.limit(n, busy) }

// OnCommit has the build call check after each batch it commits, an error
// ending the replay, and progress with the stats of the projection
// furthest behind; either may be nil.
func (s *Build) OnCommit(check func() error, progress func(Stats)) {
	s.l.setCheck(check)
	s.l.progress = progress
}

// Stats returns what the projection furthest behind has replayed.
func (s *Build) Stats() Stats { return s.l.stats() }

// Close ends the build, switched or not: it releases the open batches
// and the table file not ingested, and deletes the scratch store.
func (s *Build) Close() error {
	s.l.close()
	discardFiles(s.files)
	s.files = nil
	return s.scratch.Close()
}

// Prepare writes what the scratch store holds into table files that
// replace the live tables of the built projections when the switch
// ingests them, and from then on has the build record the keys it writes,
// which the switch copies over the files'. An online rebuild prepares
// before it takes the FSM's apply lock, so the bulk of the copy does not
// stop the FSM.
//
// The files also delete the projections' stored versions: a stop between
// their ingest and the switch's batch, which writes them back, leaves the
// projections stale, rebuilt before the server serves again.
func (s *Build) Prepare() error {
	versions, err := s.store.NewTableFile()
	if err != nil {
		return err
	}
	names := projections.Names(s.projs)
	slices.Sort(names)
	for _, n := range names {
		if err == nil {
			err = versions.Delete(layout.MetaKey(n))
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

// Switch replaces the live tables of the built projections with the
// ones built: it ingests the prepared files (preparing them now if the
// build has not), then commits, in one synced batch, the keys the build
// wrote since, the projections' versions and their rebuild markers
// cleared. Readers wait for both steps, so a reader sees the old
// projections or the new, never a mix; a stop between the two leaves the
// projections stale (see Prepare). The caller holds the FSM's apply lock
// and has caught the build up to the applied index. It returns how long
// readers waited.
func (s *Build) Switch() (time.Duration, error) {
	if s.files == nil {
		if err := s.Prepare(); err != nil {
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
func (s *Build) finalWrites(wb *kv.WriteBatch) error {
	for _, p := range s.projs {
		if err := projections.WriteMeta(wb, p); err != nil {
			return err
		}
		if err := wb.Delete(layout.MarkerKey(p.Name())); err != nil {
			return err
		}
	}
	return nil
}
