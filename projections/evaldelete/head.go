package evaldelete

import (
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
	r, err := v.Get(evals.Table, id)
	if err != nil {
		return nil, err
	}
	return decodeEval(f, id, r)
}
