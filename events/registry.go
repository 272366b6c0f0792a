package events

import (
	"fmt"
	"reflect"
	"slices"
	"sort"

	"github.com/vmihailenco/msgpack/v5"
)

// Payload is implemented by every event payload: it names the entities it touches.
type Payload interface {
	EntityKeys() []Key
}

// Type describes one event type at its current version.
type Type struct {
	// Name is the event type, such as "NamespaceUpserted".
	Name string
	// Version is the current version; older versions are upcast to it on read.
	Version uint16
	// Topic is the event stream topic, such as "Namespace".
	Topic string
	// New returns a zero payload of the current version.
	New func() Payload
	// Sensitive lists payload fields (JSON names) that never leave the cluster in clear.
	Sensitive []string
}

// Upcaster turns the payload of Name at version From into version From+1.
type Upcaster struct {
	Name string
	From uint16
	Up   func(old msgpack.RawMessage) (msgpack.RawMessage, error)
}

var (
	types     = map[string]Type{}
	upcasters = map[string]map[uint16]Upcaster{}
	payloadOf = map[reflect.Type]string{}
)

// Register adds t to the registry. It panics on a duplicate or an incomplete
// type, since registration happens in init.
func Register(t Type) {
	if t.Name == "" || t.Version == 0 || t.New == nil || t.Topic == "" {
		panic(fmt.Sprintf("events: incomplete type %+v", t))
	}
	if _, dup := types[t.Name]; dup {
		panic("events: duplicate type " + t.Name)
	}
	rt := reflect.TypeOf(t.New())
	if other, dup := payloadOf[rt]; dup {
		// New finds the type from the payload's Go type, so it must be unique.
		panic(fmt.Sprintf("events: payload %v registered for both %s and %s", rt, other, t.Name))
	}
	types[t.Name] = t
	payloadOf[rt] = t.Name
}

// RegisterUpcaster adds u; it panics on a duplicate.
func RegisterUpcaster(u Upcaster) {
	m := upcasters[u.Name]
	if m == nil {
		m = map[uint16]Upcaster{}
		upcasters[u.Name] = m
	}
	if _, dup := m[u.From]; dup {
		panic(fmt.Sprintf("events: duplicate upcaster %s v%d", u.Name, u.From))
	}
	m[u.From] = u
}

// Lookup returns the registered type named name.
func Lookup(name string) (Type, bool) {
	t, ok := types[name]
	return t, ok
}

// Types returns every registered type, sorted by name.
func Types() []Type {
	out := make([]Type, 0, len(types))
	for _, t := range types {
		out = append(out, t)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// New builds an event carrying p at its type's current version. The type is
// found from the payload's Go type; id is the ksuid minted for the event.
func New(id string, p Payload) (Event, error) {
	name, ok := payloadOf[reflect.TypeOf(p)]
	if !ok {
		return Event{}, fmt.Errorf("new event for %T: %w", p, ErrUnknownType)
	}
	raw, err := encode(p)
	if err != nil {
		return Event{}, fmt.Errorf("encode %s payload: %w", name, err)
	}
	return Event{Type: name, Version: types[name].Version, ID: id, Keys: p.EntityKeys(), Payload: raw}, nil
}

// Upcast returns the event's encoded payload at its type's current version:
// the stored bytes when the event is current, else the result of the
// upcasters applied step by step. Projections that keep payloads as rows
// use it to skip a decode and re-encode.
func Upcast(ev *Event) (msgpack.RawMessage, error) {
	t, ok := types[ev.Type]
	if !ok {
		return nil, fmt.Errorf("decode %q: %w", ev.Type, ErrUnknownType)
	}
	if ev.Version > t.Version {
		return nil, fmt.Errorf("decode %s v%d (know v%d): %w", ev.Type, ev.Version, t.Version, ErrFutureVersion)
	}
	raw := ev.Payload
	for v := ev.Version; v < t.Version; v++ {
		u, ok := upcasters[ev.Type][v]
		if !ok {
			return nil, fmt.Errorf("decode %s: no upcaster from v%d", ev.Type, v)
		}
		var err error
		if raw, err = u.Up(raw); err != nil {
			return nil, fmt.Errorf("upcast %s from v%d: %w", ev.Type, v, err)
		}
	}
	return raw, nil
}

// Decode returns the event's payload at its type's current version,
// upcasting older versions step by step. After Predecode it returns the
// payload Predecode decoded, shared: the caller must not modify it.
func Decode(ev *Event) (Payload, error) { return decodePayloadOf(ev, false) }

// DecodeIf is Decode for an event whose type is one of types, and nil
// otherwise: a projection passes over the events it does not apply
// without decoding them.
func DecodeIf(ev *Event, types ...string) (Payload, error) {
	if !slices.Contains(types, ev.Type) {
		return nil, nil
	}
	return Decode(ev)
}

// decodePayloadOf is Decode; checked says ev's payload is a part of
// bytes whose structure was checked (DecodeEvent's input), so that a
// payload it decodes as written (not upcast) need not be checked again.
func decodePayloadOf(ev *Event, checked bool) (Payload, error) {
	if ev.decoded != nil {
		return ev.decoded, nil
	}
	raw, err := Upcast(ev)
	if err != nil {
		return nil, err
	}
	p := types[ev.Type].New()
	if err := decodeFrom(raw, p, false, checked && sameBytes(raw, ev.Payload)); err != nil {
		return nil, fmt.Errorf("decode %s v%d payload: %w", ev.Type, ev.Version, err)
	}
	return p, nil
}

// Predecode decodes ev's payload once, so that every later Decode of ev
// returns it rather than decoding again: for the FSM and replays, which
// hand each event to every projection (which only read it). A payload that
// does not decode is left for each Decode to report.
func Predecode(ev *Event) { predecode(ev, false) }

// predecode is Predecode; checked as decodePayloadOf's.
func predecode(ev *Event, checked bool) {
	if p, err := decodePayloadOf(ev, checked); err == nil {
		ev.decoded = p
	}
}
