package evals

import (
	"errors"
	"fmt"
	"slices"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/order"
	"github.com/ordoplane/ordo/storage/kv"
)

// The projection's tables.
const (
	// Table holds one row per eval, keyed by id.
	Table = "evals"
	// ByJobTable indexes evals by "<namespace>\x00<job>\x00<id>".
	ByJobTable = "evals_by_job"
	// ByCreateTable indexes evals by order.Key(create index, id).
	ByCreateTable = "evals_by_create"
)

func init() {
	projections.ScanOnly(ByJobTable)
	projections.ScanOnly(ByCreateTable)
}

// Eval is an evaluation as readers see it: its CreateIndex and
// ModifyIndex are the row's.
type Eval struct {
	events.Evaluation
	// RelatedEvals is filled by Related for ?related=true; never stored.
	RelatedEvals []*Stub
}

// Projection maintains the evals tables.
type Projection struct{}

var _ projections.Projection = Projection{}

// Name implements projections.Projection.
func (Projection) Name() string { return "evals" }

// Version implements projections.Projection. 2: an eval created by its
// job's (de)registration gets the entry's index as its JobModifyIndex.
func (Projection) Version() int { return 2 }

// Tables implements projections.Projection.
func (Projection) Tables() []string { return []string{Table, ByJobTable, ByCreateTable} }

// Apply implements projections.Projection.
func (Projection) Apply(tx *projections.Tx, ev *events.Event) error {
	p, err := events.DecodeIf(ev, "EvalsUpserted", "EvalsDeleted", "EvalsPageDeleted")
	if p == nil || err != nil {
		return err
	}
	switch p := p.(type) {
	case *events.EvalsUpserted:
		for i := range p.Evals {
			if err := upsert(tx, &p.Evals[i]); err != nil {
				return err
			}
		}
	case *events.EvalsDeleted:
		for _, id := range p.IDs {
			if err := remove(tx, id); err != nil {
				return err
			}
		}
	case *events.EvalsPageDeleted:
		// IDs were chosen at apply (N4, N6; see projections/evaldelete):
		// replaying them needs no other table. Deleted says where their
		// rows are (events logged before it have none: read them).
		if len(p.Deleted) == len(p.IDs) {
			return removeKnown(tx, p.IDs, p.Deleted)
		}
		return removePage(tx, p.IDs)
	}
	return nil
}

// JobKey returns the ByJobTable prefix of a job's evals.
func JobKey(namespace, job string) string { return namespace + "\x00" + job + "\x00" }

// evalCodec encodes Table's rows.
var evalCodec = projections.Codec[events.Evaluation]{Name: "eval"}

func upsert(tx *projections.Tx, e *events.Evaluation) error {
	if e.ID == "" {
		return nil
	}
	old, _, err := projections.LookupValue(tx, &evalCodec, Table, e.ID)
	if err != nil {
		return err
	}
	cp := *e // the event's is shared with the other projections
	if old == nil {
		cp.JobModifyIndex = CommittedJobModifyIndex(&cp, tx.Index())
	} else if cp.JobModifyIndex == 0 {
		cp.JobModifyIndex = old.JobModifyIndex // a write-back from a copy without it
	}
	if err := projections.PutValue(tx, &evalCodec, Table, e.ID, &cp); err != nil {
		return err
	}
	// Index rows are new keys here (a new eval, or one moved to another
	// job): PutIndex writes the same row Put would, without reading.
	if old == nil {
		if err := tx.PutIndex(ByCreateTable, order.Key(tx.Index(), e.ID)); err != nil {
			return err
		}
	} else if old.Namespace == e.Namespace && old.JobID == e.JobID {
		return nil
	} else if err := tx.DeleteKnown(ByJobTable, JobKey(old.Namespace, old.JobID)+e.ID); err != nil {
		return err
	}
	return tx.PutIndex(ByJobTable, JobKey(e.Namespace, e.JobID)+e.ID)
}

// owner is the part of an eval row remove needs: decoding two fields
// skips the rest of the row, a third of the cost of a full decode.
type owner struct {
	Namespace string `msgpack:"ns"`
	JobID     string `msgpack:"job"`
}

func remove(tx *projections.Tx, id string) error {
	r, err := tx.Get(Table, id)
	if errors.Is(err, projections.ErrNotFound) {
		return nil
	} else if err != nil {
		return err
	}
	var old owner
	if err := msgpack.Unmarshal(r.Value, &old); err != nil {
		return fmt.Errorf("decode eval row %q: %w", id, err)
	}
	return removeRows(tx, []stored{{id: id, owner: old, create: r.CreateIndex}})
}

// stored is what removing an eval's rows takes: its id, owner and create
// index.
type stored struct {
	id string
	owner
	create uint64
}

// removeRows deletes the rows of evs, which exist (just read, or read by
// the page delete's walk in this state), and their index rows.
//
// It deletes table by table, each table's keys in key order: Pebble's
// memtable inserts a key next to the one inserted before it without
// searching the skiplist from the top, and a page's keys in one table are
// mostly adjacent (nothing written since lies between them), where keys
// alternating between three tables would each be searched for (one FSM
// deleting 100,000 evals: commits 610-645 → 375-450 ms).
func removeRows(tx *projections.Tx, evs []stored) error {
	var keys [3][]string // of Table, ByJobTable, ByCreateTable
	for _, e := range evs {
		keys[0] = append(keys[0], e.id)
		keys[1] = append(keys[1], JobKey(e.Namespace, e.JobID)+e.id)
		keys[2] = append(keys[2], order.Key(e.create, e.id))
	}
	for i, table := range []string{Table, ByJobTable, ByCreateTable} {
		slices.Sort(keys[i])
		for _, k := range keys[i] {
			if err := tx.DeleteKnown(table, k); err != nil {
				return err
			}
		}
	}
	return nil
}

// removeKnown removes the evals ids, which exist, whose owners and create
// indexes del gives (the page delete's walk read them in this state), without
// reading their rows again.
func removeKnown(tx *projections.Tx, ids []string, del []events.DeletedEval) error {
	evs := make([]stored, len(ids))
	for i, id := range ids {
		evs[i] = stored{id: id, owner: owner{Namespace: del[i].Namespace, JobID: del[i].JobID}, create: del[i].CreateIndex}
	}
	return removeRows(tx, evs)
}

// removeEach removes the evals ids one by one.
func removeEach(tx *projections.Tx, ids []string) error {
	for _, id := range ids {
		if err := remove(tx, id); err != nil {
			return err
		}
	}
	return nil
}

// pageScanFactor times the ids of a page bounds the rows removePage reads
// in one range scan of Table between the smallest and largest of them.
const pageScanFactor = 4

// removePage removes the evals ids, as remove does for each: a page of a
// delete by filter holds evals created close together, whose ids (when
// minted in time order) lie close together in Table, so one range scan
// finds their rows for a fraction of the cost of a point read each. A
// range holding more than pageScanFactor rows per id falls back to
// remove, id by id; both write the same.
func removePage(tx *projections.Tx, ids []string) error {
	if len(ids) < 2 {
		return removeEach(tx, ids)
	}
	want := make(map[string]*stored, len(ids))
	for _, id := range ids {
		want[id] = nil
	}
	lo, hi := slices.Min(ids), slices.Max(ids)
	n, limit, complete := 0, len(ids)*pageScanFactor, true
	err := tx.ScanFrom(Table, "", lo, false, func(id string, r projections.Row) error {
		if id > hi {
			return kv.ErrStop
		}
		if n++; n > limit {
			complete = false
			return kv.ErrStop
		}
		if _, ok := want[id]; !ok {
			return nil
		}
		e := &stored{id: id, create: r.CreateIndex}
		if err := msgpack.Unmarshal(r.Value, &e.owner); err != nil {
			return fmt.Errorf("decode eval row %q: %w", id, err)
		}
		want[id] = e
		return nil
	})
	if err != nil {
		return fmt.Errorf("evals %s..%s: %w", lo, hi, err)
	}
	if !complete {
		return removeEach(tx, ids)
	}
	evs := make([]stored, 0, len(ids))
	for _, id := range ids {
		e := want[id]
		if e == nil {
			continue // gone (or named twice: taken already)
		}
		want[id] = nil
		evs = append(evs, *e)
	}
	return removeRows(tx, evs)
}

func fromRow(r projections.Row) (*Eval, error) {
	e := &Eval{}
	if err := events.Unmarshal(r.Value, &e.Evaluation); err != nil {
		return nil, fmt.Errorf("decode eval row: %w", err)
	}
	e.CreateIndex, e.ModifyIndex = r.CreateIndex, r.ModifyIndex
	return e, nil
}
