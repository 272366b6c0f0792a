package events

import "github.com/vmihailenco/msgpack/v5"

var _ msgpack.CustomDecoder = (*Evaluation)(nil)

// plainEvaluation is Evaluation without its decoder.
type plainEvaluation Evaluation

// DecodeMsgpack implements msgpack.CustomDecoder: an evaluation read from
// bytes decodes straight from them, as an allocation does
// (Allocation.DecodeMsgpack), else by reflection. FuzzEvaluationDecoder
// holds the two to the same result.
func (e *Evaluation) DecodeMsgpack(dec *msgpack.Decoder) error {
	if r := bytesOf(dec); r != nil {
		d := fastReader{b: r.b, i: r.i}
		if e.decodeFast(&d) {
			r.i = d.i
			return nil
		}
	}
	return dec.Decode((*plainEvaluation)(e))
}

// decodeFast decodes the evaluation at d into e, as reflection does.
func (e *Evaluation) decodeFast(d *fastReader) bool {
	strs := &stringSpans{src: d.b}
	ok := d.fields(func(key []byte) bool {
		if dst := e.stringField(key); dst != nil {
			return d.strTo(strs, dst)
		}
		switch string(key) {
		case "pri":
			return d.intFieldTo(&e.Priority)
		case "jmi":
			return d.uintTo(&e.JobModifyIndex)
		case "nmi":
			return d.uintTo(&e.NodeModifyIndex)
		case "si":
			return d.uintTo(&e.SnapshotIndex)
		case "wait":
			return d.intTo((*int64)(&e.Wait))
		case "wu":
			return d.intTo(&e.WaitUntil)
		case "ct":
			return d.intTo(&e.CreateTime)
		case "mt":
			return d.intTo(&e.ModifyTime)
		case "ecc":
			return d.boolTo(&e.EscapedComputedClass)
		case "ce":
			return d.reflected(&e.ClassEligibility)
		case "qa":
			return d.reflected(&e.QueuedAllocations)
		case "fail":
			return d.reflected(&e.FailedTGAllocs)
		}
		return d.skip()
	})
	if ok {
		strs.set()
	}
	return ok
}

// stringField returns e's string field encoded under key, nil for none.
func (e *Evaluation) stringField(key []byte) *string {
	switch string(key) {
	case "id":
		return &e.ID
	case "ns":
		return &e.Namespace
	case "ty":
		return &e.Type
	case "trig":
		return &e.TriggeredBy
	case "job":
		return &e.JobID
	case "node":
		return &e.NodeID
	case "dep":
		return &e.DeploymentID
	case "st":
		return &e.Status
	case "std":
		return &e.StatusDescription
	case "next":
		return &e.NextEval
	case "prev":
		return &e.PreviousEval
	case "blk":
		return &e.BlockedEval
	}
	return nil
}
