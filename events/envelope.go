package events

import (
	"time"

	"github.com/vmihailenco/msgpack/v5"
)

// Entry is what one command appends to the log: the leader's time, the
// command id that makes retries idempotent, the actor, the preconditions the
// FSM checks at apply, and the events to record when they hold.
type Entry struct {
	// Time is the leader's clock when the command was decided, in Unix nanoseconds.
	Time int64 `msgpack:"t"`
	// CommandID identifies the request; events carry it as their
	// correlation id.
	CommandID string `msgpack:"cid"`
	// Idempotent marks a CommandID the client chose (an Idempotency-Key):
	// the FSM records it, and a second entry with the same id applies as a
	// duplicate of the first. Ids minted by the server are unique by
	// construction and are not recorded.
	Idempotent bool `msgpack:"idem,omitempty"`
	// RequestHash is a digest of what an idempotent command asked for; a
	// retry with the same CommandID but another hash is refused.
	RequestHash string `msgpack:"rh,omitempty"`
	// Actor names who issued the command (a token accessor, a processor).
	Actor string `msgpack:"a,omitempty"`
	// Preconditions are checked in order against the projections at apply.
	Preconditions []Precondition `msgpack:"pre,omitempty"`
	// Events are recorded in order when every precondition holds.
	Events []Event `msgpack:"ev"`
	// Group holds the commands of a grouped entry (see NewGroup): each an
	// entry of its own, applied in order at this entry's index and time.
	Group []Entry `msgpack:"g,omitempty"`
}

// PreconditionOp says what a Precondition asserts about its row.
type PreconditionOp string

// The precondition operations.
const (
	// Exists asserts the row is present.
	Exists PreconditionOp = "exists"
	// Absent asserts the row is not present.
	Absent PreconditionOp = "absent"
	// ModifyIndex asserts the row's modify index equals Index (0 means absent).
	ModifyIndex PreconditionOp = "modify-index"
	// GroupOp marks a grouped entry (NewGroup). It asserts nothing: a
	// build that knows groups applies the group's commands, and one that
	// predates them halts on an operation it does not know rather than
	// apply an entry with no events of its own.
	GroupOp PreconditionOp = "group"
)

// Precondition is a fact a decision depended on that could change before the
// entry commits; the projection owning Table checks it at apply.
type Precondition struct {
	Table string         `msgpack:"tb" json:"Table"`
	Key   string         `msgpack:"k" json:"Key"`
	Op    PreconditionOp `msgpack:"op" json:"Op"`
	Index uint64         `msgpack:"i,omitempty" json:"Index,omitempty"`
}

// Key names one entity an event touches, such as {namespace, payments}.
type Key struct {
	Kind  string `msgpack:"k" json:"Kind"`
	Value string `msgpack:"v" json:"Value"`
}

// The entity kinds used in Keys.
const (
	KindNamespace = "namespace"
	KindServer    = "server"
)

// Event is the envelope of one state change.
type Event struct {
	// Type and Version name the payload's shape in the registry.
	Type    string `msgpack:"ty"`
	Version uint16 `msgpack:"v"`
	// Index and Seq are the raft index the event committed at and its
	// position in that entry; set by the FSM.
	Index uint64 `msgpack:"i"`
	Seq   uint32 `msgpack:"s"`
	// Time is the leader time of the entry, in Unix nanoseconds.
	Time int64 `msgpack:"t"`
	// ID is a ksuid minted by the command handler on the leader.
	ID string `msgpack:"id"`
	// Actor and CorrelationID are copied from the entry (CorrelationID is its command id).
	Actor         string `msgpack:"a,omitempty"`
	CorrelationID string `msgpack:"c,omitempty"`
	// Keys are the entities the event touches, for lookups without decoding payloads.
	Keys []Key `msgpack:"k,omitempty"`
	// Payload is the msgpack-encoded payload of Type at Version.
	Payload msgpack.RawMessage `msgpack:"p"`
	// decoded, set by Predecode, is Payload decoded, shared by every
	// Decode of the event.
	decoded Payload
}

// LeaderTime returns the entry's time as a time.Time in UTC.
func (e *Entry) LeaderTime() time.Time { return time.Unix(0, e.Time).UTC() }

// Stamp sets each event's index, sequence, time, actor and correlation id
// from the entry committed at index.
func (e *Entry) Stamp(index uint64) { e.StampFrom(index, 0) }

// StampFrom is Stamp for the command of a grouped entry whose events
// follow seq events of the commands before it in the group; it returns
// the sequence of the event after its last.
func (e *Entry) StampFrom(index uint64, seq uint32) uint32 {
	for i := range e.Events {
		ev := &e.Events[i]
		ev.Index = index
		ev.Seq = seq + uint32(i)
		ev.Time = e.Time
		ev.Actor = e.Actor
		ev.CorrelationID = e.CommandID
	}
	return seq + uint32(len(e.Events))
}

// NewGroup returns the entry that appends cmds together at time: one
// raft entry whose commands are each checked and applied on their own
// (preconditions, idempotency record, rejection), in order, each after
// the ones before it. Every command takes the group's time.
func NewGroup(time int64, cmds []Entry) Entry {
	for i := range cmds {
		cmds[i].Time = time
	}
	return Entry{Time: time, Preconditions: []Precondition{{Op: GroupOp}}, Group: cmds}
}

// Grouped reports whether e is a grouped entry (NewGroup).
func (e *Entry) Grouped() bool {
	return len(e.Preconditions) == 1 && e.Preconditions[0].Op == GroupOp
}

// Key returns the value of the first key of kind, or "".
func (ev *Event) Key(kind string) string {
	for _, k := range ev.Keys {
		if k.Kind == kind {
			return k.Value
		}
	}
	return ""
}
