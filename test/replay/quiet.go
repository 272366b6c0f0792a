package replay

import (
	"testing"
	"time"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/allocs"
	"github.com/ordoplane/ordo/projections/deployments"
	"github.com/ordoplane/ordo/projections/jobs"
	"github.com/ordoplane/ordo/storage/kv"
)

// WaitQuiet waits as WaitSettled does and, besides, until the deployment
// watcher has recorded what it can without a client or a deadline
// (DeploymentsBusy), so nothing is appended until the test acts. It
// returns the applied index it was quiet at.
func WaitQuiet(t testing.TB, store *kv.Store, n *projections.Notifier, timeout time.Duration) uint64 {
	t.Helper()
	deadline := time.After(timeout)
	for {
		_, wake := n.Applied()
		at := WaitSettled(t, store, n, timeout)
		snap := store.Snapshot()
		v := projections.NewView(snap)
		busy, err := DeploymentsBusy(v)
		applied, aerr := v.AppliedIndex()
		snap.Close()
		if err == nil {
			err = aerr
		}
		if err != nil {
			t.Fatal(err)
		}
		if !busy && applied == at {
			return at
		}
		select {
		case <-wake:
		case <-deadline:
			t.Fatal("the deployment watcher never caught up")
		}
	}
}

// DeploymentsBusy reports whether the deployment watcher still has
// something to record without a client or a deadline: a deployment not
// yet running, a running one for an older job version (to cancel), or one
// whose placed counts lag its allocations.
func DeploymentsBusy(v projections.View) (bool, error) {
	busy := false
	err := deployments.Scan(v, deployments.Query{}, func(d *deployments.Deployment) error {
		switch d.Status {
		case events.DeploymentStatusInitializing, events.DeploymentStatusPending:
			busy = true
			return nil
		case events.DeploymentStatusRunning:
		default:
			return nil
		}
		j, err := jobs.Get(v, d.Namespace, d.JobID)
		if err != nil {
			return err
		}
		if j.Version != d.JobVersion {
			busy = true
			return nil
		}
		list, err := allocs.ByJob(v, d.Namespace, d.JobID)
		if err != nil {
			return err
		}
		placed := map[string]int{}
		for _, a := range list {
			if a.DeploymentID == d.ID {
				placed[a.TaskGroup]++
			}
		}
		for tg, st := range d.TaskGroups {
			busy = busy || st.PlacedAllocs != placed[tg]
		}
		return nil
	})
	return busy, err
}
