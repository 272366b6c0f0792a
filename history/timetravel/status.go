package timetravel

import "time"

// Status says what past a server serves and how: GET /v1/operator/history.
type Status struct {
	// Applied is the server's applied index.
	Applied uint64
	// Versions describes the versions store; nil when it is not kept.
	Versions *VersionsStatus `json:",omitempty"`
}

// VersionsStatus describes the versions store.
type VersionsStatus struct {
	// Spans are the runs of indexes it answers, each From..To, with the
	// projection versions (and the restore) that wrote it; only those of
	// the running ones (Current) serve.
	Spans []SpanStatus
	// Oldest is the oldest index it serves once any backfill is done: the
	// history's first index, or the oldest of the VersionsKept newest.
	Oldest uint64
	// Bytes is its disk; Lag how many applied indexes it does not hold yet.
	Bytes int64
	Lag   uint64
	// Kept is VersionsKept (0: every version is kept).
	Kept uint64
	// Backfill is the backfill under way; nil when none is.
	Backfill *BackfillStatus `json:",omitempty"`
}

// SpanStatus is one span of the versions store.
type SpanStatus struct {
	From, To uint64
	// Tag names the projection versions that wrote the span; Current says
	// they are the running ones.
	Tag     string
	Current bool
}

// BackfillStatus is a backfill under way: the indexes From..To being
// rebuilt from the archive, which reads are refused until it ends.
type BackfillStatus struct {
	From, To uint64
	// Reached is the newest index replayed so far, Events the events.
	Reached uint64
	Events  uint64
	// Started is when it began.
	Started time.Time
}

// Status returns what past the server serves and how.
func (t *TimeTravel) Status() Status {
	st := Status{Applied: t.cfg.FSM.Applied()}
	k := t.versions
	if k == nil {
		return st
	}
	tag, _ := k.tag()
	head, _ := k.store.Last()
	vs := &VersionsStatus{Spans: []SpanStatus{}, Oldest: k.oldestWanted(head), Bytes: t.VersionsBytes(),
		Lag: t.VersionsLag(), Kept: t.cfg.VersionsKept, Backfill: t.backfillStatus()}
	for _, sp := range k.store.Spans() {
		vs.Spans = append(vs.Spans, SpanStatus{From: sp.From, To: sp.To, Tag: sp.Tag, Current: sp.Tag == tag})
	}
	st.Versions = vs
	return st
}

// backfillStatus describes the backfill under way, nil when none is.
func (t *TimeTravel) backfillStatus() *BackfillStatus {
	if t.versions == nil {
		return nil
	}
	run := t.versions.running.Load()
	if run == nil {
		return nil
	}
	return &BackfillStatus{From: run.job.from, To: run.job.to, Reached: run.reached.Load(),
		Events: run.events.Load(), Started: run.started}
}
