package evaldelete

import (
	"fmt"

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

// decodeHead decodes the head of the encoded events.Evaluation b by
// hand: the head's fields read, every other value skipped unread, without
// the reflection of a struct decode (the walk of a bulk delete decodes one
// head per eval).
func decodeHead(b []byte) (head, error) {
	var h head
	err := events.Fields(b, func(key, value []byte) error {
		var field *string
		switch string(key) {
		case "id":
			field = &h.ID
		case "ns":
			field = &h.Namespace
		case "ty":
			field = &h.Type
		case "trig":
			field = &h.TriggeredBy
		case "job":
			field = &h.JobID
		case "node":
			field = &h.NodeID
		case "dep":
			field = &h.DeploymentID
		case "st":
			field = &h.Status
		default:
			return nil
		}
		var err error
		if *field, err = events.String(value); err != nil {
			return fmt.Errorf("eval field %q: %w", key, err)
		}
		return nil
	})
	return h, err
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
