package deployments

import (
	"errors"
	"fmt"
	"slices"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/order"
)

// The projection's tables.
const (
	// Table holds one row per deployment, keyed by id.
	Table = "deployments"
	// ByJobTable indexes deployments by "<namespace>\x00<job>\x00<id>".
	ByJobTable = "deployments_by_job"
	// ByCreateTable indexes deployments by order.Key(create index, id).
	ByCreateTable = "deployments_by_create"
)

// Deployment is a deployment as readers see it.
type Deployment struct {
	events.Deployment
	CreateIndex uint64
	ModifyIndex uint64
}

// Projection maintains the deployments tables.
type Projection struct{}

var _ projections.Projection = Projection{}

// Name implements projections.Projection.
func (Projection) Name() string { return "deployments" }

// Version implements projections.Projection. 2: a deployment created
// with its job's registration records the registration's index as its
// JobModifyIndex and JobSpecModifyIndex (and, for a new job, its
// JobCreateIndex); a status update may promote some groups and restart
// their progress deadlines. 3: a deployment created without a
// JobCreateIndex (by the scheduler) gets its job's, from JobCreateTable.
func (Projection) Version() int { return 3 }

// Tables implements projections.Projection.
func (Projection) Tables() []string {
	return []string{Table, ByJobTable, ByCreateTable, JobCreateTable}
}

// Apply implements projections.Projection.
func (Projection) Apply(tx *projections.Tx, ev *events.Event) error {
	if ev.Type == "JobRegistered" || ev.Type == "JobDeregistered" {
		return trackJob(tx, ev)
	}
	p, err := events.DecodeIf(ev, "DeploymentUpserted", "DeploymentStatusUpdated", "DeploymentsDeleted")
	if p == nil || err != nil {
		return err
	}
	switch p := p.(type) {
	case *events.DeploymentUpserted:
		return upsert(tx, &p.Deployment)
	case *events.DeploymentStatusUpdated:
		return updateStatus(tx, p)
	case *events.DeploymentsDeleted:
		for _, id := range p.IDs {
			if err := remove(tx, id); err != nil {
				return err
			}
		}
	}
	return nil
}

// remove deletes a deployment and its index rows; a missing one changes
// nothing (so no table index moves, N15).
func remove(tx *projections.Tx, id string) error {
	d, err := lookup(tx, id)
	if err != nil || d == nil {
		return err
	}
	for _, k := range []struct{ table, key string }{
		{Table, id},
		{ByJobTable, JobKey(d.Namespace, d.JobID) + id},
		{ByCreateTable, order.Key(d.CreateIndex, id)},
	} {
		if _, err := tx.Delete(k.table, k.key); err != nil {
			return err
		}
	}
	return nil
}

// JobKey returns the ByJobTable prefix of a job's deployments.
func JobKey(namespace, job string) string { return namespace + "\x00" + job + "\x00" }

func lookup(tx *projections.Tx, id string) (*Deployment, error) {
	d, err := Get(tx.View, id)
	if errors.Is(err, projections.ErrNotFound) {
		return nil, nil
	}
	return d, err
}

func put(tx *projections.Tx, d *events.Deployment) error {
	b, err := events.Marshal(d)
	if err != nil {
		return fmt.Errorf("encode deployment %q: %w", d.ID, err)
	}
	return tx.Put(Table, d.ID, b)
}

func upsert(tx *projections.Tx, d *events.Deployment) error {
	if d.ID == "" {
		return nil
	}
	old, err := lookup(tx, d.ID)
	if err != nil {
		return err
	}
	if old == nil && d.Status == events.DeploymentStatusInitializing {
		// Created in the entry that registers its job version: the job's
		// indexes are this entry's, which the command could not know.
		c := *d
		d = &c
		if d.JobModifyIndex == 0 {
			d.JobModifyIndex = tx.Index()
		}
		if d.JobSpecModifyIndex == 0 {
			d.JobSpecModifyIndex = d.JobModifyIndex
		}
		if d.JobCreateIndex == 0 {
			d.JobCreateIndex = tx.Index()
		}
	} else if old == nil && d.JobCreateIndex == 0 {
		// Created by the scheduler, which does not know the job's create
		// index: the job's, as Nomad's deployment carries it.
		idx, err := jobCreateIndex(tx, d.Namespace, d.JobID)
		if err != nil {
			return err
		}
		c := *d
		c.JobCreateIndex = idx
		d = &c
	}
	if err := put(tx, d); err != nil {
		return err
	}
	if old == nil {
		if err := tx.Put(ByCreateTable, order.Key(tx.Index(), d.ID), nil); err != nil {
			return err
		}
	} else if old.Namespace == d.Namespace && old.JobID == d.JobID {
		return nil
	} else if _, err := tx.Delete(ByJobTable, JobKey(old.Namespace, old.JobID)+d.ID); err != nil {
		return err
	}
	return tx.Put(ByJobTable, JobKey(d.Namespace, d.JobID)+d.ID, nil)
}

func updateStatus(tx *projections.Tx, p *events.DeploymentStatusUpdated) error {
	d, err := lookup(tx, p.ID)
	if err != nil || d == nil {
		return err
	}
	if p.Status != "" {
		d.Status = p.Status
	}
	d.StatusDescription = p.StatusDescription
	if p.Promote {
		for name, g := range d.TaskGroups {
			if g != nil && (len(p.Groups) == 0 || slices.Contains(p.Groups, name)) {
				g.Promoted = true
			}
		}
	}
	for name, by := range p.RequireProgressBy {
		if g := d.TaskGroups[name]; g != nil {
			g.RequireProgressBy = by
		}
	}
	d.ModifyTime = tx.Time()
	return put(tx, &d.Deployment)
}

func fromRow(r projections.Row) (*Deployment, error) {
	d := &Deployment{CreateIndex: r.CreateIndex, ModifyIndex: r.ModifyIndex}
	if err := msgpack.Unmarshal(r.Value, &d.Deployment); err != nil {
		return nil, fmt.Errorf("decode deployment row: %w", err)
	}
	return d, nil
}
