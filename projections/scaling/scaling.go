package scaling

import (
	"errors"
	"fmt"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/jobs"
)

// Table holds one row of scaling events per job.
const Table = "scaling_events"

// MaxEvents is how many events a group keeps, as Nomad's
// JobTrackedScalingEvents.
const MaxEvents = 20

// Event is a recorded scaling event: Nomad's api.ScalingEvent.
type Event struct {
	events.ScalingEvent `msgpack:"ev"`
	// CreateIndex is the index of the entry that recorded it.
	CreateIndex uint64 `msgpack:"ci"`
}

// row is a job's events by group, newest first.
type row struct {
	Groups map[string][]Event `msgpack:"g"`
}

// Projection maintains the scaling events table.
type Projection struct{}

var _ projections.Projection = Projection{}

// Name implements projections.Projection.
func (Projection) Name() string { return "scaling" }

// Version implements projections.Projection.
func (Projection) Version() int { return 1 }

// Tables implements projections.Projection.
func (Projection) Tables() []string { return []string{Table} }

// Apply implements projections.Projection.
func (Projection) Apply(tx *projections.Tx, ev *events.Event) error {
	p, err := events.DecodeIf(ev, "JobScaled", "JobDeregistered")
	if p == nil || err != nil {
		return err
	}
	switch p := p.(type) {
	case *events.JobScaled:
		return record(tx, p, ev.Index)
	case *events.JobDeregistered:
		if p.Purge {
			_, err := tx.Delete(Table, jobs.Key(p.Namespace, p.ID))
			return err
		}
	}
	return nil
}

func record(tx *projections.Tx, p *events.JobScaled, index uint64) error {
	key := jobs.Key(p.Namespace, p.JobID)
	r, err := get(tx.View, key)
	if err != nil {
		return err
	}
	if r.Groups == nil {
		r.Groups = map[string][]Event{}
	}
	list := append([]Event{{ScalingEvent: p.Event, CreateIndex: index}}, r.Groups[p.Group]...)
	if len(list) > MaxEvents {
		list = list[:MaxEvents]
	}
	r.Groups[p.Group] = list
	b, err := events.Marshal(r) // map keys sorted: a row encodes the same live and rebuilt
	if err != nil {
		return fmt.Errorf("encode scaling events of job %q: %w", p.JobID, err)
	}
	return tx.Put(Table, key, b)
}

func get(v projections.View, key string) (*row, error) {
	raw, err := v.Get(Table, key)
	if errors.Is(err, projections.ErrNotFound) {
		return &row{}, nil
	} else if err != nil {
		return nil, err
	}
	var r row
	if err := msgpack.Unmarshal(raw.Value, &r); err != nil {
		return nil, fmt.Errorf("decode scaling events %q: %w", key, err)
	}
	return &r, nil
}

// Events returns the scaling events of job id in ns by group, newest
// first; an empty map when there are none.
func Events(v projections.View, ns, id string) (map[string][]Event, error) {
	r, err := get(v, jobs.Key(ns, id))
	if err != nil {
		return nil, err
	}
	if r.Groups == nil {
		return map[string][]Event{}, nil
	}
	return r.Groups, nil
}
