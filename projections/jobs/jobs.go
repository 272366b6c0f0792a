package jobs

import (
	"errors"
	"fmt"
	"strings"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
)

// The tables of the projection.
const (
	// Table holds the current version of every job, keyed Key(ns, id).
	Table = "jobs"
	// VersionsTable holds every version, keyed VersionKey(ns, id, version).
	VersionsTable = "job_versions"
	// SummaryTable holds one Summary per job, keyed Key(ns, id).
	SummaryTable = "job_summaries"
	// AllocsTable holds, per allocation id, what the summary counts it as.
	AllocsTable = "job_summary_allocs"
	// DeploymentsTable holds, per deployment id, the job version it rolls
	// out, so a deployment's success marks that version stable.
	DeploymentsTable = "job_deployments"
)

// The statuses of a job, as Nomad reports them.
const (
	StatusPending = "pending"
	StatusRunning = "running"
	StatusDead    = "dead"
)

// Key returns the row key of job id in namespace ns.
func Key(ns, id string) string { return ns + "\x00" + id }

// VersionKey returns the VersionsTable key of version v of job id in ns:
// the version zero-padded to 20 digits, so keys sort by version.
func VersionKey(ns, id string, v uint64) string {
	return Key(ns, id) + "\x00" + fmt.Sprintf("%020d", v)
}

// Job is a job as readers see it: the spec at its current version and the
// server's bookkeeping, Nomad's api.Job in JSON.
type Job struct {
	events.Job
	// Status is pending, running or dead, derived from the summary.
	Status            string
	StatusDescription string
	CreateIndex       uint64
	ModifyIndex       uint64
	// JobModifyIndex is the index of the last change to the spec.
	JobModifyIndex uint64
}

// Periodic reports whether the job launches children on a schedule.
func Periodic(j *events.Job) bool { return j.Periodic != nil && j.Periodic.Enabled }

// Parameterized reports whether the job is a template run by dispatch.
func Parameterized(j *events.Job) bool { return j.ParameterizedJob != nil && !j.Dispatched }

// Stub is a job as lists show it: Nomad's api.JobListStub.
type Stub struct {
	ID                string
	ParentID          string
	Name              string
	Namespace         string
	Datacenters       []string
	NodePool          string
	Type              string
	Priority          int
	Periodic          bool
	ParameterizedJob  bool
	Stop              bool
	Status            string
	StatusDescription string
	JobSummary        *Summary
	CreateIndex       uint64
	ModifyIndex       uint64
	JobModifyIndex    uint64
	SubmitTime        int64
	Meta              map[string]string `json:",omitempty"`
}

// Stub returns the job's list view with its summary s (nil when none).
func (j *Job) Stub(s *Summary) *Stub {
	return &Stub{ID: j.ID, ParentID: j.ParentID, Name: j.Name, Namespace: j.Namespace, Datacenters: j.Datacenters,
		NodePool: nodePoolOf(j.NodePool), Type: j.Type, Priority: j.Priority, Periodic: Periodic(&j.Job), ParameterizedJob: Parameterized(&j.Job),
		Stop: j.Stop, Status: j.Status, StatusDescription: j.StatusDescription, JobSummary: s,
		CreateIndex: j.CreateIndex, ModifyIndex: j.ModifyIndex, JobModifyIndex: j.JobModifyIndex,
		SubmitTime: j.SubmitTime, Meta: j.Meta}
}

// nodePoolOf is the pool a job runs in, "default" when it names none.
func nodePoolOf(pool string) string {
	if pool == "" {
		return "default"
	}
	return pool
}

// Projection maintains the jobs tables.
type Projection struct{}

var _ projections.Projection = Projection{}

// Name implements projections.Projection.
func (Projection) Name() string { return "jobs" }

// Version implements projections.Projection. 3: a summary's groups are
// encoded in key order (version 2 wrote them in Go's random map order, so
// a job of several groups could encode differently live and rebuilt).
func (Projection) Version() int { return 3 }

// Tables implements projections.Projection.
func (Projection) Tables() []string {
	return []string{Table, VersionsTable, SummaryTable, AllocsTable, DeploymentsTable}
}

// Apply implements projections.Projection.
func (Projection) Apply(tx *projections.Tx, ev *events.Event) error {
	p, err := events.DecodeIf(ev, "JobRegistered", "JobDeregistered", "EvalsUpserted",
		"AllocsPlaced", "AllocsDesiredUpdated", "AllocsClientUpdated", "AllocsDeleted",
		"DeploymentUpserted", "DeploymentStatusUpdated", "JobStabilityUpdated")
	if p == nil || err != nil {
		return err
	}
	switch p := p.(type) {
	case *events.JobRegistered:
		// The row is the payload at its current version: a current event's
		// bytes need no encoding again.
		raw, err := events.Upcast(ev)
		if err != nil {
			return err
		}
		return applyRegistered(tx, &p.Job, raw)
	case *events.JobDeregistered:
		return applyDeregistered(tx, p)
	case *events.EvalsUpserted:
		return applyEvals(tx, p)
	case *events.AllocsPlaced:
		return applyPlaced(tx, p)
	case *events.AllocsDesiredUpdated:
		return applyStatuses(tx, p.Updates, func(u *events.AllocDesiredUpdate) (string, string) { return u.ID, u.ClientStatus })
	case *events.AllocsClientUpdated:
		return applyStatuses(tx, p.Updates, func(u *events.AllocClientUpdate) (string, string) { return u.ID, u.ClientStatus })
	case *events.DeploymentUpserted:
		return applyDeployment(tx, &p.Deployment)
	case *events.DeploymentStatusUpdated:
		return applyDeploymentStatus(tx, p)
	case *events.JobStabilityUpdated: // an operator's Job.Stable
		return setStable(tx, deploymentRef{Namespace: p.Namespace, JobID: p.ID, Version: p.Version}, p.Stable)
	case *events.AllocsDeleted:
		for _, id := range p.IDs {
			if _, err := tx.Delete(AllocsTable, id); err != nil {
				return err
			}
		}
	}
	return nil
}

// putJob writes job as the current version and as its version row.
func putJob(tx *projections.Tx, job *events.Job) error {
	b, err := events.Marshal(&events.JobRegistered{Job: *job})
	if err != nil {
		return fmt.Errorf("encode job %q: %w", job.ID, err)
	}
	return putJobRow(tx, job, b)
}

// putJobRow writes b, job's JobRegistered encoded, as putJob does.
func putJobRow(tx *projections.Tx, job *events.Job, b []byte) error {
	if err := tx.Put(Table, Key(job.Namespace, job.ID), b); err != nil {
		return err
	}
	return tx.Put(VersionsTable, VersionKey(job.Namespace, job.ID, job.Version), b)
}

// applyRegistered applies a JobRegistered of job, raw its payload at the
// current version (the row's bytes).
func applyRegistered(tx *projections.Tx, job *events.Job, raw []byte) error {
	if err := putJobRow(tx, job, raw); err != nil {
		return err
	}
	row, err := tx.Get(Table, Key(job.Namespace, job.ID))
	if err != nil {
		return err
	}
	s, err := txSummary(tx, job.Namespace, job.ID)
	var was string
	switch {
	case errors.Is(err, projections.ErrNotFound):
		s = &summaryRow{JobCreateIndex: row.CreateIndex}
	case err != nil:
		return err
	default:
		was = s.Status
	}
	for _, tg := range job.TaskGroups {
		if _, ok := s.Groups.get(tg.Name); !ok {
			s.Groups.set(tg.Name, TaskGroupSummary{})
		}
	}
	if (Periodic(job) || Parameterized(job)) && s.Children == nil {
		s.Children = &Children{}
	}
	return saveSummary(tx, job, s, was)
}

func applyDeregistered(tx *projections.Tx, p *events.JobDeregistered) error {
	job, err := Get(tx.View, p.Namespace, p.ID)
	if errors.Is(err, projections.ErrNotFound) {
		return nil
	} else if err != nil {
		return err
	}
	if p.Purge {
		return purge(tx, &job.Job)
	}
	if job.Stop {
		return nil
	}
	spec := job.Job
	spec.Stop = true
	spec.Version++
	spec.SubmitTime = tx.Time()
	if err := putJob(tx, &spec); err != nil {
		return err
	}
	s, err := txSummary(tx, spec.Namespace, spec.ID)
	if errors.Is(err, projections.ErrNotFound) {
		return nil
	} else if err != nil {
		return err
	}
	return saveSummary(tx, &spec, s, s.Status)
}

// purge removes the job, its versions and its summary, and takes it out of
// its parent's children.
func purge(tx *projections.Tx, job *events.Job) error {
	key := Key(job.Namespace, job.ID)
	if _, err := tx.Delete(Table, key); err != nil {
		return err
	}
	var versions []string
	err := tx.Scan(VersionsTable, key+"\x00", false, func(k string, _ projections.Row) error {
		versions = append(versions, k)
		return nil
	})
	if err != nil {
		return err
	}
	for _, k := range versions {
		if _, err := tx.Delete(VersionsTable, k); err != nil {
			return err
		}
	}
	s, err := txSummary(tx, job.Namespace, job.ID)
	if errors.Is(err, projections.ErrNotFound) {
		return nil
	} else if err != nil {
		return err
	}
	if _, err := tx.Delete(SummaryTable, key); err != nil {
		return err
	}
	return moveChild(tx, job, s.Status, "")
}

// moveChild moves a child job from status from to status to in its
// parent's children counts; "" is no status (created or purged).
func moveChild(tx *projections.Tx, child *events.Job, from, to string) error {
	if child.ParentID == "" || from == to {
		return nil
	}
	ps, err := txSummary(tx, child.Namespace, child.ParentID)
	if errors.Is(err, projections.ErrNotFound) {
		return nil
	} else if err != nil {
		return err
	}
	c := Children{}
	if ps.Children != nil {
		c = *ps.Children
	}
	c.add(from, -1)
	c.add(to, 1)
	ps.Children = &c
	return writeSummary(tx, child.Namespace, child.ParentID, ps)
}

// Row decoding.

func decodeJob(b []byte) (*events.Job, error) {
	var p events.JobRegistered
	if err := events.Unmarshal(b, &p); err != nil { // straight from the bytes
		return nil, fmt.Errorf("decode job row: %w", err)
	}
	return &p.Job, nil
}

// jobHead is the part of a job row a summary's status needs
// (deriveStatus, moveChild): decoding it skips the task groups, which is
// most of the row and of the cost of decoding it.
type jobHead struct {
	Job struct {
		ID               string                   `msgpack:"id"`
		Namespace        string                   `msgpack:"ns"`
		Periodic         *events.PeriodicConfig   `msgpack:"per,omitempty"`
		ParameterizedJob *events.ParameterizedJob `msgpack:"param,omitempty"`
		Stop             bool                     `msgpack:"stop,omitempty"`
		ParentID         string                   `msgpack:"pid,omitempty"`
		Dispatched       bool                     `msgpack:"disp,omitempty"`
	} `msgpack:"job"`
}

// headCodec decodes job rows' heads.
var headCodec = projections.Codec[jobHead]{Name: "job head"}

// job returns a Job holding the head's fields alone.
func (h *jobHead) job() *events.Job {
	j := &h.Job
	return &events.Job{ID: j.ID, Namespace: j.Namespace, Periodic: j.Periodic, ParameterizedJob: j.ParameterizedJob,
		Stop: j.Stop, ParentID: j.ParentID, Dispatched: j.Dispatched}
}

func fromRow(r projections.Row) (*Job, error) {
	spec, err := decodeJob(r.Value)
	if err != nil {
		return nil, err
	}
	return &Job{Job: *spec, CreateIndex: r.CreateIndex, ModifyIndex: r.ModifyIndex, JobModifyIndex: r.ModifyIndex}, nil
}

// splitKey returns the namespace and id of a Table key.
func splitKey(k string) (ns, id string) {
	ns, id, _ = strings.Cut(k, "\x00")
	return ns, id
}
