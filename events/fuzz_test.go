package events_test

import (
	"bytes"
	"reflect"
	"sort"
	"testing"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/ordoplane/ordo/events"
)

// fixtureSeeds returns the golden fixtures in name order.
func fixtureSeeds(f *testing.F) [][]byte {
	fixtures := readFixtures(f)
	names := make([]string, 0, len(fixtures))
	for n := range fixtures {
		names = append(names, n)
	}
	sort.Strings(names)
	out := make([][]byte, len(names))
	for i, n := range names {
		out[i] = fixtures[n]
	}
	return out
}

func FuzzDecodeEvent(f *testing.F) {
	for _, b := range fixtureSeeds(f) {
		f.Add(b)
	}
	f.Add([]byte{0x80})
	f.Add([]byte{0xc0})
	f.Fuzz(func(t *testing.T, data []byte) {
		ev, err := events.DecodeEvent(data)
		if err != nil {
			return
		}
		// Decoding the payload may fail, but must not panic.
		p, perr := events.Decode(ev)
		_, _ = events.Redacted(ev)

		enc1, err := events.EncodeEvent(ev)
		if err != nil {
			t.Fatalf("re-encode of a decoded event: %v", err)
		}
		ev2, err := events.DecodeEvent(enc1)
		if err != nil {
			t.Fatalf("decode of a re-encoded event: %v\n%x", err, enc1)
		}
		if !reflect.DeepEqual(normEvent(*ev), normEvent(*ev2)) {
			t.Fatalf("decode→encode→decode changed the event:\n%+v\n%+v", *ev, *ev2)
		}
		enc2, err := events.EncodeEvent(ev2)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(enc1, enc2) {
			t.Fatalf("encoding is not stable:\n%x\n%x", enc1, enc2)
		}
		p2, perr2 := events.Decode(ev2)
		if (perr == nil) != (perr2 == nil) {
			t.Fatalf("payload decoded before re-encoding (%v) but not after (%v)", perr, perr2)
		}
		if perr == nil && !reflect.DeepEqual(p, p2) {
			t.Fatalf("payload changed across re-encoding: %+v vs %+v", p, p2)
		}
	})
}

func FuzzDecodeEntry(f *testing.F) {
	seeds := fixtureSeeds(f)
	all := events.Entry{Time: 1, CommandID: "cmd", Actor: "a", Preconditions: []events.Precondition{
		{Table: "namespaces", Key: "k", Op: events.ModifyIndex, Index: 3},
		{Table: "namespaces", Key: "j", Op: events.Absent},
	}}
	for _, b := range seeds {
		ev, err := events.DecodeEvent(b)
		if err != nil {
			f.Fatal(err)
		}
		all.Events = append(all.Events, *ev)
		one, err := events.EncodeEntry(&events.Entry{Time: 2, CommandID: "c", Events: []events.Event{*ev}})
		if err != nil {
			f.Fatal(err)
		}
		f.Add(one)
	}
	b, err := events.EncodeEntry(&all)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	f.Add([]byte{0x80})
	f.Fuzz(func(t *testing.T, data []byte) {
		e, err := events.DecodeEntry(data)
		if err != nil {
			return
		}
		for i := range e.Events {
			_, _ = events.Decode(&e.Events[i])
		}
		enc1, err := events.EncodeEntry(e)
		if err != nil {
			t.Fatalf("re-encode of a decoded entry: %v", err)
		}
		e2, err := events.DecodeEntry(enc1)
		if err != nil {
			t.Fatalf("decode of a re-encoded entry: %v\n%x", err, enc1)
		}
		if !reflect.DeepEqual(normEntry(*e), normEntry(*e2)) {
			t.Fatalf("decode→encode→decode changed the entry:\n%+v\n%+v", *e, *e2)
		}
		enc2, err := events.EncodeEntry(e2)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(enc1, enc2) {
			t.Fatalf("encoding is not stable:\n%x\n%x", enc1, enc2)
		}
	})
}

// normEvent maps the encodings that mean the same thing to one value: an
// empty slice is nil (omitempty drops it), and an absent payload is the
// msgpack nil it re-encodes as.
func normEvent(ev events.Event) events.Event {
	if len(ev.Keys) == 0 {
		ev.Keys = nil
	}
	if ev.Payload == nil {
		ev.Payload = msgpack.RawMessage{0xc0}
	}
	return ev
}

func normEntry(e events.Entry) events.Entry {
	if len(e.Preconditions) == 0 {
		e.Preconditions = nil
	}
	if len(e.Events) == 0 {
		e.Events = nil
	} else {
		evs := make([]events.Event, len(e.Events))
		for i, ev := range e.Events {
			evs[i] = normEvent(ev)
		}
		e.Events = evs
	}
	return e
}
