package mirror

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/events/eventstest"
)

// rawCase is an archived event: its bytes and the event they decode to.
type rawCase struct {
	name string
	data []byte
	ev   *events.Event
}

// archived stamps p into an entry of its own and returns the event as
// the archive holds it, or false if p does not encode.
func archived(tb testing.TB, name string, index uint64, actor string, p events.Payload) (rawCase, bool) {
	tb.Helper()
	ev, err := events.New(fmt.Sprintf("id-%d", index), p)
	if err != nil {
		return rawCase{}, false
	}
	e := events.Entry{Time: 1_777_777_777_123_456_789 + int64(index), CommandID: fmt.Sprint("cmd-", index), Actor: actor}
	e.Events = []events.Event{ev}
	e.Stamp(index)
	data, err := events.EncodeEvent(&e.Events[0])
	if err != nil {
		return rawCase{}, false
	}
	back, err := events.DecodeEvent(data)
	if err != nil {
		tb.Fatalf("%s: decode: %v", name, err)
	}
	return rawCase{name: name, data: data, ev: back}, true
}

// sameRecord fails tb unless got and want are the same record.
func sameRecord(tb testing.TB, name string, got, want *kgo.Record) {
	tb.Helper()
	if !bytes.Equal(got.Key, want.Key) || !bytes.Equal(got.Value, want.Value) {
		tb.Fatalf("%s:\n got key %q value %s\nwant key %q value %s", name, got.Key, got.Value, want.Key, want.Value)
	}
	if got.Topic != want.Topic || got.Partition != want.Partition || !got.Timestamp.Equal(want.Timestamp) ||
		got.Timestamp.Location() != want.Timestamp.Location() {
		tb.Fatalf("%s: got %s/%d at %v, want %s/%d at %v", name, got.Topic, got.Partition, got.Timestamp,
			want.Topic, want.Partition, want.Timestamp)
	}
	if len(got.Headers) != len(want.Headers) {
		tb.Fatalf("%s: %d headers, want %d", name, len(got.Headers), len(want.Headers))
	}
	for i, h := range got.Headers {
		if h.Key != want.Headers[i].Key || !bytes.Equal(h.Value, want.Headers[i].Value) {
			tb.Fatalf("%s: header %d is %s=%q, want %s=%q", name, i, h.Key, h.Value, want.Headers[i].Key, want.Headers[i].Value)
		}
	}
}

var rawOptions = recordOptions{Topic: "t", Source: "/ordo", Format: FormatJSON, Partitions: 6}

// checkRaw builds c with the fast path and, if it takes it, fails tb
// unless the record is the one record builds from the decoded event. It
// reports whether the fast path took it.
func checkRaw(tb testing.TB, b *builder, c rawCase) bool {
	tb.Helper()
	var got kgo.Record
	at, ok := b.buildRaw(c.data, rawOptions, &got)
	if !ok {
		return false
	}
	want, err := record(c.ev, rawOptions)
	if err != nil {
		tb.Fatalf("%s: the fast path built what record refuses: %v", c.name, err)
	}
	sameRecord(tb, c.name, &got, want)
	if at != c.ev.Time {
		tb.Fatalf("%s: leader time %d, want %d", c.name, at, c.ev.Time)
	}
	return true
}

// fastTypes must take the fast path: the frequent events of a scheduling
// history and the bench's.
var fastTypes = []string{"NamespaceUpserted", "AllocsPlaced", "AllocsClientUpdated", "EvalsUpserted", "NodeRegistered"}

// TestRawRecordMatchesRecord: for a sample and random payloads of every
// event type, the fast path builds the very record the general one builds
// from the decoded event, or leaves it to it; the frequent types take it.
func TestRawRecordMatchesRecord(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var b builder
	fast := map[string]int{}
	samples := eventstest.Samples()
	index := uint64(1)
	for _, typ := range events.Types() {
		p, ok := samples[typ.Name]
		if !ok {
			p = typ.New()
		}
		cases := []events.Payload{p}
		for range 40 {
			q := typ.New()
			fill(rng, reflect.ValueOf(q).Elem(), 0)
			cases = append(cases, q)
		}
		for i, p := range cases {
			index++
			actor := []string{"", "tester", "é\"\u2028"}[i%3]
			c, ok := archived(t, fmt.Sprintf("%s #%d", typ.Name, i), index+uint64(rng.IntN(1<<40)), actor, p)
			if !ok {
				continue
			}
			b.reset()
			if checkRaw(t, &b, c) {
				fast[typ.Name]++
			}
		}
	}
	t.Logf("fast: %v", fast)
	for _, name := range fastTypes {
		if fast[name] == 0 {
			t.Errorf("%s never took the fast path", name)
		}
	}
	if len(fast) < len(events.Types())/2 {
		t.Errorf("only %d of %d types took the fast path: %v", len(fast), len(events.Types()), fast)
	}
	for _, typ := range events.Types() {
		if len(typ.Sensitive) > 0 && fast[typ.Name] > 0 {
			t.Errorf("%s has sensitive fields and took the fast path", typ.Name)
		}
	}
}

// TestRawRecordRefusesWhatItCannotRead: mutated and cut archived events
// never make the fast path panic, and what it accepts it builds as the
// general path does from the event they decode to.
func TestRawRecordRefusesWhatItCannotRead(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var b builder
	samples := eventstest.Samples()
	for _, name := range fastTypes {
		c, ok := archived(t, name, 77, "tester", samples[name])
		if !ok {
			t.Fatalf("%s does not encode", name)
		}
		for i := range 600 { // FuzzBuildRaw mutates further
			data := slices.Clone(c.data)
			switch i % 3 {
			case 0:
				data = data[:rng.IntN(len(data))]
			case 1:
				data[rng.IntN(len(data))] = byte(rng.IntN(256))
			case 2:
				for range 1 + rng.IntN(4) {
					data[rng.IntN(len(data))] ^= 1 << rng.IntN(8)
				}
			}
			b.reset()
			var got kgo.Record
			if _, ok := b.buildRaw(data, rawOptions, &got); !ok {
				continue
			}
			ev, err := events.DecodeEvent(data)
			if err != nil {
				t.Fatalf("%s mutation %d: the fast path took what DecodeEvent refuses (%v): % x", name, i, err, data)
			}
			want, err := record(ev, rawOptions)
			if err != nil {
				t.Fatalf("%s mutation %d: the fast path took what record refuses (%v): % x", name, i, err, data)
			}
			sameRecord(t, fmt.Sprintf("%s mutation %d", name, i), &got, want)
		}
	}
}

// TestRawRecordSensitiveAndMsgpack: the fast path leaves records with
// sensitive fields and msgpack values to the general path.
func TestRawRecordSensitiveAndMsgpack(t *testing.T) {
	var b builder
	c, _ := archived(t, "secret", 5, "x", &secretIssued{Name: "ci", Secret: secretValue})
	var r kgo.Record
	if _, ok := b.buildRaw(c.data, rawOptions, &r); ok {
		t.Fatal("the fast path built a record of a type with sensitive fields")
	}
	c, _ = archived(t, "ns", 5, "x", &events.NamespaceUpserted{Namespace: events.Namespace{Name: "a"}})
	o := rawOptions
	o.Format = FormatMsgpack
	if _, ok := b.buildRaw(c.data, o, &r); ok {
		t.Fatal("the fast path built a msgpack record")
	}
	if _, ok := b.buildRaw(c.data, rawOptions, &r); !ok {
		t.Fatal("the fast path refused a plain namespace event")
	}
}

// TestRawRecordKey: the key rule on bytes is RecordKey's.
func TestRawRecordKey(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	kinds := []string{events.KindAlloc, events.KindEval, events.KindDeployment, events.KindJob, events.KindNode,
		events.KindNamespace, events.KindServer, "token", "other"}
	for range 5000 {
		ev := &events.Event{Type: "T"}
		var raw []rawKey
		for range rng.IntN(6) {
			k := events.Key{Kind: kinds[rng.IntN(len(kinds))], Value: fmt.Sprint("v", rng.IntN(3))}
			ev.Keys = append(ev.Keys, k)
			raw = append(raw, rawKey{kind: []byte(k.Kind), value: []byte(k.Value)})
		}
		if got, want := string(appendRecordKey(nil, []byte(ev.Type), raw)), RecordKey(ev); got != want {
			t.Fatalf("keys %v: %q, RecordKey %q", ev.Keys, got, want)
		}
	}
}

// TestAppendJSONStringMatchesEncodingJSON: strings are escaped exactly as
// encoding/json escapes them without HTML escaping.
func TestAppendJSONStringMatchesEncodingJSON(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	check := func(s string) {
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(s); err != nil {
			t.Fatal(err)
		}
		want := strings.TrimSuffix(buf.String(), "\n")
		if got := string(appendJSONString(nil, s)); got != want {
			t.Fatalf("%q: %s, encoding/json %s", s, got, want)
		}
		if got := string(appendJSONString(nil, []byte(s))); got != want {
			t.Fatalf("%q as bytes: %s, encoding/json %s", s, got, want)
		}
	}
	for c := range 256 {
		check(string([]byte{byte(c)}))
		check("a" + string([]byte{byte(c)}) + "b")
	}
	for range 5000 {
		check(randomString(rng))
	}
}

// randomString returns a short string of parts JSON escapes in every way.
func randomString(rng *rand.Rand) string {
	parts := []string{"a", "Z", "0", " ", `"`, `\`, "\b", "\f", "\n", "\r", "\t", "\x01", "\x1f", "\x7f", "<", ">", "&",
		"é", "日本", "\u2028", "\u2029", "\U0001F600", "\xff", "\xe2\x80", "/", "'"}
	var sb strings.Builder
	for range rng.IntN(9) {
		sb.WriteString(parts[rng.IntN(len(parts))])
	}
	return sb.String()
}

// fill sets v (settable) to a random value of its type: nil, empty and
// full slices and maps, extreme integers, strings to escape.
func fill(rng *rand.Rand, v reflect.Value, depth int) {
	if depth > 6 {
		v.SetZero()
		return
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString(randomString(rng))
	case reflect.Bool:
		v.SetBool(rng.IntN(2) == 1)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt([]int64{0, 1, -1, 127, -128, 1 << 31, math.MaxInt64, math.MinInt64, rng.Int64()}[rng.IntN(9)])
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint([]uint64{0, 1, 255, 1 << 16, math.MaxUint32, math.MaxUint64, rng.Uint64()}[rng.IntN(7)])
	case reflect.Float32, reflect.Float64:
		v.SetFloat([]float64{0, 1.5, -2, 1e21, 1e-7, rng.Float64()}[rng.IntN(6)])
	case reflect.Pointer:
		if rng.IntN(3) == 0 {
			v.SetZero()
			return
		}
		p := reflect.New(v.Type().Elem())
		fill(rng, p.Elem(), depth+1)
		v.Set(p)
	case reflect.Slice:
		switch rng.IntN(4) {
		case 0:
			v.SetZero()
		case 1:
			v.Set(reflect.MakeSlice(v.Type(), 0, 0))
		default:
			s := reflect.MakeSlice(v.Type(), 1+rng.IntN(3), 3)
			for i := range s.Len() {
				fill(rng, s.Index(i), depth+1)
			}
			v.Set(s)
		}
	case reflect.Map:
		switch rng.IntN(4) {
		case 0:
			v.SetZero()
		case 1:
			v.Set(reflect.MakeMap(v.Type()))
		default:
			m := reflect.MakeMap(v.Type())
			for range 1 + rng.IntN(3) {
				k := reflect.New(v.Type().Key()).Elem()
				fill(rng, k, depth+1)
				e := reflect.New(v.Type().Elem()).Elem()
				fill(rng, e, depth+1)
				m.SetMapIndex(k, e)
			}
			v.Set(m)
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fill(rng, v.Field(i), depth+1)
			}
		}
	case reflect.Interface:
		vals := []any{nil, "s", int64(-3), true, []any{"x", int64(1)}, map[string]any{"k": "v"}}
		if x := vals[rng.IntN(len(vals))]; x != nil {
			v.Set(reflect.ValueOf(x))
		}
	}
}

// TestTranscodeMatchesEncodingJSON: the plan of every type that has one
// writes, from a random payload's msgpack, the bytes encoding/json writes
// for the payload decoded.
func TestTranscodeMatchesEncodingJSON(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	planned := 0
	for _, typ := range events.Types() {
		plan := compilePlan(reflect.TypeOf(typ.New()).Elem())
		if plan == nil {
			continue
		}
		planned++
		for i := range 80 {
			p := typ.New()
			fill(rng, reflect.ValueOf(p).Elem(), 0)
			data, err := events.Marshal(p)
			if err != nil {
				continue
			}
			back := typ.New()
			if err := events.Unmarshal(data, back); err != nil {
				t.Fatalf("%s #%d: %v", typ.Name, i, err)
			}
			var buf bytes.Buffer
			enc := json.NewEncoder(&buf)
			enc.SetEscapeHTML(false)
			if err := enc.Encode(back); err != nil {
				t.Fatalf("%s #%d: %v", typ.Name, i, err)
			}
			want := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
			d := mpReader{b: data}
			got, _, ok := appendTranscoded(nil, &d, plan, 0)
			if !ok {
				continue // left to the general path
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("%s #%d:\n got %s\nwant %s", typ.Name, i, got, want)
			}
		}
	}
	if planned == 0 {
		t.Fatal("no type has a plan")
	}
}

// FuzzBuildRaw: the fast path never panics on any bytes, and a record it
// builds is the one the general path builds from the event DecodeEvent
// reads from the same bytes.
func FuzzBuildRaw(f *testing.F) {
	samples := eventstest.Samples()
	for i, name := range fastTypes {
		if c, ok := archived(f, name, uint64(i+1), "tester", samples[name]); ok {
			f.Add(c.data)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var b builder
		var got kgo.Record
		if _, ok := b.buildRaw(data, rawOptions, &got); !ok {
			return
		}
		ev, err := events.DecodeEvent(data)
		if err != nil {
			t.Fatalf("the fast path took what DecodeEvent refuses (%v)", err)
		}
		want, err := record(ev, rawOptions)
		if err != nil {
			t.Fatalf("the fast path took what record refuses (%v)", err)
		}
		sameRecord(t, "fuzzed", &got, want)
	})
}
