package timetravel

// Status says what past a server serves and how: GET /v1/operator/history.
type Status struct {
	// Applied is the server's applied index.
	Applied uint64
	// Versions describes the versions store; nil when it is not kept.
	Versions *VersionsStatus `json:",omitempty"`
	// Checkpoints are the applied indexes of the kept checkpoints,
	// ascending, and CheckpointBytes the disk they hold.
	Checkpoints     []uint64
	CheckpointBytes int64
	// RedoBytes is the redo log's disk (0 when it is not kept).
	RedoBytes int64
	// Cached are the indexes of the materialised states kept open.
	Cached []uint64
}

// VersionsStatus describes the versions store.
type VersionsStatus struct {
	// Spans are the runs of indexes it answers, each From..To, with the
	// projection versions that wrote it; only those of the running
	// projection versions (Current) serve.
	Spans []SpanStatus
	// Bytes is its disk; Lag how many applied indexes it does not hold yet.
	Bytes int64
	Lag   uint64
	// Kept is VersionsKept (0: every version is kept).
	Kept uint64
}

// SpanStatus is one span of the versions store.
type SpanStatus struct {
	From, To uint64
	// Tag names the projection versions that wrote the span; Current says
	// they are the running ones.
	Tag     string
	Current bool
}

// Status returns what past the server serves and how.
func (t *TimeTravel) Status() Status {
	st := Status{Applied: t.cfg.FSM.Applied(), Checkpoints: t.Checkpoints(), CheckpointBytes: t.CheckpointBytes(),
		RedoBytes: t.RedoBytes(), Cached: t.Cached()}
	if st.Checkpoints == nil {
		st.Checkpoints = []uint64{}
	}
	if st.Cached == nil {
		st.Cached = []uint64{}
	}
	if t.versions != nil {
		vs := &VersionsStatus{Spans: []SpanStatus{}, Bytes: t.VersionsBytes(), Lag: t.VersionsLag(), Kept: t.cfg.VersionsKept}
		for _, sp := range t.versions.store.Spans() {
			vs.Spans = append(vs.Spans, SpanStatus{From: sp.From, To: sp.To, Tag: sp.Tag, Current: sp.Tag == t.versions.tag})
		}
		st.Versions = vs
	}
	return st
}
