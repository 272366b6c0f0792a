package jobs

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
)

// TaskGroupSummary counts a task group's allocations by client status,
// and the allocations its last evaluation could not place (Queued):
// Nomad's api.TaskGroupSummary.
type TaskGroupSummary struct {
	Queued   int `msgpack:"q,omitempty"`
	Complete int `msgpack:"c,omitempty"`
	Failed   int `msgpack:"f,omitempty"`
	Running  int `msgpack:"r,omitempty"`
	Starting int `msgpack:"s,omitempty"`
	Lost     int `msgpack:"l,omitempty"`
	Unknown  int `msgpack:"u,omitempty"`
}

// count returns the counter of client status st, nil for none.
func (g *TaskGroupSummary) count(st string) *int {
	switch st {
	case events.AllocClientPending:
		return &g.Starting
	case events.AllocClientRunning:
		return &g.Running
	case events.AllocClientComplete:
		return &g.Complete
	case events.AllocClientFailed:
		return &g.Failed
	case events.AllocClientLost:
		return &g.Lost
	case events.AllocClientUnknown:
		return &g.Unknown
	}
	return nil
}

// Children counts a periodic or parameterized job's children by status:
// Nomad's api.JobChildrenSummary.
type Children struct {
	Pending int64 `msgpack:"p,omitempty"`
	Running int64 `msgpack:"r,omitempty"`
	Dead    int64 `msgpack:"d,omitempty"`
}

func (c *Children) add(status string, n int64) {
	switch status {
	case StatusPending:
		c.Pending += n
	case StatusRunning:
		c.Running += n
	case StatusDead:
		c.Dead += n
	}
}

// Summary is a job's summary: Nomad's api.JobSummary.
type Summary struct {
	JobID       string
	Namespace   string
	Summary     map[string]TaskGroupSummary
	Children    *Children
	CreateIndex uint64
	ModifyIndex uint64
}

// summaryRow is what SummaryTable stores.
type summaryRow struct {
	Groups   groupCounts `msgpack:"g,omitempty"`
	Children *Children   `msgpack:"ch,omitempty"`
	// Status is the job's status derived from the counts, kept so a
	// child's change of status moves its parent's children counts.
	Status string `msgpack:"st"`
	// JobCreateIndex tells this incarnation of the job from an earlier
	// one that was purged.
	JobCreateIndex uint64 `msgpack:"jci"`
}

// allocRef is what AllocsTable stores per allocation.
type allocRef struct {
	Namespace      string `msgpack:"ns"`
	JobID          string `msgpack:"job"`
	Group          string `msgpack:"tg"`
	ClientStatus   string `msgpack:"cs"`
	JobCreateIndex uint64 `msgpack:"jci"`
}

// deriveStatus returns the status of job given its counts: periodic and
// parameterized parents run until stopped; otherwise a job with live
// allocations runs, a stopped one or one whose allocations all finished
// with nothing queued is dead, and anything else is pending.
func deriveStatus(job *events.Job, s *summaryRow) string {
	if Periodic(job) || Parameterized(job) {
		if job.Stop {
			return StatusDead
		}
		return StatusRunning
	}
	var live, done, queued int
	for _, g := range s.Groups {
		live += g.Starting + g.Running + g.Unknown
		done += g.Complete + g.Failed + g.Lost
		queued += g.Queued
	}
	switch {
	case live > 0:
		return StatusRunning
	case job.Stop, done > 0 && queued == 0:
		return StatusDead
	}
	return StatusPending
}

func decodeSummary(b []byte) (*summaryRow, error) {
	var s summaryRow
	if err := events.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("decode job summary row: %w", err)
	}
	return &s, nil
}

// loadSummary returns the stored summary of job id in ns, or
// projections.ErrNotFound.
func loadSummary(v projections.View, ns, id string) (*summaryRow, projections.Row, error) {
	r, err := v.Get(SummaryTable, Key(ns, id))
	if err != nil {
		return nil, r, err
	}
	s, err := decodeSummary(r.Value)
	return s, r, err
}

// summaryCodec encodes SummaryTable's rows.
var summaryCodec = projections.Codec[summaryRow]{Name: "job summary"}

// txSummary returns a copy of the summary of job id in ns, for the caller
// to change and write, or projections.ErrNotFound.
func txSummary(tx *projections.Tx, ns, id string) (*summaryRow, error) {
	s, _, err := projections.GetValue(tx, &summaryCodec, SummaryTable, Key(ns, id))
	if err != nil {
		return nil, err
	}
	return s.clone(), nil
}

// clone returns a copy of s sharing nothing with it.
func (s *summaryRow) clone() *summaryRow {
	c := *s
	c.Groups = slices.Clone(s.Groups)
	if s.Children != nil {
		ch := *s.Children
		c.Children = &ch
	}
	return &c
}

// encodesAs reports whether s and o encode to the same bytes: empty and
// nil group maps alike (both are left out), a nil Children apart from a
// zero one (only nil is).
func (s *summaryRow) encodesAs(o *summaryRow) bool {
	if (s.Children == nil) != (o.Children == nil) || s.Children != nil && *s.Children != *o.Children {
		return false
	}
	return s.Status == o.Status && s.JobCreateIndex == o.JobCreateIndex && slices.Equal(s.Groups, o.Groups)
}

// writeSummary stores s unless it is what the row holds already (N15);
// s is handed over.
func writeSummary(tx *projections.Tx, ns, id string, s *summaryRow) error {
	return projections.PutValueChanged(tx, &summaryCodec, SummaryTable, Key(ns, id), s, (*summaryRow).encodesAs)
}

// saveSummary derives s's status from job, stores s and moves the job in
// its parent's children counts when its status changed from was.
func saveSummary(tx *projections.Tx, job *events.Job, s *summaryRow, was string) error {
	s.Status = deriveStatus(job, s)
	if err := writeSummary(tx, job.Namespace, job.ID, s); err != nil {
		return err
	}
	return moveChild(tx, job, was, s.Status)
}

// summaries caches the summaries one event touches, so an event about many
// allocations of one job reads and writes its summary once. Most events
// touch one job (many none): it is kept apart, without a map.
type summaries struct {
	tx    *projections.Tx
	first cachedSummary
	more  map[string]*cachedSummary // by Key, the jobs after the first
}

type cachedSummary struct {
	ns, id string
	row    *summaryRow // nil when the job has no summary
	was    string
	set    bool
}

// newSummaries returns the summaries of an event.
func newSummaries(tx *projections.Tx) *summaries { return &summaries{tx: tx} }

// get returns the summary of job id in ns, nil when there is none.
func (c *summaries) get(ns, id string) (*summaryRow, error) {
	if c.first.set && c.first.ns == ns && c.first.id == id {
		return c.first.row, nil
	}
	var k string
	if c.first.set {
		k = Key(ns, id)
		if cs, ok := c.more[k]; ok {
			return cs.row, nil
		}
	}
	cs := cachedSummary{ns: ns, id: id, set: true}
	s, err := txSummary(c.tx, ns, id)
	switch {
	case err == nil:
		cs.row, cs.was = s, s.Status
	case !errors.Is(err, projections.ErrNotFound):
		return nil, err
	}
	if !c.first.set {
		c.first = cs
	} else {
		if c.more == nil {
			c.more = map[string]*cachedSummary{}
		}
		c.more[k] = &cs
	}
	return cs.row, nil
}

// flush writes every summary touched, in key order.
func (c *summaries) flush() error {
	if !c.first.set {
		return nil
	}
	touched := make([]*cachedSummary, 0, 1+len(c.more))
	touched = append(touched, &c.first)
	for _, cs := range c.more {
		touched = append(touched, cs)
	}
	if len(touched) > 1 {
		slices.SortFunc(touched, func(a, b *cachedSummary) int { return strings.Compare(Key(a.ns, a.id), Key(b.ns, b.id)) })
	}
	for _, cs := range touched {
		if cs.row == nil {
			continue
		}
		k := Key(cs.ns, cs.id)
		h, _, err := projections.GetValue(c.tx, &headCodec, Table, k)
		if errors.Is(err, projections.ErrNotFound) {
			continue // purged earlier in this entry
		} else if err != nil {
			return err
		}
		job := h.job()
		if job.Namespace != cs.ns || job.ID != cs.id {
			return fmt.Errorf("job row %q holds %s/%s", k, job.Namespace, job.ID)
		}
		if err := saveSummary(c.tx, job, cs.row, cs.was); err != nil {
			return err
		}
	}
	return nil
}

// refCodec encodes AllocsTable's rows.
var refCodec = projections.Codec[allocRef]{Name: "alloc ref"}

// getRef returns a copy of allocation id's ref, nil when there is none.
func getRef(tx *projections.Tx, id string) (*allocRef, error) {
	ref, _, err := projections.LookupValue(tx, &refCodec, AllocsTable, id)
	if err != nil || ref == nil {
		return nil, err
	}
	cp := *ref
	return &cp, nil
}

// putRef stores ref, handed over, unless the row holds it already (equal
// refs encode alike: no field is left out when empty).
func putRef(tx *projections.Tx, id string, ref *allocRef) error {
	return projections.PutValueChanged(tx, &refCodec, AllocsTable, id, ref, func(a, b *allocRef) bool { return *a == *b })
}

// move moves allocation ref from its recorded client status to status,
// counting it in its job's summary when that is the incarnation it was
// placed for. A new allocation (from "") starting counts one fewer queued.
func (c *summaries) move(ref *allocRef, from, to string) error {
	if from == to {
		return nil
	}
	s, err := c.get(ref.Namespace, ref.JobID)
	if err != nil || s == nil || s.JobCreateIndex != ref.JobCreateIndex {
		return err
	}
	g, ok := s.Groups.get(ref.Group)
	if !ok && from != "" {
		return nil
	}
	if p := g.count(from); p != nil && *p > 0 {
		*p--
	}
	if p := g.count(to); p != nil {
		*p++
	}
	if from == "" && to == events.AllocClientPending && g.Queued > 0 {
		g.Queued--
	}
	s.Groups.set(ref.Group, g)
	return nil
}

// update records that allocation id now has client status to.
func (c *summaries) update(id, to string) error {
	ref, err := getRef(c.tx, id)
	if err != nil || ref == nil || ref.ClientStatus == to {
		return err
	}
	if err := c.move(ref, ref.ClientStatus, to); err != nil {
		return err
	}
	ref.ClientStatus = to
	return putRef(c.tx, id, ref)
}

func applyPlaced(tx *projections.Tx, p *events.AllocsPlaced) error {
	c := newSummaries(tx)
	// A plan places many allocations of one job: read its row once.
	var created jobCreated
	for i := range p.Allocs {
		a := &p.Allocs[i]
		ref, err := getRef(tx, a.ID)
		if err != nil {
			return err
		}
		if ref != nil {
			// Placed again (an in-place update): only its status may move.
			if err := c.update(a.ID, a.ClientStatus); err != nil {
				return err
			}
			continue
		}
		ref = &allocRef{Namespace: a.Namespace, JobID: a.JobID, Group: a.TaskGroup, ClientStatus: a.ClientStatus}
		if ref.JobCreateIndex, err = created.of(tx, a.Namespace, a.JobID); err != nil {
			return err
		}
		if err := c.move(ref, "", a.ClientStatus); err != nil {
			return err
		}
		if err := putRef(tx, a.ID, ref); err != nil {
			return err
		}
	}
	return c.flush()
}

// jobCreated is the create index of the job row an event's allocations
// last named (0: none), read once for a run of allocations of one job.
type jobCreated struct {
	ns, id string
	index  uint64
	known  bool
}

// of returns the create index of job id in ns, 0 when it has no row.
func (j *jobCreated) of(tx *projections.Tx, ns, id string) (uint64, error) {
	if j.known && j.ns == ns && j.id == id {
		return j.index, nil
	}
	r, err := tx.Get(Table, Key(ns, id))
	switch {
	case errors.Is(err, projections.ErrNotFound):
		r.CreateIndex = 0
	case err != nil:
		return 0, err
	}
	*j = jobCreated{ns: ns, id: id, index: r.CreateIndex, known: true}
	return j.index, nil
}

// applyStatuses counts the client statuses updates report in their jobs'
// summaries; an update that reports none changes nothing. status returns
// an update's alloc id and client status.
func applyStatuses[U any](tx *projections.Tx, updates []U, status func(*U) (id, clientStatus string)) error {
	c := newSummaries(tx)
	for i := range updates {
		id, st := status(&updates[i])
		if st == "" {
			continue
		}
		if err := c.update(id, st); err != nil {
			return err
		}
	}
	return c.flush()
}

// applyEvals sets the queued counts an evaluation reports on its job's
// groups.
func applyEvals(tx *projections.Tx, p *events.EvalsUpserted) error {
	c := newSummaries(tx)
	for i := range p.Evals {
		e := &p.Evals[i]
		if len(e.QueuedAllocations) == 0 {
			continue
		}
		s, err := c.get(e.Namespace, e.JobID)
		if err != nil {
			return err
		}
		if s == nil {
			continue
		}
		for tg, n := range e.QueuedAllocations {
			if g, ok := s.Groups.get(tg); ok {
				g.Queued = n
				s.Groups.set(tg, g)
			}
		}
	}
	return c.flush()
}
