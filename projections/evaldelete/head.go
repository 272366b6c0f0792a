package evaldelete

import (
	"fmt"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/evals"
)

// head is the part of an eval row that a compiled filter's fast path and
// the safety check read: decoding it skips the rest of the row (maps of
// placement metrics and queued allocations), half the cost of a full
// decode. The tags are events.Evaluation's.
type head struct {
	ID           string `msgpack:"id"`
	Namespace    string `msgpack:"ns"`
	Type         string `msgpack:"ty"`
	TriggeredBy  string `msgpack:"trig"`
	JobID        string `msgpack:"job"`
	NodeID       string `msgpack:"node,omitempty"`
	DeploymentID string `msgpack:"dep,omitempty"`
	Status       string `msgpack:"st"`
}

// readEval reads eval id for f: only its head when f needs no more (a nil
// filter or one compiled to the fast path), the whole eval otherwise.
func readEval(v projections.View, f *Filter, id string) (*events.Evaluation, error) {
	if f != nil && f.fast == nil {
		e, err := evals.Get(v, id)
		if err != nil {
			return nil, err
		}
		return &e.Evaluation, nil
	}
	r, err := v.Get(evals.Table, id)
	if err != nil {
		return nil, err
	}
	var h head
	if err := msgpack.Unmarshal(r.Value, &h); err != nil {
		return nil, fmt.Errorf("decode eval row %q: %w", id, err)
	}
	return &events.Evaluation{ID: h.ID, Namespace: h.Namespace, Type: h.Type, TriggeredBy: h.TriggeredBy, JobID: h.JobID,
		NodeID: h.NodeID, DeploymentID: h.DeploymentID, Status: h.Status}, nil
}
