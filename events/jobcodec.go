package events

import "github.com/vmihailenco/msgpack/v5"

// A job decodes straight from bytes too (see Allocation.DecodeMsgpack):
// every registration's payload and every read of a job's row decode one.
// Its scalars, its groups and their tasks are read in turn, their strings
// in one allocation; the nested blocks a job mostly leaves out
// (constraints, policies, meta) are decoded by reflection, and any form
// decodeFast does not take goes to reflection whole. FuzzJobDecoder holds
// the two to the same result.

var (
	_ msgpack.CustomDecoder = (*Job)(nil)
	_ msgpack.CustomDecoder = (*JobRegistered)(nil)
)

type (
	plainJob           Job
	plainJobRegistered JobRegistered
)

// DecodeMsgpack implements msgpack.CustomDecoder.
func (j *Job) DecodeMsgpack(dec *msgpack.Decoder) error {
	if r := bytesOf(dec); r != nil {
		d := fastReader{b: r.b, i: r.i}
		if j.decodeFast(&d) {
			r.i = d.i
			return nil
		}
	}
	return dec.Decode((*plainJob)(j))
}

// DecodeMsgpack implements msgpack.CustomDecoder.
func (p *JobRegistered) DecodeMsgpack(dec *msgpack.Decoder) error {
	if r := bytesOf(dec); r != nil {
		d := fastReader{b: r.b, i: r.i}
		if p.decodeFast(&d) {
			r.i = d.i
			return nil
		}
	}
	return dec.Decode((*plainJobRegistered)(p))
}

func (p *JobRegistered) decodeFast(d *fastReader) bool {
	return d.fields(func(key []byte) bool {
		if string(key) == "job" {
			return p.Job.decodeFast(d)
		}
		return d.skip()
	})
}

// decodeFast decodes the job at d into j, as reflection does (j's fields
// absent from the input are left as they are), and reports whether it
// could; j may be partly written when it could not.
func (j *Job) decodeFast(d *fastReader) bool {
	if d.nil() {
		*j = Job{} // reflection zeroes a struct decoded from nil
		return true
	}
	strs := &stringSpans{src: d.b}
	groups := false
	ok := d.fields(func(key []byte) bool {
		switch string(key) {
		case "id":
			return d.strTo(strs, &j.ID)
		case "n":
			return d.strTo(strs, &j.Name)
		case "ns":
			return d.strTo(strs, &j.Namespace)
		case "ty":
			return d.strTo(strs, &j.Type)
		case "pool":
			return d.strTo(strs, &j.NodePool)
		case "pid":
			return d.strTo(strs, &j.ParentID)
		case "pri":
			return d.intFieldTo(&j.Priority)
		case "ver":
			return d.uintTo(&j.Version)
		case "sub":
			return d.intTo(&j.SubmitTime)
		case "stop":
			return d.boolTo(&j.Stop)
		case "stable":
			return d.boolTo(&j.Stable)
		case "disp":
			return d.boolTo(&j.Dispatched)
		case "dcs":
			return d.strings(strs, &j.Datacenters)
		case "tgs":
			// A second copy of the groups could move those decoded so far
			// (strings not yet set) to a new array: left to reflection.
			if groups {
				return false
			}
			groups = true
			return decodeSlice(d, &j.TaskGroups, func(tg *TaskGroup, d *fastReader) bool { return tg.decodeFast(d, strs) })
		case "con":
			return d.reflected(&j.Constraints)
		case "meta":
			return d.reflected(&j.Meta)
		case "per":
			return d.reflected(&j.Periodic)
		case "param":
			return d.reflected(&j.ParameterizedJob)
		case "up":
			return d.reflected(&j.Update)
		case "pay":
			return d.reflected(&j.Payload)
		}
		return d.skip()
	})
	if ok {
		strs.set()
	}
	return ok
}

// decodeFast decodes the task group at d into tg, as reflection does.
func (tg *TaskGroup) decodeFast(d *fastReader, strs *stringSpans) bool {
	if d.nil() {
		*tg = TaskGroup{}
		return true
	}
	tasks := false
	return d.fields(func(key []byte) bool {
		switch string(key) {
		case "n":
			return d.strTo(strs, &tg.Name)
		case "c":
			return d.intFieldTo(&tg.Count)
		case "mcd":
			return d.intTo((*int64)(&tg.MaxClientDisconnect))
		case "t":
			if tasks { // as the job's groups
				return false
			}
			tasks = true
			return decodeSlice(d, &tg.Tasks, func(t *Task, d *fastReader) bool { return t.decodeFast(d, strs) })
		case "con":
			return d.reflected(&tg.Constraints)
		case "rp":
			return d.reflected(&tg.RestartPolicy)
		case "rs":
			return d.reflected(&tg.ReschedulePolicy)
		case "dis":
			return d.reflected(&tg.Disconnect)
		case "up":
			return d.reflected(&tg.Update)
		case "meta":
			return d.reflected(&tg.Meta)
		case "mig":
			return d.reflected(&tg.Migrate)
		case "vols":
			return d.reflected(&tg.Volumes)
		case "sc":
			return d.reflected(&tg.Scaling)
		case "nets":
			return d.reflected(&tg.Networks)
		case "svcs":
			return d.reflected(&tg.Services)
		}
		return d.skip()
	})
}

// decodeFast decodes the task at d into t, as reflection does.
func (t *Task) decodeFast(d *fastReader, strs *stringSpans) bool {
	if d.nil() {
		*t = Task{}
		return true
	}
	return d.fields(func(key []byte) bool {
		switch string(key) {
		case "n":
			return d.strTo(strs, &t.Name)
		case "d":
			return d.strTo(strs, &t.Driver)
		case "ks":
			return d.strTo(strs, &t.KillSignal)
		case "sd":
			return d.intTo((*int64)(&t.ShutdownDelay))
		case "kt":
			return d.intTo((*int64)(&t.KillTimeout))
		case "res":
			if d.nil() {
				t.Resources = nil
				return true
			}
			if t.Resources == nil {
				t.Resources = new(Resources)
			}
			return t.Resources.decodeFast(d)
		case "cfg":
			return d.reflected(&t.Config)
		case "env":
			return d.reflected(&t.Env)
		case "meta":
			return d.reflected(&t.Meta)
		case "vm":
			return d.reflected(&t.VolumeMounts)
		case "csi":
			return d.reflected(&t.CSIPluginConfig)
		case "svcs":
			return d.reflected(&t.Services)
		case "tmpls":
			return d.reflected(&t.Templates)
		}
		return d.skip()
	})
}

// strings decodes an array of strings into *s as reflection does: a nil
// leaves *s as it is; the elements go into *s's own array when it has
// room.
func (d *fastReader) strings(strs *stringSpans, s *[]string) bool {
	if d.nil() {
		return true
	}
	n, ok := d.arrayLen()
	if !ok || n > len(d.b)-d.i {
		return false
	}
	var v []string
	switch {
	case *s == nil:
		v = make([]string, n)
	case cap(*s) >= n:
		v = (*s)[:n]
	default:
		v = make([]string, n)
	}
	for i := range v {
		if !d.strTo(strs, &v[i]) {
			return false
		}
	}
	*s = v
	return true
}
