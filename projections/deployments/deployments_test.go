package deployments_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand"
	"reflect"
	"strings"
	"testing"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/deployments"
	pt "github.com/ordoplane/ordo/projections/projectionstest"
)

func deployment(id, job string) events.Deployment {
	return events.Deployment{ID: id, Namespace: "default", JobID: job, JobVersion: 1, Status: events.DeploymentStatusRunning,
		TaskGroups: map[string]*events.DeploymentState{"web": {DesiredCanaries: 1, DesiredTotal: 3}, "api": {DesiredTotal: 1}},
		CreateTime: pt.LeaderTime}
}

func ids(t *testing.T, v projections.View, q deployments.Query) []string {
	t.Helper()
	var out []string
	if err := deployments.Scan(v, q, func(d *deployments.Deployment) error {
		out = append(out, d.ID)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestProjection(t *testing.T) {
	store := pt.OpenStore(t)
	f := pt.NewFSM(t, store, deployments.Projection{})
	v := projections.NewView(store)
	pt.ApplyOne(t, f, 1, pt.Entry(t, "c1", &events.DeploymentUpserted{Deployment: deployment("zz", "web")}))
	pt.ApplyOne(t, f, 2, pt.Entry(t, "c2", &events.DeploymentUpserted{Deployment: deployment("aa", "web")}))
	pt.ApplyOne(t, f, 3, pt.Entry(t, "c3", &events.DeploymentUpserted{Deployment: deployment("mm", "api")}))

	// N20: creation order, not id order.
	if got := ids(t, v, deployments.Query{}); !reflect.DeepEqual(got, []string{"zz", "aa", "mm"}) {
		t.Fatalf("Scan = %v", got)
	}
	if got := ids(t, v, deployments.Query{Reverse: true}); !reflect.DeepEqual(got, []string{"mm", "aa", "zz"}) {
		t.Fatalf("Scan(reverse) = %v", got)
	}
	if d, err := deployments.Latest(v, "default", "web"); err != nil || d.ID != "aa" {
		t.Fatalf("Latest(web) = %v, %v", d, err)
	}
	if _, err := deployments.Latest(v, "default", "none"); !errors.Is(err, projections.ErrNotFound) {
		t.Fatalf("Latest(none) = %v", err)
	}

	// Promote marks every group promoted; the status patch keeps the rest.
	pt.ApplyOne(t, f, 4, pt.Entry(t, "c4", &events.DeploymentStatusUpdated{ID: "aa", Status: events.DeploymentStatusRunning,
		StatusDescription: "Deployment is running", Promote: true}))
	aa, err := deployments.Get(v, "aa")
	if err != nil || !aa.TaskGroups["web"].Promoted || !aa.TaskGroups["api"].Promoted || aa.TaskGroups["web"].DesiredTotal != 3 ||
		aa.CreateIndex != 2 || aa.ModifyIndex != 4 || aa.StatusDescription != "Deployment is running" {
		t.Fatalf("promoted aa = %+v, %v", aa, err)
	}
	pt.ApplyOne(t, f, 5, pt.Entry(t, "c5", &events.DeploymentStatusUpdated{ID: "zz", Status: events.DeploymentStatusFailed},
		&events.DeploymentStatusUpdated{ID: "missing", Status: events.DeploymentStatusFailed}))
	if zz, _ := deployments.Get(v, "zz"); zz.Status != events.DeploymentStatusFailed || zz.Active() {
		t.Fatalf("failed zz = %+v", zz)
	}
	if _, err := deployments.Get(v, "missing"); !errors.Is(err, projections.ErrNotFound) {
		t.Fatalf("a status update created a deployment: %v", err)
	}
	b, err := json.Marshal(aa)
	if err != nil || !strings.Contains(string(b), `"Promoted":true`) || !strings.Contains(string(b), `"RequireProgressBy":"0001-01-01T00:00:00Z"`) {
		t.Fatalf("JSON = %s, %v", b, err)
	}
	if d, err := deployments.Resolve(v, "m"); err != nil || d.ID != "mm" {
		t.Fatalf("Resolve(m) = %v, %v", d, err)
	}
	pt.CheckRebuildEqualsLive(t, store, deployments.Projection{})
}

func TestRebuildEqualsLive(t *testing.T) {
	rng := rand.New(rand.NewSource(5))
	live := pt.OpenStore(t)
	f := pt.NewFSM(t, live, deployments.Projection{})
	for i := 1; i <= 150; i++ {
		id := fmt.Sprint("d", rng.Intn(20))
		var p events.Payload = &events.DeploymentUpserted{Deployment: deployment(id, fmt.Sprint("job", rng.Intn(4)))}
		if rng.Intn(2) == 0 {
			p = &events.DeploymentStatusUpdated{ID: id, Status: events.DeploymentStatusPaused, Promote: rng.Intn(2) == 0}
		}
		e := pt.Entry(t, fmt.Sprint("c", i), p)
		e.Time += int64(i)
		pt.ApplyOne(t, f, uint64(i), e)
	}
	v := projections.NewView(live)
	var n int
	_ = v.Scan(deployments.Table, "", false, func(string, projections.Row) error { n++; return nil })
	for _, table := range []string{deployments.ByJobTable, deployments.ByCreateTable} {
		var m int
		_ = v.Scan(table, "", false, func(string, projections.Row) error { m++; return nil })
		if m != n {
			t.Fatalf("%s has %d rows for %d deployments", table, m, n)
		}
	}
	pt.CheckRebuildEqualsLive(t, live, deployments.Projection{})
}
