package jobs

import (
	"errors"
	"fmt"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
)

// deploymentRef is what DeploymentsTable keeps of a deployment: the job
// version it rolls out.
type deploymentRef struct {
	Namespace string `msgpack:"ns"`
	JobID     string `msgpack:"job"`
	Version   uint64 `msgpack:"v"`
}

// applyDeployment remembers which job version a deployment rolls out, and
// marks that version stable when the deployment arrives successful.
func applyDeployment(tx *projections.Tx, d *events.Deployment) error {
	ref := deploymentRef{Namespace: d.Namespace, JobID: d.JobID, Version: d.JobVersion}
	if old, err := getDeploymentRef(tx.View, d.ID); err != nil {
		return err
	} else if old == nil || *old != ref {
		b, err := msgpack.Marshal(&ref)
		if err != nil {
			return fmt.Errorf("encode deployment %q: %w", d.ID, err)
		}
		if err := tx.Put(DeploymentsTable, d.ID, b); err != nil {
			return err
		}
	}
	if d.Status == events.DeploymentStatusSuccessful {
		return markStable(tx, ref)
	}
	return nil
}

// applyDeploymentStatus marks the deployment's job version stable when the
// deployment succeeds, as Nomad does.
func applyDeploymentStatus(tx *projections.Tx, p *events.DeploymentStatusUpdated) error {
	if p.Status != events.DeploymentStatusSuccessful {
		return nil
	}
	ref, err := getDeploymentRef(tx.View, p.ID)
	if err != nil || ref == nil {
		return err
	}
	return markStable(tx, *ref)
}

func getDeploymentRef(v projections.View, id string) (*deploymentRef, error) {
	r, err := v.Get(DeploymentsTable, id)
	if errors.Is(err, projections.ErrNotFound) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	var ref deploymentRef
	if err := msgpack.Unmarshal(r.Value, &ref); err != nil {
		return nil, fmt.Errorf("decode deployment %q: %w", id, err)
	}
	return &ref, nil
}

// markStable sets Stable on the version row; the current job row is left
// alone (its modify index is the job's JobModifyIndex, which stability
// must not move): Get reads stability from the version row.
func markStable(tx *projections.Tx, ref deploymentRef) error {
	return setStable(tx, ref, true)
}

// setStable sets Stable on the version row ref names to stable.
func setStable(tx *projections.Tx, ref deploymentRef, stable bool) error {
	key := VersionKey(ref.Namespace, ref.JobID, ref.Version)
	r, err := tx.Get(VersionsTable, key)
	if errors.Is(err, projections.ErrNotFound) {
		return nil // purged, or its version no longer kept
	} else if err != nil {
		return err
	}
	spec, err := decodeJob(r.Value)
	if err != nil {
		return err
	}
	if spec.Stable == stable {
		return nil
	}
	spec.Stable = stable
	b, err := events.Marshal(&events.JobRegistered{Job: *spec})
	if err != nil {
		return fmt.Errorf("encode job %q: %w", ref.JobID, err)
	}
	return tx.Put(VersionsTable, key, b)
}

// withStable sets j's Stable from its version row.
func withStable(v projections.View, j *Job) error {
	r, err := v.Get(VersionsTable, VersionKey(j.Namespace, j.ID, j.Version))
	if errors.Is(err, projections.ErrNotFound) {
		return nil
	} else if err != nil {
		return err
	}
	spec, err := decodeJob(r.Value)
	if err != nil {
		return err
	}
	j.Stable = spec.Stable
	return nil
}
