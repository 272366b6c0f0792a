package deployments

import (
	"encoding/binary"
	"errors"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
)

// JobCreateTable holds, per job ("<namespace>\x00<job>\x00"), the index of
// the entry that first registered it since it was last purged: the job's
// CreateIndex, kept here so a deployment the scheduler creates gets its
// JobCreateIndex at apply from this projection's own tables.
const JobCreateTable = "deployments_job_create"

// trackJob records the create index of the job an entry registers or
// purges; other events change nothing.
func trackJob(tx *projections.Tx, ev *events.Event) error {
	key := JobKey(ev.Key(events.KindNamespace), ev.Key(events.KindJob))
	switch ev.Type {
	case "JobRegistered":
		if _, err := tx.Get(JobCreateTable, key); !errors.Is(err, projections.ErrNotFound) {
			return err
		}
		return tx.Put(JobCreateTable, key, binary.BigEndian.AppendUint64(nil, tx.Index()))
	case "JobDeregistered":
		p, err := events.DecodeIf(ev, "JobDeregistered")
		if err != nil || p == nil || !p.(*events.JobDeregistered).Purge {
			return err
		}
		_, err = tx.Delete(JobCreateTable, key)
		return err
	}
	return nil
}

// jobCreateIndex returns the create index of job ns/id as trackJob
// recorded it, 0 when the job is unknown.
func jobCreateIndex(tx *projections.Tx, ns, id string) (uint64, error) {
	r, err := tx.Get(JobCreateTable, JobKey(ns, id))
	if errors.Is(err, projections.ErrNotFound) || (err == nil && len(r.Value) != 8) {
		return 0, nil
	} else if err != nil {
		return 0, err
	}
	return binary.BigEndian.Uint64(r.Value), nil
}
