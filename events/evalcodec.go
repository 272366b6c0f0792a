package events

import (
	"time"

	"github.com/vmihailenco/msgpack/v5"
)

var _ msgpack.CustomDecoder = (*Evaluation)(nil)

// plainEvaluation is Evaluation without its decoder.
type plainEvaluation Evaluation

// DecodeMsgpack implements msgpack.CustomDecoder: an evaluation read from
// bytes decodes straight from them, as an allocation does
// (Allocation.DecodeMsgpack), else by reflection. FuzzEvaluationDecoder
// holds the two to the same result.
func (e *Evaluation) DecodeMsgpack(dec *msgpack.Decoder) error {
	return decodeFastOr(dec, e.decodeFast, (*plainEvaluation)(e))
}

// decodeFast decodes the evaluation at d into e, as reflection does.
func (e *Evaluation) decodeFast(d *fastReader) bool {
	n, ok := d.mapLen()
	if !ok {
		return false
	}
	strs := stringSpans{src: d.b}
	for range n {
		key, ok := d.str()
		if !ok {
			return false
		}
		var dst *string
		var v int64
		switch string(key) {
		case "id":
			dst = &e.ID
		case "ns":
			dst = &e.Namespace
		case "ty":
			dst = &e.Type
		case "trig":
			dst = &e.TriggeredBy
		case "job":
			dst = &e.JobID
		case "node":
			dst = &e.NodeID
		case "dep":
			dst = &e.DeploymentID
		case "st":
			dst = &e.Status
		case "std":
			dst = &e.StatusDescription
		case "next":
			dst = &e.NextEval
		case "prev":
			dst = &e.PreviousEval
		case "blk":
			dst = &e.BlockedEval
		case "pri":
			ok = d.intTo(&v)
			e.Priority = int(v)
		case "jmi":
			ok = d.uintTo(&e.JobModifyIndex)
		case "nmi":
			ok = d.uintTo(&e.NodeModifyIndex)
		case "si":
			ok = d.uintTo(&e.SnapshotIndex)
		case "wait":
			ok = d.intTo(&v)
			e.Wait = time.Duration(v)
		case "wu":
			ok = d.intTo(&e.WaitUntil)
		case "ct":
			ok = d.intTo(&e.CreateTime)
		case "mt":
			ok = d.intTo(&e.ModifyTime)
		case "ecc":
			ok = d.boolTo(&e.EscapedComputedClass)
		case "ce":
			ok = d.reflected(&e.ClassEligibility)
		case "qa":
			ok = d.reflected(&e.QueuedAllocations)
		case "fail":
			ok = d.reflected(&e.FailedTGAllocs)
		default:
			ok = d.skip()
		}
		if dst != nil {
			ok = d.strTo(&strs, dst)
		}
		if !ok {
			return false
		}
	}
	strs.set()
	return true
}
