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
// recorded rejection in the result.
// want names the rows to read back into the result for a command id (answer.go).
func applyEntry(w kv.Writer, l raftlog.Log, projs []projections.Projection, ctr *archiveCounters, want func(commandID string) []RowRef) (Result, []string, error) {
	res := Result{Index: l.Index}
	entry, err := events.DecodeEntry(l.Data)
	if err != nil {
		return reject(w, l.Index, nil, events.Precondition{}, err.Error())
	}
	if err := checkKnown(entry); err != nil {
		return res, nil, err // halt.go: written by a newer ordo; halts the FSM
	}
	if entry.Idempotent {
		if prev, ok, err := lookupCommand(w, entry.CommandID); err != nil {
			return res, nil, err
		} else if ok {
			if prev.Hash != entry.RequestHash {
				return reject(w, l.Index, nil, events.Precondition{}, keyReused(entry.CommandID, prev.Index))
			}
			return prev.result(), nil, nil
		}
	}
	tx := projections.NewTx(w, l.Index, entry.Time)
	for _, p := range entry.Preconditions {
		if reason := check(tx.View, p); reason != "" {
			return reject(w, l.Index, entry, p, reason)
		}
	}
	if reason, err := expand(tx.View, entry); err != nil {
		return res, nil, err
	} else if reason != "" {
		return reject(w, l.Index, entry, events.Precondition{}, reason)
	}
	entry.Stamp(l.Index)
	for i := range entry.Events {
		ev := &entry.Events[i]
		data, err := events.EncodeEvent(ev)
		if err != nil {
			return res, nil, err
		}
		if err := archive.Append(w, ev.Index, ev.Seq, data); err != nil {
			return res, nil, err
		}
		ctr.length++
		ctr.last = ev.Index
		events.Predecode(ev)
		for _, p := range projs {
			if err := p.Apply(tx, ev); err != nil {
				return res, nil, fmt.Errorf("projection %s on %s: %w", p.Name(), ev.Type, err)
			}
		}
	}
	tables, err := tx.Finish()
	if err != nil {
		return res, nil, err
	}
	if entry.Idempotent {
		if err := recordCommand(w, entry.CommandID, commandRecord{Index: l.Index, Hash: entry.RequestHash}); err != nil {
			return res, nil, err
		}
	}
	res.Time = entry.Time
	if refs := want(entry.CommandID); len(refs) > 0 {
		if res.Rows, err = readAnswer(tx, refs); err != nil {
			return res, nil, err
		}
	}
	return res, tables, nil
}

func reject(w kv.Writer, index uint64, entry *events.Entry, p events.Precondition, reason string) (Result, []string, error) {
	var cmdID string
	if entry != nil {
		cmdID = entry.CommandID
	}
	rec, err := msgpack.Marshal(&rejection{CommandID: cmdID, Reason: reason, Precondition: p})
	if err != nil {
		return Result{}, nil, err
	}
	if err := w.Set(layout.RejectionKey(index), rec); err != nil {
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
