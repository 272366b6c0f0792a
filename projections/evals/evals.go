package evals

import (
	"errors"
	"fmt"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/order"
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
		// replaying them needs no other table.
		for _, id := range p.IDs {
			if err := remove(tx, id); err != nil {
				return err
			}
		}
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
	for _, d := range []struct{ table, key string }{
		{Table, id},
		{ByJobTable, JobKey(old.Namespace, old.JobID) + id},
		{ByCreateTable, order.Key(r.CreateIndex, id)},
	} {
		// The row exists (just read) and so do its index rows.
		if err := tx.DeleteKnown(d.table, d.key); err != nil {
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
