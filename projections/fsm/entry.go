package fsm

import (
	"errors"
	"fmt"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/internal/layout"
	"github.com/ordoplane/ordo/storage/archive"
	"github.com/ordoplane/ordo/storage/kv"
	"github.com/ordoplane/ordo/storage/raftlog"
)

// commandRecord is what the FSM keeps per client idempotency key.
type commandRecord struct {
	Index  uint64 `msgpack:"i"`
	Reason string `msgpack:"r,omitempty"`
	Hash   string `msgpack:"h,omitempty"`
}

// result is the answer a retry of the recorded command gets.
func (rec commandRecord) result() Result {
	res := Result{Index: rec.Index, Duplicate: true}
	if rec.Reason != "" {
		res.Err = &RejectedError{Reason: rec.Reason}
	}
	return res
}

func keyReused(id string, index uint64) string {
	return fmt.Sprintf("idempotency key %q was used at index %d for a different request", id, index)
}

// rejection is what the FSM records for an entry that was not applied.
type rejection struct {
	CommandID    string              `msgpack:"cid"`
	Reason       string              `msgpack:"r"`
	Precondition events.Precondition `msgpack:"p"`
}

// applyEntry applies one entry into w and returns its result and the tables
// it changed. An error is a storage failure; an entry that cannot apply is a
// recorded rejection in the result. A grouped entry's commands apply one
// after the other, each on its own, into the group's Result.
// want names the rows to read back into the result for a command id (answer.go).
func applyEntry(w kv.Writer, l raftlog.Log, projs []projections.Projection, ctr *archiveCounters, want func(commandID string) []RowRef) (Result, []string, error) {
	entry, err := events.DecodeEntry(l.Data)
	if err != nil {
		return reject(w, layout.RejectionKey(l.Index), l.Index, nil, events.Precondition{}, err.Error())
	}
	if !entry.Grouped() {
		res, tables, _, err := applyCommand(w, l.Index, entry, 0, layout.RejectionKey(l.Index), projs, ctr, want)
		return res, tables, err
	}
	if reason := checkGroup(entry); reason != "" {
		return reject(w, layout.RejectionKey(l.Index), l.Index, nil, events.Precondition{}, reason)
	}
	// Every command is known before any applies: a halt leaves the group whole.
	for i := range entry.Group {
		if err := checkKnown(&entry.Group[i]); err != nil {
			return Result{Index: l.Index}, nil, err
		}
	}
	res := Result{Index: l.Index, Time: entry.Time, Group: make([]Result, len(entry.Group))}
	var tables []string
	var seq uint32
	for i := range entry.Group {
		cmd := &entry.Group[i]
		cmd.Time = entry.Time
		r, t, next, err := applyCommand(w, l.Index, cmd, seq, layout.GroupRejectionKey(l.Index, i), projs, ctr, want)
		if err != nil {
			return Result{Index: l.Index}, nil, err
		}
		res.Group[i], seq = r, next
		tables = append(tables, t...)
	}
	return res, tables, nil
}

// checkGroup returns why a grouped entry is malformed, or "": the group
// carries nothing of its own, and its commands are not groups.
func checkGroup(entry *events.Entry) string {
	if len(entry.Events) > 0 || entry.CommandID != "" || entry.Idempotent {
		return "a grouped entry carries no events or command id of its own"
	}
	for i := range entry.Group {
		if len(entry.Group[i].Group) > 0 || entry.Group[i].Grouped() {
			return fmt.Sprintf("command %d of a grouped entry is a group", i)
		}
	}
	return ""
}

// applyCommand applies the command entry (an entry, or one command of a
// grouped entry) at index, its events numbered from seq, and returns its
// result, the tables it changed and the sequence after its last event.
// A rejection is recorded at rejKey.
func applyCommand(w kv.Writer, index uint64, entry *events.Entry, seq uint32, rejKey []byte, projs []projections.Projection, ctr *archiveCounters, want func(commandID string) []RowRef) (Result, []string, uint32, error) {
	res := Result{Index: index}
	if err := checkKnown(entry); err != nil {
		return res, nil, seq, err // halt.go: written by a newer ordo; halts the FSM
	}
	// rejected records a rejection; of rec's idempotency key when rec is set.
	rejected := func(rec *events.Entry, p events.Precondition, reason string) (Result, []string, uint32, error) {
		r, t, err := reject(w, rejKey, index, rec, p, reason)
		return r, t, seq, err
	}
	if entry.Idempotent {
		if prev, ok, err := lookupCommand(w, entry.CommandID); err != nil {
			return res, nil, seq, err
		} else if ok {
			if prev.Hash != entry.RequestHash {
				return rejected(nil, events.Precondition{}, keyReused(entry.CommandID, prev.Index))
			}
			return prev.result(), nil, seq, nil
		}
	}
	tx := projections.NewTx(w, index, entry.Time)
	for _, p := range entry.Preconditions {
		if reason := check(tx.View, p); reason != "" {
			return rejected(entry, p, reason)
		}
	}
	if reason, err := expand(tx.View, entry); err != nil {
		return res, nil, seq, err
	} else if reason != "" {
		return rejected(entry, events.Precondition{}, reason)
	}
	next := entry.StampFrom(index, seq)
	for i := range entry.Events {
		ev := &entry.Events[i]
		data, err := events.EncodeEvent(ev)
		if err != nil {
			return res, nil, seq, err
		}
		if err := archive.Append(w, ev.Index, ev.Seq, data); err != nil {
			return res, nil, seq, err
		}
		ctr.length++
		ctr.last = ev.Index
		events.Predecode(ev)
		for _, p := range projs {
			if err := p.Apply(tx, ev); err != nil {
				return res, nil, seq, fmt.Errorf("projection %s on %s: %w", p.Name(), ev.Type, err)
			}
		}
	}
	tables, err := tx.Finish()
	if err != nil {
		return res, nil, seq, err
	}
	if entry.Idempotent {
		if err := recordCommand(w, entry.CommandID, commandRecord{Index: index, Hash: entry.RequestHash}); err != nil {
			return res, nil, seq, err
		}
	}
	res.Time = entry.Time
	if refs := want(entry.CommandID); len(refs) > 0 {
		if res.Rows, err = readAnswer(tx, refs); err != nil {
			return res, nil, seq, err
		}
	}
	return res, tables, next, nil
}

func reject(w kv.Writer, key []byte, index uint64, entry *events.Entry, p events.Precondition, reason string) (Result, []string, error) {
	var cmdID string
	if entry != nil {
		cmdID = entry.CommandID
	}
	rec, err := msgpack.Marshal(&rejection{CommandID: cmdID, Reason: reason, Precondition: p})
	if err != nil {
		return Result{}, nil, err
	}
	if err := w.Set(key, rec); err != nil {
		return Result{}, nil, err
	}
	if entry != nil && entry.Idempotent {
		if err := recordCommand(w, cmdID, commandRecord{Index: index, Reason: reason, Hash: entry.RequestHash}); err != nil {
			return Result{}, nil, err
		}
	}
	return Result{Index: index, Err: &RejectedError{Precondition: p, Reason: reason}}, nil, nil
}

func lookupCommand(r kv.Reader, id string) (commandRecord, bool, error) {
	b, err := r.Get(layout.CommandKey(id))
	if errors.Is(err, kv.ErrNotFound) {
		return commandRecord{}, false, nil
	}
	if err != nil {
		return commandRecord{}, false, err
	}
	var rec commandRecord
	if err := msgpack.Unmarshal(b, &rec); err != nil {
		return commandRecord{}, false, fmt.Errorf("command record %s: %w", id, err)
	}
	return rec, true, nil
}

func recordCommand(w kv.Writer, id string, rec commandRecord) error {
	if id == "" {
		return nil
	}
	b, err := msgpack.Marshal(&rec)
	if err != nil {
		return err
	}
	return w.Set(layout.CommandKey(id), b)
}

// CommandIndex returns the index of the entry the command id was first
// recorded at, whatever its body; ok is false when id was never recorded.
func CommandIndex(v projections.View, id string) (uint64, bool, error) {
	rec, ok, err := lookupCommand(v.Reader(), id)
	return rec.Index, ok, err
}

// CommandResult returns the result recorded for idempotency key id, if a
// command with it was applied. A record of another request (hash differs)
// yields a *RejectedError saying the key was reused.
func CommandResult(v projections.View, id, hash string) (Result, bool, error) {
	rec, ok, err := lookupCommand(v.Reader(), id)
	if err != nil || !ok {
		return Result{}, ok, err
	}
	if rec.Hash != hash {
		return Result{Err: &RejectedError{Reason: keyReused(id, rec.Index)}}, true, nil
	}
	return rec.result(), true, nil
}

// check returns why p does not hold, or "" when it does.
func check(v projections.View, p events.Precondition) string {
	if c, ok := projections.RegisteredCheck(p.Op); ok {
		return c(v, p)
	}
	row, err := v.Get(p.Table, p.Key)
	exists := err == nil
	if err != nil && !errors.Is(err, projections.ErrNotFound) {
		return err.Error()
	}
	switch p.Op {
	case events.Exists:
		if !exists {
			return "does not exist"
		}
	case events.Absent:
		if exists {
			return "already exists"
		}
	case events.ModifyIndex:
		var have uint64
		if exists {
			have = row.ModifyIndex
		}
		if have != p.Index {
			return fmt.Sprintf("modify index is %d, not %d", have, p.Index)
		}
	default:
		return fmt.Sprintf("unknown operation %q", p.Op)
	}
	return ""
}
