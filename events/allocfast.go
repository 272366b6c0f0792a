package events

import (
	"github.com/vmihailenco/msgpack/v5"
)

var _ msgpack.CustomDecoder = (*Allocation)(nil)

// plainAllocation is Allocation without its decoder: msgpack decodes it
// by reflection.
type plainAllocation Allocation

// DecodeMsgpack implements msgpack.CustomDecoder. Allocations are what
// ordo decodes most (every placement's payload, every read of the
// allocations projection), so one read from bytes (decodeFrom) is decoded
// straight from them, its strings in one allocation (decodeFast); anything
// else, or any form decodeFast does not take, is decoded by reflection,
// as before. Both decode an allocation the same (FuzzAllocationDecoder).
func (a *Allocation) DecodeMsgpack(dec *msgpack.Decoder) error {
	if r, ok := dec.Buffered().(*sliceReader); ok {
		d := fastReader{b: r.b, i: r.i}
		if a.decodeFast(&d) {
			r.i = d.i
			return nil
		}
	}
	return dec.Decode((*plainAllocation)(a))
}

// decodeFast decodes the allocation at d into a, as reflection does (a's
// fields absent from the input are left as they are), and reports whether
// it could; a may be partly written when it could not.
func (a *Allocation) decodeFast(d *fastReader) bool {
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
		switch string(key) {
		case "id":
			dst = &a.ID
		case "ns":
			dst = &a.Namespace
		case "eval":
			dst = &a.EvalID
		case "n":
			dst = &a.Name
		case "node":
			dst = &a.NodeID
		case "nn":
			dst = &a.NodeName
		case "job":
			dst = &a.JobID
		case "tg":
			dst = &a.TaskGroup
		case "ds":
			dst = &a.DesiredStatus
		case "dd":
			dst = &a.DesiredDescription
		case "cs":
			dst = &a.ClientStatus
		case "cd":
			dst = &a.ClientDescription
		case "dep":
			dst = &a.DeploymentID
		case "prev":
			dst = &a.PreviousAllocation
		case "next":
			dst = &a.NextAllocation
		case "fe":
			dst = &a.FollowupEvalID
		case "skid":
			dst = &a.SigningKeyID
		case "jv":
			ok = d.uintTo(&a.JobVersion)
		case "ct":
			ok = d.intTo(&a.CreateTime)
		case "mt":
			ok = d.intTo(&a.ModifyTime)
		case "res":
			ok = a.Resources.decodeFast(d)
		case "dt":
			ok = d.reflected(&a.DesiredTransition)
		case "ts":
			ok = d.reflected(&a.TaskStates)
		case "depst":
			ok = d.reflected(&a.DeploymentStatus)
		case "resch":
			ok = d.reflected(&a.RescheduleEvents)
		case "met":
			ok = d.reflected(&a.Metrics)
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

// decodeFast decodes the resources at d into r, as reflection does.
func (r *Resources) decodeFast(d *fastReader) bool {
	if d.nil() {
		*r = Resources{}
		return true
	}
	n, ok := d.mapLen()
	if !ok {
		return false
	}
	for range n {
		key, ok := d.str()
		if !ok {
			return false
		}
		var v int64
		switch string(key) {
		case "cpu":
			ok = d.intTo(&v)
			r.CPU = int(v)
		case "mem":
			ok = d.intTo(&v)
			r.MemoryMB = int(v)
		case "disk":
			ok = d.intTo(&v)
			r.DiskMB = int(v)
		default:
			ok = d.skip()
		}
		if !ok {
			return false
		}
	}
	return true
}

// uintTo reads an unsigned integer into dst (see uint).
func (d *fastReader) uintTo(dst *uint64) bool {
	v, ok := d.uint()
	if ok {
		*dst = v
	}
	return ok
}

// intTo reads an integer into dst: the same bits as uint reads.
func (d *fastReader) intTo(dst *int64) bool {
	v, ok := d.uint()
	if ok {
		*dst = int64(v)
	}
	return ok
}

// reflected decodes the value at d into v (a pointer to a field) by
// reflection.
func (d *fastReader) reflected(v any) bool {
	end, err := valueEnd(d.b, d.i)
	if err != nil || decodeFrom(d.b[d.i:end], v, false, true) != nil {
		return false
	}
	d.i = end
	return true
}
