package httpapi

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/allocs"
	"github.com/ordoplane/ordo/projections/jobs"
)

// allocJobTables are what an allocation with its job is read from: its
// index covers a change of the job (its status, a version marked stable)
// as well as of the allocation, so a read at that index gives the same
// answer.
var allocJobTables = []string{allocs.Table, jobs.Table, jobs.VersionsTable, jobs.SummaryTable}

// allocWithJob is an allocation as Nomad's GET /v1/allocation/{id} and
// /v1/node/{id}/allocations answer it: with its Job, the version it runs
// (nil when that version is no longer kept), which the nomad CLI's alloc
// logs, restart and exec read.
type allocWithJob struct {
	*allocs.Alloc
	Job *jobs.Job
}

// MarshalJSON implements json.Marshaler: the allocation's own JSON with
// a Job member.
func (a allocWithJob) MarshalJSON() ([]byte, error) {
	b, err := json.Marshal(a.Alloc)
	if err != nil {
		return nil, err
	}
	j, err := json.Marshal(a.Job)
	if err != nil {
		return nil, fmt.Errorf("encode job of allocation %s: %w", a.ID, err)
	}
	if len(b) < 2 || b[len(b)-1] != '}' {
		return nil, fmt.Errorf("encode allocation %s: not an object", a.ID)
	}
	out := append(b[:len(b)-1:len(b)-1], `,"Job":`...)
	out = append(out, j...)
	return append(out, '}'), nil
}

// withJob returns a with the job version it runs.
func withJob(v projections.View, a *allocs.Alloc) (allocWithJob, error) {
	j, err := jobs.GetVersion(v, a.Namespace, a.JobID, a.JobVersion)
	if err != nil && !errors.Is(err, projections.ErrNotFound) {
		return allocWithJob{}, fmt.Errorf("job of allocation %s: %w", a.ID, err)
	}
	return allocWithJob{Alloc: a, Job: j}, nil
}

// withJobs returns each of list with its job version, reading each
// version once.
func withJobs(v projections.View, list []*allocs.Alloc) ([]allocWithJob, error) {
	type key struct {
		ns, id string
		ver    uint64
	}
	seen := map[key]*jobs.Job{}
	out := make([]allocWithJob, 0, len(list))
	for _, a := range list {
		k := key{a.Namespace, a.JobID, a.JobVersion}
		j, ok := seen[k]
		if !ok {
			aw, err := withJob(v, a)
			if err != nil {
				return nil, err
			}
			j, seen[k] = aw.Job, aw.Job
		}
		out = append(out, allocWithJob{Alloc: a, Job: j})
	}
	return out, nil
}
