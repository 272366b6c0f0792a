package fsm

// Result is what applying one entry produced; the FSM returns one per entry
// and the proposer receives it.
type Result struct {
	// Index is the index the command's effects committed at: the entry's own
	// index, or for a duplicate the index of the first entry with its command id.
	Index uint64
	// Duplicate reports an entry whose command id had already been applied.
	Duplicate bool
	// Err is a *RejectedError when a precondition failed.
	Err error
	// Time is the entry's leader time (Unix nanoseconds); zero for a duplicate.
	Time int64
	// Rows are the rows the proposer asked for (FSM.ExpectAnswer), as this
	// entry left them; empty for a duplicate or a rejection.
	Rows []AnsweredRow
	// Group are the results of a grouped entry's commands, in order
	// (events.NewGroup); the entry itself has no Err or Rows then.
	Group []Result
}
