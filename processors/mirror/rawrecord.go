package mirror

import (
	"reflect"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/ordoplane/ordo/events"
)

// The record fast path: buildRaw writes a record straight from the
// archived event's bytes, the payload's JSON transcoded from its msgpack
// (transcode.go), with no event or payload decoded into Go values and
// nothing computed twice: each header value is a part of the value or
// the key where it can be, or shared by every record of the event's type.
// It makes the bytes build makes from the decoded event
// (TestRawRecordMatchesRecord); whatever it does not handle — the msgpack
// format, a type with sensitive fields, a payload to upcast or without a
// plan, a form the encoder does not write — it leaves to build.

// typeInfo is what every record of an event type shares.
type typeInfo struct {
	version uint16
	// plan writes the payload's JSON; nil if records of the type are
	// built the general way (sensitive fields, or a type without one).
	plan *planNode
	// name, versionText and ceType are header values (ordo-type,
	// ordo-version, ce_type).
	name, versionText, ceType []byte
	// meta is the value's `,"Type":…,"Version":…,"Topic":…`.
	meta []byte
}

// typeInfos caches a *typeInfo per event type name, for every builder.
var typeInfos sync.Map

// newTypeInfo computes t's typeInfo.
func newTypeInfo(t events.Type) *typeInfo {
	info := &typeInfo{
		version:     t.Version,
		name:        []byte(t.Name),
		versionText: strconv.AppendUint(nil, uint64(t.Version), 10),
		ceType:      []byte("ordo." + t.Name),
	}
	meta := append(appendJSONString([]byte(`,"Type":`), t.Name), `,"Version":`...)
	meta = strconv.AppendUint(meta, uint64(t.Version), 10)
	info.meta = appendJSONString(append(meta, `,"Topic":`...), t.Topic)
	if len(t.Sensitive) == 0 && t.New != nil {
		if pt := reflect.TypeOf(t.New()); pt != nil && pt.Kind() == reflect.Pointer && pt.Elem().Kind() == reflect.Struct {
			info.plan = compilePlan(pt.Elem())
		}
	}
	info.name, info.versionText, info.ceType = slices.Clip(info.name), slices.Clip(info.versionText), slices.Clip(info.ceType)
	return info
}

// typeInfo returns the typeInfo of the event type named name, nil for a
// type not registered.
func (b *builder) typeInfo(name []byte) *typeInfo {
	if info, ok := b.types[string(name)]; ok {
		return info
	}
	var info *typeInfo
	if t, ok := events.Lookup(string(name)); ok {
		v, _ := typeInfos.LoadOrStore(t.Name, newTypeInfo(t))
		info = v.(*typeInfo)
	}
	if b.types == nil {
		b.types = map[string]*typeInfo{}
	}
	b.types[string(name)] = info
	return info
}

// Header values every record of a mirror shares.
var (
	contentTypeJSON = []byte("application/json")
	specVersion     = []byte("1.0")
)

// rawKey is an event key as bytes of the archived event.
type rawKey struct{ kind, value []byte }

// rawEvent is an archived event's envelope as bytes of it.
type rawEvent struct {
	typ, id, actor, correlation []byte
	version                     uint16
	index                       uint64
	seq                         uint32
	time                        int64
	keys                        []rawKey
	payload                     []byte // the payload's msgpack value; nil if absent or nil
}

// read reads data, an event as events.EncodeEvent writes it, as
// events.DecodeEvent does (reusing keys' storage); false for anything
// but the plain forms (a field twice, a value of an unexpected type).
func (e *rawEvent) read(data []byte, keys []rawKey) bool {
	d := mpReader{b: data}
	n, ok := d.mapLen()
	if !ok {
		return false
	}
	*e = rawEvent{keys: keys[:0]}
	var seen uint16
	for range n {
		k, isNil, ok := d.str()
		if !ok || isNil {
			return false
		}
		var bit uint16
		var v uint64
		switch string(k) {
		case "ty":
			bit = 1 << 0
			e.typ, _, ok = d.str()
		case "v":
			bit = 1 << 1
			v, ok = d.uint()
			e.version = uint16(v)
		case "i":
			bit = 1 << 2
			e.index, ok = d.uint()
		case "s":
			bit = 1 << 3
			v, ok = d.uint()
			e.seq = uint32(v)
		case "t":
			bit = 1 << 4
			v, ok = d.uint() // an int64 decodes as the same bits
			e.time = int64(v)
		case "id":
			bit = 1 << 5
			e.id, _, ok = d.str()
		case "a":
			bit = 1 << 6
			e.actor, _, ok = d.str()
		case "c":
			bit = 1 << 7
			e.correlation, _, ok = d.str()
		case "k":
			bit = 1 << 8
			ok = e.readKeys(&d)
		case "p":
			bit = 1 << 9
			if !d.nil() {
				start := d.i
				ok = d.skip()
				e.payload = data[start:d.i:d.i]
			}
		default:
			ok = d.skip()
		}
		if !ok || seen&bit != 0 {
			return false
		}
		seen |= bit
	}
	return true
}

// readKeys reads the event's keys: an array of maps of k and v, or nil.
func (e *rawEvent) readKeys(d *mpReader) bool {
	if d.nil() {
		return true
	}
	n, ok := d.arrayLen()
	if !ok {
		return false
	}
	for range n {
		fields, ok := d.mapLen()
		if !ok {
			return false
		}
		var k rawKey
		var seen uint8
		for range fields {
			name, isNil, ok := d.str()
			if !ok || isNil {
				return false
			}
			switch string(name) {
			case "k":
				k.kind, _, ok = d.str()
				ok = ok && seen&1 == 0
				seen |= 1
			case "v":
				k.value, _, ok = d.str()
				ok = ok && seen&2 == 0
				seen |= 2
			default:
				ok = d.skip()
			}
			if !ok {
				return false
			}
		}
		e.keys = append(e.keys, k)
	}
	return true
}

// buildRaw builds into r the record of data, an archived event as
// events.EncodeEvent wrote it, without decoding it, and returns the
// event's leader time. ok false (see the comment at the top of the file)
// leaves r and the builder's records as they were, for build.
func (b *builder) buildRaw(data []byte, o recordOptions, r *kgo.Record) (leaderTime int64, ok bool) {
	if o.Format != FormatJSON {
		return 0, false
	}
	e := &b.raw
	if !e.read(data, e.keys) {
		return 0, false
	}
	info := b.typeInfo(e.typ)
	if info == nil || info.plan == nil || e.version != info.version || e.payload == nil {
		return 0, false
	}
	at := time.Unix(0, e.time).UTC()

	start := len(b.arena)
	b.arena = appendRecordKey(b.arena, e.typ, e.keys)
	keyEnd := len(b.arena)
	b.arena = append(b.arena, `{"Index":`...)
	indexAt := len(b.arena)
	b.arena = strconv.AppendUint(b.arena, e.index, 10)
	indexEnd := len(b.arena)
	b.arena = append(b.arena, `,"Seq":`...)
	seqAt := len(b.arena)
	b.arena = strconv.AppendUint(b.arena, uint64(e.seq), 10)
	seqEnd := len(b.arena)
	b.arena = append(append(b.arena, info.meta...), `,"ID":`...)
	idAt := len(b.arena)
	b.arena = appendJSONString(b.arena, e.id)
	idEnd := len(b.arena)
	b.arena = append(b.arena, `,"Time":"`...)
	timeAt := len(b.arena)
	b.arena = at.AppendFormat(b.arena, time.RFC3339Nano)
	timeEnd := len(b.arena)
	b.arena = append(b.arena, '"')
	if len(e.actor) > 0 {
		b.arena = appendJSONString(append(b.arena, `,"Actor":`...), e.actor)
	}
	if len(e.correlation) > 0 {
		b.arena = appendJSONString(append(b.arena, `,"CorrelationID":`...), e.correlation)
	}
	b.arena = appendJSONString(append(b.arena, `,"Key":`...), b.arena[start:keyEnd])
	b.arena = append(b.arena, `,"Keys":[`...)
	for i, k := range e.keys {
		if i > 0 {
			b.arena = append(b.arena, ',')
		}
		b.arena = appendJSONString(append(b.arena, `{"Kind":`...), k.kind)
		b.arena = append(appendJSONString(append(b.arena, `,"Value":`...), k.value), '}')
	}
	b.arena = append(b.arena, `],"Payload":`...)
	d := mpReader{b: e.payload}
	if b.arena, _, ok = appendTranscoded(b.arena, &d, info.plan, 0); !ok {
		b.arena = b.arena[:start]
		return 0, false
	}
	b.arena = append(b.arena, '}')
	a := b.arena // the key and the value are complete: headers may alias them
	r.Key = a[start:keyEnd:keyEnd]
	r.Value = a[keyEnd:len(a):len(a)]

	id := a[idAt+1 : idEnd-1 : idEnd-1]
	if len(id) != len(e.id) { // escaped in the value
		s := len(b.arena)
		b.arena = append(b.arena, e.id...)
		id = b.take(s)
	}
	s := len(b.arena)
	b.arena = Position{Index: e.index, Seq: e.seq}.appendSequence(b.arena)
	sequence := b.take(s)

	if cap(b.headers)-len(b.headers) < headerCount {
		// A new block; records built before keep the old one.
		b.headers = make([]kgo.RecordHeader, 0, max(256*headerCount, 2*cap(b.headers)))
	}
	h0 := len(b.headers)
	b.headers = append(b.headers,
		kgo.RecordHeader{Key: HeaderIndex, Value: a[indexAt:indexEnd:indexEnd]},
		kgo.RecordHeader{Key: HeaderSeq, Value: a[seqAt:seqEnd:seqEnd]},
		kgo.RecordHeader{Key: HeaderType, Value: info.name},
		kgo.RecordHeader{Key: HeaderVersion, Value: info.versionText},
		kgo.RecordHeader{Key: HeaderContentType, Value: contentTypeJSON[:len(contentTypeJSON):len(contentTypeJSON)]},
		kgo.RecordHeader{Key: HeaderSpecVersion, Value: specVersion[:len(specVersion):len(specVersion)]},
		kgo.RecordHeader{Key: HeaderID, Value: id},
		kgo.RecordHeader{Key: HeaderSource, Value: b.sourceBytes(o.Source)},
		kgo.RecordHeader{Key: HeaderCEType, Value: info.ceType},
		kgo.RecordHeader{Key: HeaderTime, Value: a[timeAt:timeEnd:timeEnd]},
		kgo.RecordHeader{Key: HeaderSequence, Value: sequence},
		kgo.RecordHeader{Key: HeaderSubject, Value: r.Key},
	)
	r.Headers = b.headers[h0:len(b.headers):len(b.headers)]
	r.Topic = o.Topic
	r.Partition = Partition(r.Key, o.Partitions)
	r.Timestamp = at
	return e.time, true
}

// sourceBytes returns source as bytes shared by the builder's records.
func (b *builder) sourceBytes(source string) []byte {
	if b.source == nil || string(b.source) != source {
		b.source = slices.Clip([]byte(source))
	}
	return b.source
}

// kindRankBytes is kindRank as bytes.
var kindRankBytes = func() [][]byte {
	out := make([][]byte, len(kindRank))
	for i, k := range kindRank {
		out[i] = []byte(k)
	}
	return out
}()

// appendRecordKey appends RecordKey's key of an event of type typ with
// keys (the same rule, on bytes; TestRawRecordKey holds them together).
func appendRecordKey(dst, typ []byte, keys []rawKey) []byte {
	if len(keys) == 0 {
		return append(append(dst, "type/"...), typ...)
	}
	for _, kind := range kindRankBytes {
		if v, ok := singleRaw(keys, kind); ok {
			return appendKeyOf(dst, keys, kind, v)
		}
	}
	for _, k := range keys {
		if v, ok := singleRaw(keys, k.kind); ok {
			return appendKeyOf(dst, keys, k.kind, v)
		}
	}
	return appendKeyOf(dst, keys, keys[0].kind, keys[0].value)
}

// singleRaw is single on bytes.
func singleRaw(keys []rawKey, kind []byte) ([]byte, bool) {
	var v []byte
	found := false
	for _, k := range keys {
		if string(k.kind) != string(kind) {
			continue
		}
		if found && string(k.value) != string(v) {
			return nil, false
		}
		v, found = k.value, true
	}
	return v, found
}

// appendKeyOf is keyOf on bytes.
func appendKeyOf(dst []byte, keys []rawKey, kind, v []byte) []byte {
	dst = append(append(dst, kind...), '/')
	if string(kind) == events.KindJob {
		for _, k := range keys {
			if string(k.kind) == events.KindNamespace {
				dst = append(dst, k.value...)
				break
			}
		}
		dst = append(dst, '/')
	}
	return append(dst, v...)
}
