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
	if r := bytesOf(dec); r != nil {
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
	strs := &stringSpans{src: d.b}
	ok := d.fields(func(key []byte) bool {
		if dst := a.stringField(key); dst != nil {
			return d.strTo(strs, dst)
		}
		switch string(key) {
		case "jv":
			return d.uintTo(&a.JobVersion)
		case "ct":
			return d.intTo(&a.CreateTime)
		case "mt":
			return d.intTo(&a.ModifyTime)
		case "res":
			return a.Resources.decodeFast(d)
		case "dt":
			return d.reflected(&a.DesiredTransition)
		case "ts":
			return d.reflected(&a.TaskStates)
		case "depst":
			return d.reflected(&a.DeploymentStatus)
		case "resch":
			return d.reflected(&a.RescheduleEvents)
		case "met":
			return d.reflected(&a.Metrics)
		}
		return d.skip()
	})
	if ok {
		strs.set()
	}
	return ok
}

// stringField returns a's string field encoded under key, nil for none.
func (a *Allocation) stringField(key []byte) *string {
	switch string(key) {
	case "id":
		return &a.ID
	case "ns":
		return &a.Namespace
	case "eval":
		return &a.EvalID
	case "n":
		return &a.Name
	case "node":
		return &a.NodeID
	case "nn":
		return &a.NodeName
	case "job":
		return &a.JobID
	case "tg":
		return &a.TaskGroup
	case "ds":
		return &a.DesiredStatus
	case "dd":
		return &a.DesiredDescription
	case "cs":
		return &a.ClientStatus
	case "cd":
		return &a.ClientDescription
	case "dep":
		return &a.DeploymentID
	case "prev":
		return &a.PreviousAllocation
	case "next":
		return &a.NextAllocation
	case "fe":
		return &a.FollowupEvalID
	case "skid":
		return &a.SigningKeyID
	}
	return nil
}

// decodeFast decodes the resources at d into r, as reflection does.
func (r *Resources) decodeFast(d *fastReader) bool {
	if d.nil() {
		*r = Resources{}
		return true
	}
	return d.fields(func(key []byte) bool {
		switch string(key) {
		case "cpu":
			return d.intFieldTo(&r.CPU)
		case "mem":
			return d.intFieldTo(&r.MemoryMB)
		case "disk":
			return d.intFieldTo(&r.DiskMB)
		}
		return d.skip()
	})
}

var _ msgpack.CustomEncoder = (*Allocation)(nil)

// EncodeMsgpack implements msgpack.CustomEncoder: the bytes reflection
// writes (FuzzAllocationEncoder holds it to them), with the fields taken
// in turn rather than looked up by reflection; the rarer nested fields
// are encoded by reflection.
func (a *Allocation) EncodeMsgpack(enc *msgpack.Encoder) error {
	dtSet := a.DesiredTransition != (DesiredTransition{})
	// id, ns, eval, n, node, job, tg, res, ds, cs: never omitted
	n := 10 + countSet(a.NodeName != "", a.JobVersion != 0, a.DesiredDescription != "", dtSet,
		a.ClientDescription != "", len(a.TaskStates) > 0, a.DeploymentID != "", a.DeploymentStatus != nil,
		a.PreviousAllocation != "", a.NextAllocation != "", len(a.RescheduleEvents) > 0, a.FollowupEvalID != "",
		a.Metrics != nil, a.SigningKeyID != "", a.CreateTime != 0, a.ModifyTime != 0)
	w := fieldWriter{enc: enc}
	w.err = enc.EncodeMapLen(n)
	w.str("id", a.ID, true)
	w.str("ns", a.Namespace, true)
	w.str("eval", a.EvalID, true)
	w.str("n", a.Name, true)
	w.str("node", a.NodeID, true)
	w.str("nn", a.NodeName, a.NodeName != "")
	w.str("job", a.JobID, true)
	w.uint("jv", a.JobVersion)
	w.str("tg", a.TaskGroup, true)
	w.key("res")
	a.Resources.encode(&w)
	w.str("ds", a.DesiredStatus, true)
	w.str("dd", a.DesiredDescription, a.DesiredDescription != "")
	w.value("dt", &a.DesiredTransition, dtSet)
	w.str("cs", a.ClientStatus, true)
	w.str("cd", a.ClientDescription, a.ClientDescription != "")
	w.value("ts", a.TaskStates, len(a.TaskStates) > 0)
	w.str("dep", a.DeploymentID, a.DeploymentID != "")
	w.value("depst", a.DeploymentStatus, a.DeploymentStatus != nil)
	w.str("prev", a.PreviousAllocation, a.PreviousAllocation != "")
	w.str("next", a.NextAllocation, a.NextAllocation != "")
	w.value("resch", a.RescheduleEvents, len(a.RescheduleEvents) > 0)
	w.str("fe", a.FollowupEvalID, a.FollowupEvalID != "")
	w.value("met", a.Metrics, a.Metrics != nil)
	w.str("skid", a.SigningKeyID, a.SigningKeyID != "")
	w.int64("ct", a.CreateTime)
	w.int64("mt", a.ModifyTime)
	return w.err
}

// encode writes r as reflection does.
func (r *Resources) encode(w *fieldWriter) {
	fields := 2 // cpu, mem: never omitted
	if r.DiskMB != 0 {
		fields++
	}
	w.do(w.enc.EncodeMapLen(fields))
	w.key("cpu")
	w.do(w.enc.EncodeInt(int64(r.CPU)))
	w.key("mem")
	w.do(w.enc.EncodeInt(int64(r.MemoryMB)))
	if r.DiskMB != 0 {
		w.key("disk")
		w.do(w.enc.EncodeInt(int64(r.DiskMB)))
	}
}

// countSet returns how many of fields are set: the size of the map of a
// struct's fields not left out.
func countSet(fields ...bool) int {
	n := 0
	for _, set := range fields {
		if set {
			n++
		}
	}
	return n
}

// fieldWriter writes a struct's fields as a msgpack map's entries,
// keeping the first error.
type fieldWriter struct {
	enc *msgpack.Encoder
	err error
}

func (w *fieldWriter) do(err error) {
	if w.err == nil {
		w.err = err
	}
}

func (w *fieldWriter) key(k string) { w.do(w.enc.EncodeString(k)) }

// str writes the string field k when set says it is not omitted.
func (w *fieldWriter) str(k, v string, set bool) {
	if set {
		w.key(k)
		w.do(w.enc.EncodeString(v))
	}
}

// uint writes the uint64 field k unless it is zero (omitted).
func (w *fieldWriter) uint(k string, v uint64) {
	if v != 0 {
		w.key(k)
		w.do(w.enc.EncodeUint64(v))
	}
}

// int64 writes the int64 field k unless it is zero (omitted).
func (w *fieldWriter) int64(k string, v int64) {
	if v != 0 {
		w.key(k)
		w.do(w.enc.EncodeInt64(v))
	}
}

// value writes the field k by reflection when set says it is not omitted.
func (w *fieldWriter) value(k string, v any, set bool) {
	if set {
		w.key(k)
		w.do(w.enc.Encode(v))
	}
}
