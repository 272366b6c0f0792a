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

// Version implements projections.Projection.
func (Projection) Version() int { return 1 }

// Tables implements projections.Projection.
func (Projection) Tables() []string { return []string{Table, ByJobTable, ByCreateTable} }

// Apply implements projections.Projection.
func (Projection) Apply(tx *projections.Tx, ev *events.Event) error {
	switch ev.Type {
	case "EvalsUpserted", "EvalsDeleted", "EvalsPageDeleted":
	default:
		return nil
	}
	p, err := events.Decode(ev)
	if err != nil {
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

func upsert(tx *projections.Tx, e *events.Evaluation) error {
	if e.ID == "" {
		return nil
	}
	old, err := Get(tx.View, e.ID)
	switch {
	case errors.Is(err, projections.ErrNotFound):
		old = nil
	case err != nil:
		return err
	}
	b, err := events.Marshal(e)
	if err != nil {
		return fmt.Errorf("encode eval %q: %w", e.ID, err)
	}
	if err := tx.Put(Table, e.ID, b); err != nil {
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
	return removeRow(tx, id, old, r.CreateIndex)
}

// removeRow deletes eval id's row, owned by o and created at create, and
// its index rows: the row exists (just read), and so do they.
func removeRow(tx *projections.Tx, id string, o owner, create uint64) error {
	for _, d := range []struct{ table, key string }{
		{Table, id},
		{ByJobTable, JobKey(o.Namespace, o.JobID) + id},
		{ByCreateTable, order.Key(create, id)},
	} {
		if err := tx.DeleteKnown(d.table, d.key); err != nil {
			return err
		}
	}
	return nil
}

// removeKnown removes the evals ids, which exist, whose owners and create
// indexes del gives (the page delete's walk read them in this state), without
// reading their rows again.
//
// It deletes table by table, each table's keys in key order: Pebble's
// memtable inserts a key next to the one inserted before it without
// searching the skiplist from the top, and a page's keys in one table are
// mostly adjacent (nothing written since lies between them), where keys
// alternating between three tables would each be searched for.
func removeKnown(tx *projections.Tx, ids []string, del []events.DeletedEval) error {
	rows := make([]string, 0, len(ids))
	byJob := make([]string, 0, len(ids))
	byCreate := make([]string, 0, len(ids))
	for i, id := range ids {
		rows = append(rows, id)
		byJob = append(byJob, JobKey(del[i].Namespace, del[i].JobID)+id)
		byCreate = append(byCreate, order.Key(del[i].CreateIndex, id))
	}
	for _, t := range []struct {
		table string
		keys  []string
	}{{Table, rows}, {ByJobTable, byJob}, {ByCreateTable, byCreate}} {
		slices.Sort(t.keys)
		for _, k := range t.keys {
			if err := tx.DeleteKnown(t.table, k); err != nil {
				return err
			}
		}
	}
	return nil
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
// delete by filter holds evals created close together, whose ids (ksuids,
// minted in time order) lie close together in Table, so one range scan
// finds their rows for a fraction of the cost of a point read each. A
// range holding more than pageScanFactor rows per id falls back to
// remove, id by id; both write the same.
func removePage(tx *projections.Tx, ids []string) error {
	if len(ids) < 2 {
		return removeEach(tx, ids)
	}
	type found struct {
		owner
		create uint64
	}
	want := make(map[string]*found, len(ids))
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
		f := &found{create: r.CreateIndex}
		if err := msgpack.Unmarshal(r.Value, &f.owner); err != nil {
			return fmt.Errorf("decode eval row %q: %w", id, err)
		}
		want[id] = f
		return nil
	})
	if err != nil {
		return fmt.Errorf("evals %s..%s: %w", lo, hi, err)
	}
	if !complete {
		return removeEach(tx, ids)
	}
	for _, id := range ids {
		f := want[id]
		if f == nil {
			continue // gone (or named twice: removed already)
		}
		want[id] = nil
		if err := removeRow(tx, id, f.owner, f.create); err != nil {
			return err
		}
	}
	return nil
}

func fromRow(r projections.Row) (*Eval, error) {
	e := &Eval{}
	if err := msgpack.Unmarshal(r.Value, &e.Evaluation); err != nil {
		return nil, fmt.Errorf("decode eval row: %w", err)
	}
	e.CreateIndex, e.ModifyIndex = r.CreateIndex, r.ModifyIndex
	return e, nil
}
