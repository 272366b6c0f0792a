package events

import "bytes"

// decodeEventFast decodes data, an event as EncodeEvent writes it, into ev
// straight from the bytes: no msgpack decoder, one allocation for all of
// its strings but the payload type's and the keys' kinds, which are
// interned, and one for the payload (cut out whole, as a replay's reader
// does). A replay decodes every event of the archive, so this is most of
// a rebuild's reading. It returns false, leaving ev to be decoded the
// general way, for anything but the plain forms EncodeEvent writes (say a
// map key that is not a string, a value of an unexpected type, data cut
// short): decoded by both, an event is the same
// (FuzzEventDecoderMatchesReflection).
func decodeEventFast(data []byte, ev *Event) bool {
	d := fastReader{b: data}
	n, ok := d.mapLen()
	if !ok {
		return false
	}
	*ev = Event{}
	strs := stringSpans{src: data}
	for range n {
		key, ok := d.str()
		if !ok {
			return false
		}
		switch string(key) {
		case "ty":
			b, ok := d.str()
			if !ok {
				return false
			}
			if t, known := types[string(b)]; known {
				strs.intern(&ev.Type, t.Name)
			} else {
				strs.add(&ev.Type, b)
			}
		case "v":
			v, ok := d.uint()
			if !ok {
				return false
			}
			ev.Version = uint16(v)
		case "i":
			if ev.Index, ok = d.uint(); !ok {
				return false
			}
		case "s":
			v, ok := d.uint()
			if !ok {
				return false
			}
			ev.Seq = uint32(v)
		case "t":
			v, ok := d.uint() // an int64 decodes as the same bits
			if !ok {
				return false
			}
			ev.Time = int64(v)
		case "id":
			if !d.strTo(&strs, &ev.ID) {
				return false
			}
		case "a":
			if !d.strTo(&strs, &ev.Actor) {
				return false
			}
		case "c":
			if !d.strTo(&strs, &ev.CorrelationID) {
				return false
			}
		case "k":
			if ev.Keys, ok = d.keys(&strs); !ok {
				return false
			}
		case "p":
			if d.nil() {
				ev.Payload = nil
				continue
			}
			end, err := valueEnd(d.b, d.i)
			if err != nil {
				return false
			}
			ev.Payload = bytes.Clone(d.b[d.i:end])
			d.i = end
		default:
			if !d.skip() {
				return false
			}
		}
	}
	strs.set()
	return true
}

// keys reads an event's keys as decodeKeys does (nil for a nil, empty
// for an empty array).
func (d *fastReader) keys(strs *stringSpans) ([]Key, bool) {
	if d.nil() {
		return nil, true
	}
	n, ok := d.arrayLen()
	if !ok || n > len(d.b)-d.i {
		return nil, false
	}
	keys := make([]Key, n)
	for i := range keys {
		k := &keys[i]
		ok := d.fields(func(f []byte) bool {
			switch string(f) {
			case "k":
				b, ok := d.str()
				if !ok {
					return false
				}
				if kind, known := internedKinds[string(b)]; known {
					strs.intern(&k.Kind, kind)
				} else {
					strs.add(&k.Kind, b)
				}
				return true
			case "v":
				return d.strTo(strs, &k.Value)
			}
			return d.skip()
		})
		if !ok {
			return nil, false
		}
	}
	return keys, true
}

// internedKinds are the entity kinds events name, each its own string, so
// that a decoded key's kind allocates nothing. A kind missing here is
// decoded all the same.
var internedKinds = func() map[string]string {
	m := map[string]string{}
	for _, k := range []string{KindACLPolicy, KindACLToken, KindACLRole, KindAlloc, KindComponent, KindVolume, KindPlugin,
		KindDeployment, KindNamespace, KindServer, KindEval, KindJob, KindRootKey, KindProvider, KindNodeRequest,
		KindInstance, KindTenant, KindNode, KindVariable} {
		m[k] = k
	}
	return m
}()
