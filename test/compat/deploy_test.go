package compat

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
)

// fakeClient plays the client agent in the deployment tests: it follows a
// job's allocations and deployments with blocking queries and reports
// allocations running and healthy (or not) through the client API, as a
// Nomad client does once an allocation passes (or fails) its health checks.
type fakeClient struct {
	t      *testing.T
	c      *api.Client
	addr   string
	job    string
	allocs uint64 // the index the last allocation query answered at
	deps   uint64 // the same for deployments
}

// guard bounds every wait; the waits themselves are blocking queries.
const guard = 30 * time.Second

// waitAllocs blocks until cond holds on the job's allocations.
func (fc *fakeClient) waitAllocs(what string, cond func([]*api.AllocationListStub) bool) []*api.AllocationListStub {
	fc.t.Helper()
	deadline := time.Now().Add(guard)
	for {
		list, qm, err := fc.c.Jobs().Allocations(fc.job, true, &api.QueryOptions{WaitIndex: fc.allocs, WaitTime: 2 * time.Second})
		if err != nil {
			fc.t.Fatal(err)
		}
		if cond(list) {
			return list
		}
		fc.allocs = qm.LastIndex
		if time.Now().After(deadline) {
			fc.t.Fatalf("timed out waiting for %s; allocations:\n%s", what, describe(list))
		}
	}
}

// waitDeployment blocks until the deployment of the job's version
// satisfies cond.
func (fc *fakeClient) waitDeployment(version uint64, what string, cond func(*api.Deployment) bool) *api.Deployment {
	fc.t.Helper()
	deadline := time.Now().Add(guard)
	for {
		list, qm, err := fc.c.Deployments().List(&api.QueryOptions{WaitIndex: fc.deps, WaitTime: 2 * time.Second,
			Filter: fmt.Sprintf("JobID == %q", fc.job)})
		if err != nil {
			fc.t.Fatal(err)
		}
		var d *api.Deployment
		for _, x := range list {
			if x.JobVersion == version {
				d = x // the latest of the version: lists are oldest first
			}
		}
		if d != nil && cond(d) {
			return d
		}
		fc.deps = qm.LastIndex
		if time.Now().After(deadline) {
			fc.t.Fatalf("timed out waiting for %s: %+v", what, d)
		}
	}
}

// report says alloc a is running, healthy or not, keeping its canary flag.
func (fc *fakeClient) report(a *api.AllocationListStub, healthy bool) {
	fc.t.Helper()
	canary := a.DeploymentStatus != nil && a.DeploymentStatus.Canary
	body := fmt.Sprintf(`{"Allocs":[{"ID":%q,"ClientStatus":"running","DeploymentStatus":{"Healthy":%v,"Timestamp":%d,"Canary":%v}}]}`,
		a.ID, healthy, time.Now().UnixNano(), canary)
	r, err := http.NewRequest(http.MethodPut, "http://"+fc.addr+"/v1/client/"+a.NodeID+"/allocs", strings.NewReader(body))
	if err != nil {
		fc.t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(r)
	if err != nil {
		fc.t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		fc.t.Fatalf("report alloc %s: %s", a.ID, resp.Status)
	}
}

// reportAll reports every live allocation not yet reported healthy.
func (fc *fakeClient) reportAll() {
	fc.t.Helper()
	for _, a := range live(fc.waitAllocs("allocations", func([]*api.AllocationListStub) bool { return true })) {
		if !isHealthy(a) {
			fc.report(a, true)
		}
	}
}

func isHealthy(a *api.AllocationListStub) bool {
	return a.DeploymentStatus != nil && a.DeploymentStatus.Healthy != nil && *a.DeploymentStatus.Healthy
}

func isCanary(a *api.AllocationListStub) bool {
	return a.DeploymentStatus != nil && a.DeploymentStatus.Canary
}

// live returns the allocations the servers want running.
func live(list []*api.AllocationListStub) []*api.AllocationListStub {
	var out []*api.AllocationListStub
	for _, a := range list {
		if a.DesiredStatus == "run" {
			out = append(out, a)
		}
	}
	return out
}

// byVersion counts live allocations per job version.
func byVersion(list []*api.AllocationListStub) map[uint64]int {
	out := map[uint64]int{}
	for _, a := range live(list) {
		out[a.JobVersion]++
	}
	return out
}

func describe(list []*api.AllocationListStub) string {
	var b strings.Builder
	for _, a := range list {
		fmt.Fprintf(&b, "  %s %s v%d %s/%s healthy=%v canary=%v\n", a.ID, a.Name, a.JobVersion, a.DesiredStatus, a.ClientStatus,
			isHealthy(a), isCanary(a))
	}
	return b.String()
}

// deployJob is a service job of count allocations with update strategy u,
// whose task sleeps for arg seconds (changing arg is a destructive update).
func deployJob(id string, count int, arg string, u *api.UpdateStrategy) *api.Job {
	job := serviceJob(id, count)
	job.Update = u
	job.TaskGroups[0].Tasks[0].SetConfig("args", []string{arg})
	return job
}

// A canary deployment end to end, with the nomad/api client and this test
// as the client agent: a new version of a job of count 3 with canary = 1
// and max_parallel = 1 places one canary beside the old allocations; it
// cannot be promoted before it is healthy; once promoted, the update rolls
// one allocation at a time, the deployment succeeds and the version is
// stable.
func TestCanaryDeploymentIsPromotedAndRolls(t *testing.T) {
	a, c := startDev(t)
	for i := range 3 {
		registerReadyNode(t, a.HTTPAddr(), fmt.Sprintf("node-%d", i), 4000, 8192)
	}
	fc := &fakeClient{t: t, c: c, addr: a.HTTPAddr(), job: "web"}
	update := &api.UpdateStrategy{MaxParallel: pointer(1), Canary: pointer(1), MinHealthyTime: pointer(time.Second),
		HealthyDeadline: pointer(time.Minute), ProgressDeadline: pointer(10 * time.Minute)}

	// Version 0: no canary for a first version; healthy, it succeeds.
	if _, _, err := c.Jobs().Register(deployJob("web", 3, "1000", update), nil); err != nil {
		t.Fatal(err)
	}
	fc.waitAllocs("3 allocations of version 0", func(l []*api.AllocationListStub) bool { return byVersion(l)[0] == 3 })
	fc.reportAll()
	fc.waitDeployment(0, "version 0 deployed", func(d *api.Deployment) bool { return d.Status == "successful" })

	// Version 1: one canary, the old allocations untouched.
	if _, _, err := c.Jobs().Register(deployJob("web", 3, "2000", update), nil); err != nil {
		t.Fatal(err)
	}
	list := fc.waitAllocs("a canary", func(l []*api.AllocationListStub) bool { return byVersion(l)[1] == 1 })
	if n := byVersion(list); n[0] != 3 || n[1] != 1 {
		t.Fatalf("after the canary: %v\n%s", n, describe(list))
	}
	var canary *api.AllocationListStub
	for _, x := range live(list) {
		if x.JobVersion == 1 {
			canary = x
		}
	}
	if !isCanary(canary) {
		t.Fatalf("the new allocation is no canary:\n%s", describe(list))
	}
	d := fc.waitDeployment(1, "the canary recorded", func(d *api.Deployment) bool {
		g := d.TaskGroups["web"]
		return g != nil && len(g.PlacedCanaries) == 1
	})
	if g := d.TaskGroups["web"]; g.PlacedCanaries[0] != canary.ID || g.DesiredCanaries != 1 || g.Promoted || d.Status != "running" {
		t.Fatalf("deployment %+v group %+v", d, g)
	}

	// Not before the canary is healthy.
	if _, _, err := c.Deployments().PromoteAll(d.ID, nil); err == nil || !strings.Contains(err.Error(), "not all canaries are healthy") {
		t.Fatalf("promoting an unhealthy canary: %v", err)
	}
	fc.report(canary, true)
	d = fc.waitDeployment(1, "the canary healthy", func(d *api.Deployment) bool { return d.TaskGroups["web"].HealthyAllocs == 1 })
	if d.StatusDescription != "Deployment is running but requires manual promotion" {
		t.Fatalf("waiting for promotion: %q", d.StatusDescription)
	}
	// Healthy, it still waits for promotion: nothing is replaced.
	if n := byVersion(fc.waitAllocs("allocations", func([]*api.AllocationListStub) bool { return true })); n[0] != 3 || n[1] != 1 {
		t.Fatalf("before promotion: %v", n)
	}
	pr, _, err := c.Deployments().PromoteAll(d.ID, nil)
	if err != nil || pr.EvalID == "" {
		t.Fatalf("PromoteAll = %+v, %v", pr, err)
	}

	// Rolling: the canary takes the slot it is named after, and the rest
	// are replaced one at a time, each once the one before is healthy.
	rolled := 0
	for step := 0; ; step++ {
		list := fc.waitAllocs("the next replacement, or the end", func(l []*api.AllocationListStub) bool {
			n := byVersion(l)
			return n[0]+n[1] == 3 && (len(waiting(l)) > 0 || n[1] == 3)
		})
		w := waiting(list)
		if len(w) > 1 {
			t.Fatalf("%d new allocations unhealthy at once with max_parallel 1:\n%s", len(w), describe(list))
		}
		if len(w) == 0 {
			break // all three of version 1, healthy
		}
		if step == 3 {
			t.Fatalf("more replacements than outdated allocations:\n%s", describe(list))
		}
		fc.report(w[0], true)
		rolled++
	}
	if rolled != 2 {
		t.Fatalf("%d allocations replaced after the canary, want 2", rolled)
	}
	d = fc.waitDeployment(1, "version 1 deployed", func(d *api.Deployment) bool { return d.Status == "successful" })
	if g := d.TaskGroups["web"]; !g.Promoted || g.HealthyAllocs != 3 || d.StatusDescription != "Deployment completed successfully" {
		t.Fatalf("deployment %+v group %+v", d, g)
	}
	// Version 1 is stable: its deployment succeeded; version 0's canary
	// slot holder stopped and the canary kept running.
	list = fc.waitAllocs("allocations", func([]*api.AllocationListStub) bool { return true })
	for _, x := range live(list) {
		if x.JobVersion != 1 {
			t.Fatalf("an old allocation still runs:\n%s", describe(list))
		}
	}
	found := false
	for _, x := range live(list) {
		found = found || x.ID == canary.ID
	}
	if !found {
		t.Fatalf("the promoted canary was replaced:\n%s", describe(list))
	}
	// The job's deployment endpoints and its versions' stability, as the
	// nomad/api client reads them.
	latest, _, err := c.Jobs().LatestDeployment("web", nil)
	if err != nil || latest == nil || latest.ID != d.ID {
		t.Fatalf("latest deployment = %+v, %v; want %s", latest, err, d.ID)
	}
	deps, _, err := c.Jobs().Deployments("web", false, nil)
	if err != nil || len(deps) != 2 || deps[0].ID != d.ID || deps[1].JobVersion != 0 {
		t.Fatalf("job deployments = %+v, %v", deps, err)
	}
	versions, _, _, err := c.Jobs().Versions("web", false, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range versions {
		if v.Stable == nil || !*v.Stable {
			t.Fatalf("version %d not stable after its deployment succeeded", *v.Version)
		}
	}
	job, _, err := c.Jobs().Info("web", nil)
	if err != nil || job.Stable == nil || !*job.Stable || *job.Version != 1 {
		t.Fatalf("job = version %v stable %v, %v", job.Version, job.Stable, err)
	}
}

// waiting returns the live allocations of the newest version not yet
// reported healthy.
func waiting(list []*api.AllocationListStub) []*api.AllocationListStub {
	var out []*api.AllocationListStub
	for _, a := range live(list) {
		if a.JobVersion == 1 && !isHealthy(a) {
			out = append(out, a)
		}
	}
	return out
}

// auto_revert end to end: an allocation of a new version reported
// unhealthy fails its deployment, and the job is registered again at its
// latest stable version, whose deployment then succeeds.
func TestUnhealthyDeploymentRevertsToStableVersion(t *testing.T) {
	a, c := startDev(t)
	for i := range 2 {
		registerReadyNode(t, a.HTTPAddr(), fmt.Sprintf("node-%d", i), 4000, 8192)
	}
	fc := &fakeClient{t: t, c: c, addr: a.HTTPAddr(), job: "api"}
	update := &api.UpdateStrategy{MaxParallel: pointer(1), AutoRevert: pointer(true), MinHealthyTime: pointer(time.Second),
		HealthyDeadline: pointer(time.Minute), ProgressDeadline: pointer(10 * time.Minute)}
	if _, _, err := c.Jobs().Register(deployJob("api", 2, "1000", update), nil); err != nil {
		t.Fatal(err)
	}
	fc.waitAllocs("2 allocations", func(l []*api.AllocationListStub) bool { return byVersion(l)[0] == 2 })
	fc.reportAll()
	fc.waitDeployment(0, "version 0 deployed (stable)", func(d *api.Deployment) bool { return d.Status == "successful" })

	if _, _, err := c.Jobs().Register(deployJob("api", 2, "2000", update), nil); err != nil {
		t.Fatal(err)
	}
	list := fc.waitAllocs("a replacement of version 1", func(l []*api.AllocationListStub) bool { return byVersion(l)[1] == 1 })
	for _, x := range live(list) {
		if x.JobVersion == 1 {
			fc.report(x, false)
		}
	}
	d := fc.waitDeployment(1, "version 1 failed", func(d *api.Deployment) bool { return d.Status == "failed" })
	if d.StatusDescription != "Failed due to unhealthy allocations - rolling back to job version 0" || d.TaskGroups["web"].UnhealthyAllocs != 1 {
		t.Fatalf("failed deployment %+v", d)
	}
	job, _, err := c.Jobs().Info("api", nil)
	if err != nil || *job.Version != 2 {
		t.Fatalf("job after the revert: %v, %v", job, err)
	}
	if args := job.TaskGroups[0].Tasks[0].Config["args"]; fmt.Sprint(args) != "[1000]" {
		t.Fatalf("reverted job runs %v", args)
	}
	// Version 2 is version 0 again: the unhealthy allocation is replaced,
	// and once its replacement is healthy the deployment succeeds.
	list = fc.waitAllocs("version 1 replaced by version 2", func(l []*api.AllocationListStub) bool {
		n := byVersion(l)
		return n[1] == 0 && n[2] == 1
	})
	for _, x := range live(list) {
		if x.JobVersion == 2 {
			fc.report(x, true)
		}
	}
	d = fc.waitDeployment(2, "version 2 deployed", func(d *api.Deployment) bool { return d.Status == "successful" })
	if g := d.TaskGroups["web"]; g.HealthyAllocs != 2 {
		t.Fatalf("reverted deployment %+v", g)
	}
}
