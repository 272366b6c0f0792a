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
		case "ares":
			return d.reflected(&a.AllocatedResources)
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
		case "memmax":
			return d.intFieldTo(&r.MemoryMaxMB)
		}
		return d.skip()
	})
}

var (
	_ msgpack.CustomEncoder = (*Allocation)(nil)
	_ FieldEncoder          = (*Allocation)(nil)
)

// EncodeMsgpack implements msgpack.CustomEncoder: the bytes reflection
// writes (FuzzAllocationEncoder holds it to them), with the fields taken
// in turn rather than looked up by reflection; the rarer nested fields
// are encoded by reflection.
func (a *Allocation) EncodeMsgpack(enc *msgpack.Encoder) error {
	w := WriterTo(enc)
	a.EncodeFields(&w)
	return w.Err()
}

// EncodeFields implements FieldEncoder.
func (a *Allocation) EncodeFields(w *FieldWriter) {
	dtSet := a.DesiredTransition != (DesiredTransition{})
	// id, ns, eval, n, node, job, tg, res, ds, cs: never omitted
	n := 10 + CountSet(a.NodeName != "", a.JobVersion != 0, a.DesiredDescription != "", dtSet,
		a.ClientDescription != "", len(a.TaskStates) > 0, a.DeploymentID != "", a.DeploymentStatus != nil,
		a.PreviousAllocation != "", a.NextAllocation != "", len(a.RescheduleEvents) > 0, a.FollowupEvalID != "",
		a.Metrics != nil, a.SigningKeyID != "", a.AllocatedResources != nil, a.CreateTime != 0, a.ModifyTime != 0)
	w.Map(n)
	w.Str("id", a.ID, true)
	w.Str("ns", a.Namespace, true)
	w.Str("eval", a.EvalID, true)
	w.Str("n", a.Name, true)
	w.Str("node", a.NodeID, true)
	w.Str("nn", a.NodeName, a.NodeName != "")
	w.Str("job", a.JobID, true)
	w.Uint("jv", a.JobVersion, a.JobVersion != 0)
	w.Str("tg", a.TaskGroup, true)
	w.Key("res")
	a.Resources.encode(w)
	w.Str("ds", a.DesiredStatus, true)
	w.Str("dd", a.DesiredDescription, a.DesiredDescription != "")
	w.Value("dt", &a.DesiredTransition, dtSet)
	w.Str("cs", a.ClientStatus, true)
	w.Str("cd", a.ClientDescription, a.ClientDescription != "")
	w.Value("ts", a.TaskStates, len(a.TaskStates) > 0)
	w.Str("dep", a.DeploymentID, a.DeploymentID != "")
	w.Value("depst", a.DeploymentStatus, a.DeploymentStatus != nil)
	w.Str("prev", a.PreviousAllocation, a.PreviousAllocation != "")
	w.Str("next", a.NextAllocation, a.NextAllocation != "")
	w.Value("resch", a.RescheduleEvents, len(a.RescheduleEvents) > 0)
	w.Str("fe", a.FollowupEvalID, a.FollowupEvalID != "")
	w.Value("met", a.Metrics, a.Metrics != nil)
	w.Str("skid", a.SigningKeyID, a.SigningKeyID != "")
	w.Value("ares", a.AllocatedResources, a.AllocatedResources != nil)
	w.Int64("ct", a.CreateTime, a.CreateTime != 0)
	w.Int64("mt", a.ModifyTime, a.ModifyTime != 0)
}

// encode writes r, the value of the field w just named, as reflection
// does.
func (r *Resources) encode(w *FieldWriter) {
	w.Map(2 + CountSet(r.DiskMB != 0, r.MemoryMaxMB != 0)) // cpu, mem: never omitted
	w.Int("cpu", int64(r.CPU), true)
	w.Int("mem", int64(r.MemoryMB), true)
	w.Int("disk", int64(r.DiskMB), r.DiskMB != 0)
	w.Int("memmax", int64(r.MemoryMaxMB), r.MemoryMaxMB != 0)
}
