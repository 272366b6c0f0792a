package mirror

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/vmihailenco/msgpack/v5"

	"github.com/ordoplane/ordo/events"
)

// The record value formats.
const (
	// FormatJSON encodes the value as a JSON object (the default).
	FormatJSON = "json"
	// FormatMsgpack encodes the same object as msgpack.
	FormatMsgpack = "msgpack"
)

// The record headers. ordo-* headers carry the position and type in ordo's
// own terms; ce_* headers are the CloudEvents Kafka protocol binding
// (binary content mode), so CloudEvents SDKs read the records as events.
const (
	HeaderIndex       = "ordo-index"   // the raft index, decimal
	HeaderSeq         = "ordo-seq"     // the event's position within its entry, decimal
	HeaderType        = "ordo-type"    // the event type
	HeaderVersion     = "ordo-version" // the version of the payload in the value
	HeaderContentType = "content-type" // application/json or application/msgpack
	HeaderSpecVersion = "ce_specversion"
	HeaderID          = "ce_id"       // the event's ksuid
	HeaderSource      = "ce_source"   // Settings.Source
	HeaderCEType      = "ce_type"     // "ordo." + the event type
	HeaderTime        = "ce_time"     // the leader time, RFC 3339
	HeaderSequence    = "ce_sequence" // Position.String: sorts as a string
	HeaderSubject     = "ce_subject"  // the record key
)

// recordOptions is what record needs besides the event.
type recordOptions struct {
	Topic      string
	Source     string
	Format     string
	Partitions int32
}

// record returns the Kafka record of ev: keyed by RecordKey, in the
// partition Partition chooses, with the value in o.Format (sensitive
// fields redacted) and the headers above. It is pure.
func record(ev *events.Event, o recordOptions) (*kgo.Record, error) {
	var b builder
	r := new(kgo.Record)
	if err := b.build(ev, o, r); err != nil {
		return nil, err
	}
	return r, nil
}

// builder builds records into reusable buffers: the bytes of every value,
// key and header of a chunk live in one arena, so a chunk of records costs
// a few allocations rather than dozens per record. A builder's records are
// valid until reset.
type builder struct {
	arena   []byte
	headers []kgo.RecordHeader
	payload bytes.Buffer
	enc     *json.Encoder
	// The fast path's (rawrecord.go): the event being built, the types
	// seen, the ce_source value.
	raw    rawEvent
	types  map[string]*typeInfo
	source []byte
}

// reset makes the builder's buffers reusable; records built before must
// no longer be in use.
func (b *builder) reset() {
	b.arena = b.arena[:0]
	b.headers = b.headers[:0]
}

// take returns the arena bytes from start, capped so later appends never
// write into them.
func (b *builder) take(start int) []byte {
	return b.arena[start:len(b.arena):len(b.arena)]
}

const headerCount = 12

// build fills r with ev's record.
func (b *builder) build(ev *events.Event, o recordOptions, r *kgo.Record) error {
	t, ok := events.Lookup(ev.Type)
	if !ok {
		return fmt.Errorf("mirror: event %d/%d: %w: %q", ev.Index, ev.Seq, events.ErrUnknownType, ev.Type)
	}
	payload, err := b.payloadJSON(ev, t)
	if err != nil {
		return fmt.Errorf("mirror: event %d/%d (%s): %w", ev.Index, ev.Seq, ev.Type, err)
	}
	key := RecordKey(ev)
	pos := Position{Index: ev.Index, Seq: ev.Seq}
	leaderTime := time.Unix(0, ev.Time).UTC()

	start := len(b.arena)
	b.arena = append(b.arena, key...)
	r.Key = b.take(start)

	start = len(b.arena)
	contentType := "application/json"
	if o.Format == FormatMsgpack {
		contentType = "application/msgpack"
		if b.arena, err = appendMsgpackValue(b.arena, ev, t, key, leaderTime, payload); err != nil {
			return fmt.Errorf("mirror: event %d/%d (%s): %w", ev.Index, ev.Seq, ev.Type, err)
		}
	} else {
		b.arena = appendJSONValue(b.arena, ev, t, key, leaderTime, payload)
	}
	r.Value = b.take(start)

	if cap(b.headers)-len(b.headers) < headerCount {
		// A new block; records built before keep the old one.
		b.headers = make([]kgo.RecordHeader, 0, max(256*headerCount, 2*cap(b.headers)))
	}
	h0 := len(b.headers)
	s := len(b.arena)
	b.arena = strconv.AppendUint(b.arena, ev.Index, 10)
	b.header(HeaderIndex, s)
	s = len(b.arena)
	b.arena = strconv.AppendUint(b.arena, uint64(ev.Seq), 10)
	b.header(HeaderSeq, s)
	s = len(b.arena)
	b.arena = append(b.arena, ev.Type...)
	b.header(HeaderType, s)
	s = len(b.arena)
	b.arena = strconv.AppendUint(b.arena, uint64(t.Version), 10)
	b.header(HeaderVersion, s)
	s = len(b.arena)
	b.arena = append(b.arena, contentType...)
	b.header(HeaderContentType, s)
	s = len(b.arena)
	b.arena = append(b.arena, "1.0"...)
	b.header(HeaderSpecVersion, s)
	s = len(b.arena)
	b.arena = append(b.arena, ev.ID...)
	b.header(HeaderID, s)
	s = len(b.arena)
	b.arena = append(b.arena, o.Source...)
	b.header(HeaderSource, s)
	s = len(b.arena)
	b.arena = append(append(b.arena, "ordo."...), ev.Type...)
	b.header(HeaderCEType, s)
	s = len(b.arena)
	b.arena = leaderTime.AppendFormat(b.arena, time.RFC3339Nano)
	b.header(HeaderTime, s)
	s = len(b.arena)
	b.arena = pos.appendSequence(b.arena)
	b.header(HeaderSequence, s)
	s = len(b.arena)
	b.arena = append(b.arena, key...)
	b.header(HeaderSubject, s)
	r.Headers = b.headers[h0:len(b.headers):len(b.headers)]

	r.Topic = o.Topic
	r.Partition = Partition(r.Key, o.Partitions)
	r.Timestamp = leaderTime
	return nil
}

// header adds header k whose value is the arena from start.
func (b *builder) header(k string, start int) {
	b.headers = append(b.headers, kgo.RecordHeader{Key: k, Value: b.take(start)})
}

// payloadJSON returns ev's payload at its type's current version as JSON,
// with every field t declares Sensitive replaced by events.RedactedValue.
// The result is valid until the next call.
func (b *builder) payloadJSON(ev *events.Event, t events.Type) ([]byte, error) {
	p, err := events.Decode(ev)
	if err != nil {
		return nil, err
	}
	if b.enc == nil {
		b.enc = json.NewEncoder(&b.payload)
		b.enc.SetEscapeHTML(false)
	}
	b.payload.Reset()
	if err := b.enc.Encode(p); err != nil {
		return nil, fmt.Errorf("json: %w", err)
	}
	out := bytes.TrimSuffix(b.payload.Bytes(), []byte("\n"))
	if len(t.Sensitive) == 0 {
		return out, nil
	}
	return redact(out, t.Sensitive)
}

// redact replaces the sensitive top-level fields of the JSON object doc.
// Numbers and nested values pass through as they were encoded.
func redact(doc []byte, sensitive []string) ([]byte, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(doc, &m); err != nil {
		return nil, fmt.Errorf("redact: %w", err)
	}
	redacted, _ := json.Marshal(events.RedactedValue)
	for _, f := range sensitive {
		if _, ok := m[f]; ok {
			m[f] = redacted
		}
	}
	return json.Marshal(m)
}

// appendJSONValue appends the record value: the envelope's fields, then
// the (redacted) payload.
func appendJSONValue(b []byte, ev *events.Event, t events.Type, key string, at time.Time, payload []byte) []byte {
	b = append(b, `{"Index":`...)
	b = strconv.AppendUint(b, ev.Index, 10)
	b = append(b, `,"Seq":`...)
	b = strconv.AppendUint(b, uint64(ev.Seq), 10)
	b = append(b, `,"Type":`...)
	b = appendJSONString(b, ev.Type)
	b = append(b, `,"Version":`...)
	b = strconv.AppendUint(b, uint64(t.Version), 10)
	b = append(b, `,"Topic":`...)
	b = appendJSONString(b, t.Topic)
	b = append(b, `,"ID":`...)
	b = appendJSONString(b, ev.ID)
	b = append(b, `,"Time":"`...)
	b = at.AppendFormat(b, time.RFC3339Nano)
	b = append(b, '"')
	if ev.Actor != "" {
		b = append(b, `,"Actor":`...)
		b = appendJSONString(b, ev.Actor)
	}
	if ev.CorrelationID != "" {
		b = append(b, `,"CorrelationID":`...)
		b = appendJSONString(b, ev.CorrelationID)
	}
	b = append(b, `,"Key":`...)
	b = appendJSONString(b, key)
	b = append(b, `,"Keys":[`...)
	for i, k := range ev.Keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"Kind":`...)
		b = appendJSONString(b, k.Kind)
		b = append(b, `,"Value":`...)
		b = appendJSONString(b, k.Value)
		b = append(b, '}')
	}
	b = append(b, `],"Payload":`...)
	b = append(b, payload...)
	return append(b, '}')
}

// msgpackValue is the msgpack record value: the JSON value's fields under
// the same names.
type msgpackValue struct {
	Index         uint64         `msgpack:"Index"`
	Seq           uint32         `msgpack:"Seq"`
	Type          string         `msgpack:"Type"`
	Version       uint16         `msgpack:"Version"`
	Topic         string         `msgpack:"Topic"`
	ID            string         `msgpack:"ID"`
	Time          time.Time      `msgpack:"Time"`
	Actor         string         `msgpack:"Actor,omitempty"`
	CorrelationID string         `msgpack:"CorrelationID,omitempty"`
	Key           string         `msgpack:"Key"`
	Keys          []events.Key   `msgpack:"Keys"`
	Payload       map[string]any `msgpack:"Payload"`
}

// appendMsgpackValue appends the msgpack record value. The payload is the
// redacted JSON object decoded with integers kept exact.
func appendMsgpackValue(b []byte, ev *events.Event, t events.Type, key string, at time.Time, payload []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(payload))
	dec.UseNumber()
	var p map[string]any
	if err := dec.Decode(&p); err != nil {
		return b, fmt.Errorf("msgpack payload: %w", err)
	}
	v := msgpackValue{Index: ev.Index, Seq: ev.Seq, Type: ev.Type, Version: t.Version, Topic: t.Topic, ID: ev.ID,
		Time: at, Actor: ev.Actor, CorrelationID: ev.CorrelationID, Key: key, Keys: ev.Keys, Payload: numbers(p).(map[string]any)}
	if v.Keys == nil {
		v.Keys = []events.Key{}
	}
	out, err := msgpack.Marshal(&v)
	if err != nil {
		return b, fmt.Errorf("msgpack: %w", err)
	}
	return append(b, out...), nil
}

// numbers turns the json.Numbers in v into int64, uint64 or float64.
func numbers(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = numbers(e)
		}
		return x
	case []any:
		for i, e := range x {
			x[i] = numbers(e)
		}
		return x
	case json.Number:
		if i, err := strconv.ParseInt(string(x), 10, 64); err == nil {
			return i
		}
		if u, err := strconv.ParseUint(string(x), 10, 64); err == nil {
			return u
		}
		f, _ := x.Float64()
		return f
	}
	return v
}

// recordPosition reads a mirrored record's position from its ordo-index
// and ordo-seq headers.
func recordPosition(r *kgo.Record) (Position, error) {
	var p Position
	var haveIndex, haveSeq bool
	for _, h := range r.Headers {
		switch h.Key {
		case HeaderIndex:
			v, err := strconv.ParseUint(string(h.Value), 10, 64)
			if err != nil {
				return p, fmt.Errorf("mirror: record %d of partition %d: header %s: %w", r.Offset, r.Partition, HeaderIndex, err)
			}
			p.Index, haveIndex = v, true
		case HeaderSeq:
			v, err := strconv.ParseUint(string(h.Value), 10, 32)
			if err != nil {
				return p, fmt.Errorf("mirror: record %d of partition %d: header %s: %w", r.Offset, r.Partition, HeaderSeq, err)
			}
			p.Seq, haveSeq = uint32(v), true
		}
	}
	if !haveIndex || !haveSeq {
		return p, fmt.Errorf("mirror: record %d of partition %d has no %s/%s headers: %w", r.Offset, r.Partition, HeaderIndex, HeaderSeq, ErrForeignRecord)
	}
	return p, nil
}

// header returns the value of r's header k, or "".
func header(r *kgo.Record, k string) string {
	for _, h := range r.Headers {
		if h.Key == k {
			return string(h.Value)
		}
	}
	return ""
}
