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

var (
	_ msgpack.CustomEncoder = Evaluation{}
	_ FieldEncoder          = Evaluation{}
)

// EncodeMsgpack implements msgpack.CustomEncoder: the bytes reflection
// writes (TestEvaluationEncoder, FuzzEvaluationEncoder and the field guard
// hold it to them), the fields taken in turn; its maps are encoded by
// reflection (in key order). On a value, so that one in a map encodes too.
func (e Evaluation) EncodeMsgpack(enc *msgpack.Encoder) error {
	w := WriterTo(enc)
	e.EncodeFields(&w)
	return w.Err()
}

// EncodeFields implements FieldEncoder.
func (e Evaluation) EncodeFields(w *FieldWriter) {
	// id, ns, pri, ty, trig, job, st: never omitted
	n := 7 + CountSet(e.JobModifyIndex != 0, e.NodeID != "", e.NodeModifyIndex != 0, e.DeploymentID != "",
		e.StatusDescription != "", e.Wait != 0, e.WaitUntil != 0, e.NextEval != "", e.PreviousEval != "",
		e.BlockedEval != "", len(e.ClassEligibility) > 0, e.EscapedComputedClass, len(e.QueuedAllocations) > 0,
		len(e.FailedTGAllocs) > 0, e.SnapshotIndex != 0, e.CreateTime != 0, e.ModifyTime != 0)
	w.Map(n)
	w.Str("id", e.ID, true)
	w.Str("ns", e.Namespace, true)
	w.Int("pri", int64(e.Priority), true)
	w.Str("ty", e.Type, true)
	w.Str("trig", e.TriggeredBy, true)
	w.Str("job", e.JobID, true)
	w.Uint("jmi", e.JobModifyIndex, e.JobModifyIndex != 0)
	w.Str("node", e.NodeID, e.NodeID != "")
	w.Uint("nmi", e.NodeModifyIndex, e.NodeModifyIndex != 0)
	w.Str("dep", e.DeploymentID, e.DeploymentID != "")
	w.Str("st", e.Status, true)
	w.Str("std", e.StatusDescription, e.StatusDescription != "")
	w.Int64("wait", int64(e.Wait), e.Wait != 0)
	w.Int64("wu", e.WaitUntil, e.WaitUntil != 0)
	w.Str("next", e.NextEval, e.NextEval != "")
	w.Str("prev", e.PreviousEval, e.PreviousEval != "")
	w.Str("blk", e.BlockedEval, e.BlockedEval != "")
	w.Value("ce", e.ClassEligibility, len(e.ClassEligibility) > 0)
	w.Bool("ecc", true, e.EscapedComputedClass)
	w.Value("qa", e.QueuedAllocations, len(e.QueuedAllocations) > 0)
	w.Value("fail", e.FailedTGAllocs, len(e.FailedTGAllocs) > 0)
	w.Uint("si", e.SnapshotIndex, e.SnapshotIndex != 0)
	w.Int64("ct", e.CreateTime, e.CreateTime != 0)
	w.Int64("mt", e.ModifyTime, e.ModifyTime != 0)
}
