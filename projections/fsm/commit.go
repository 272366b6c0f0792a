package fsm

// Commit is one batch FSM.Apply committed, as its CommitHook is told of
// it.
type Commit struct {
	// From and To are the applied index before and after the batch.
	From, To uint64
	// Repr is the batch's writes in Pebble's encoding (kv.Store.ApplyRepr),
	// a copy the hook keeps. Applied to a store at From, they bring it to
	// To, exactly as the FSM did: a redo record.
	Repr []byte
	// Marks say which entry wrote which writes: the writes of Repr before
	// mark k's Ops (and at or after mark k-1's) are entry Marks[k].Index's.
	// The writes after the last mark (the applied index, the archive's
	// counters) are the batch's own.
	Marks []EntryMark
	// Epoch changes whenever the state is replaced outside Apply (a
	// snapshot restore, a projection rebuild's switch): a hook keeping a
	// copy of the state built from commits must then start it again.
	Epoch uint64
}

// EntryMark is where one applied entry's writes end in a Commit's Repr.
type EntryMark struct {
	// Index is the entry's raft index.
	Index uint64
	// Ops is how many writes the batch held once the entry was applied.
	Ops uint32
}

// CommitHook is told of each batch FSM.Apply commits, on the apply path
// (so it must not block). history/timetravel keeps every version of the
// rows they write, to read past states without re-running projections.
// A restore or a
// projection rebuild's switch writes outside Apply and is not reported;
// it moves the Epoch of the next Commit.
type CommitHook func(Commit)

// Epoch counts the times the state was replaced outside Apply (see
// Commit.Epoch).
func (f *FSM) Epoch() uint64 { return f.epoch.Load() }

// SetCommitHook sets the hook told of each batch Apply commits (nil: none).
func (f *FSM) SetCommitHook(h CommitHook) {
	f.applyMu.Lock()
	f.onCommit = h
	f.applyMu.Unlock()
}
