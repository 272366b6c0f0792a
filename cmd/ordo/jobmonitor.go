package main

import (
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ordoplane/ordo/api"
	"github.com/ordoplane/ordo/events"
)

// monitorWait is how long each blocking query of the monitor waits for a
// change before asking again.
const monitorWait = 30 * time.Second

// evalMonitor follows an evaluation, and then the deployment it started,
// printing what happens the way Nomad's `job run` does:
//
//	==> Monitoring evaluation "3fe1c2d4"
//	    Evaluation triggered by job "web"
//	    Allocation "9a8b7c6d" created: node "51e0f3aa", group "web"
//	    Evaluation status changed: "pending" -> "complete"
//	==> Evaluation "3fe1c2d4" finished with status "complete"
//
// A placement failure is explained from the eval's FailedTGAllocs and
// ends the command with exit code 2. Other commands that create an
// evaluation (job dispatch, job revert, …) may use it too.
type evalMonitor struct {
	c *api.Client
	w io.Writer
	d display
	// tty redraws the deployment's progress in place; otherwise a line is
	// printed each time it changes (progress.go).
	tty bool
}

// monitor follows eval id from index until it is no longer pending, then,
// unless detachDeployment, the deployment it created until that ends. It
// returns an *exitError with code 2 when allocations could not be placed
// and an error when the evaluation or the deployment failed.
func (m *evalMonitor) monitor(ctx context.Context, id string, index uint64, detachDeployment bool) error {
	fmt.Fprintf(m.w, "==> Monitoring evaluation %q\n", m.d.id(id))
	seen := map[string]bool{}
	last := ""
	var e api.Evaluation
	for {
		meta, err := m.c.Query(ctx, api.Pathf("/v1/evaluation/%s", id), &api.QueryOptions{Index: index, Wait: monitorWait}, &e)
		if err != nil {
			if api.IsNotFound(err) && last == "" {
				return fmt.Errorf("evaluation %q not found", id)
			}
			return fmt.Errorf("follow evaluation %q: %w", id, err)
		}
		index = max(index, meta.LastIndex)
		if last == "" {
			m.triggered(&e)
		}
		if err := m.newAllocs(ctx, id, seen); err != nil {
			return err
		}
		if last != "" && e.Status != last {
			fmt.Fprintf(m.w, "    Evaluation status changed: %q -> %q\n", last, e.Status)
		}
		last = e.Status
		if e.Status != events.EvalStatusPending {
			break
		}
	}
	if len(e.FailedTGAllocs) > 0 {
		fmt.Fprintf(m.w, "==> Evaluation %q finished with status %q but failed to place all allocations:\n", m.d.id(id), e.Status)
		io.WriteString(m.w, placementFailures(e.FailedTGAllocs, "    "))
		if e.BlockedEval != "" {
			fmt.Fprintf(m.w, "    Evaluation %q waiting for additional capacity to place remainder\n", m.d.id(e.BlockedEval))
		}
		return &exitError{code: exitCodePlacementFailed}
	}
	fmt.Fprintf(m.w, "==> Evaluation %q finished with status %q\n", m.d.id(id), e.Status)
	if e.Status == events.EvalStatusFailed {
		return fmt.Errorf("evaluation %q failed: %s", id, e.StatusDescription)
	}
	if detachDeployment || e.JobID == "" {
		return nil
	}
	dep, err := m.deploymentOf(ctx, &e)
	if err != nil || dep == "" {
		return err
	}
	return m.monitorDeployment(ctx, dep, index)
}

// triggered prints what the eval was created for.
func (m *evalMonitor) triggered(e *api.Evaluation) {
	switch {
	case e.NodeID != "":
		fmt.Fprintf(m.w, "    Evaluation triggered by node %q\n", m.d.id(e.NodeID))
	case e.JobID != "":
		fmt.Fprintf(m.w, "    Evaluation triggered by job %q\n", e.JobID)
	}
	if e.DeploymentID != "" {
		fmt.Fprintf(m.w, "    Evaluation within deployment: %q\n", m.d.id(e.DeploymentID))
	}
}

// newAllocs prints a placement line for each allocation of eval id not yet
// in seen.
func (m *evalMonitor) newAllocs(ctx context.Context, id string, seen map[string]bool) error {
	var list []api.AllocationListStub
	if err := m.c.Get(ctx, api.Pathf("/v1/evaluation/%s/allocations", id), nil, &list); err != nil {
		if api.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("allocations of evaluation %q: %w", id, err)
	}
	slices.SortFunc(list, func(a, b api.AllocationListStub) int { return strings.Compare(a.Name, b.Name) })
	for _, a := range list {
		if seen[a.ID] {
			continue
		}
		seen[a.ID] = true
		fmt.Fprintf(m.w, "    Allocation %q created: node %q, group %q\n", m.d.id(a.ID), m.d.id(a.NodeID), a.TaskGroup)
	}
	return nil
}

// deploymentOf returns the deployment eval e started: its DeploymentID, or
// else the job's latest deployment when it was created after the eval;
// "" when there is none (a batch job, or nothing changed).
func (m *evalMonitor) deploymentOf(ctx context.Context, e *api.Evaluation) (string, error) {
	if e.DeploymentID != "" {
		return e.DeploymentID, nil
	}
	var d api.Deployment
	q := map[string][]string{"namespace": {e.Namespace}}
	if err := m.c.Get(ctx, api.Pathf("/v1/job/%s/deployment", e.JobID), q, &d); err != nil {
		if api.IsNotFound(err) {
			return "", nil
		}
		return "", fmt.Errorf("latest deployment of job %q: %w", e.JobID, err)
	}
	if d.ID == "" || d.CreateIndex < e.CreateIndex {
		return "", nil
	}
	return d.ID, nil
}

// monitorDeployment follows deployment id until it ends, printing its
// progress, then its final state; a failed or cancelled deployment is an
// error.
func (m *evalMonitor) monitorDeployment(ctx context.Context, id string, index uint64) error {
	fmt.Fprintf(m.w, "==> Monitoring deployment %q\n", m.d.id(id))
	p := newProgressLine(m.w, m.tty)
	var d api.Deployment
	for {
		meta, err := m.c.Query(ctx, api.Pathf("/v1/deployment/%s", id), &api.QueryOptions{Index: index, Wait: monitorWait}, &d)
		if err != nil {
			p.done()
			return fmt.Errorf("follow deployment %q: %w", id, err)
		}
		index = max(index, meta.LastIndex)
		p.update("    " + deploymentProgress(&d))
		if !d.Active() {
			break
		}
	}
	p.done()
	mark := "✓"
	if d.Status != api.DeploymentStatusSuccessful {
		mark = "!"
	}
	fmt.Fprintf(m.w, "  %s Deployment %q %s\n\n", mark, m.d.id(d.ID), d.Status)
	if err := printDeploymentSummary(m.w, m.d, &d); err != nil {
		return err
	}
	if d.Status != api.DeploymentStatusSuccessful {
		return fmt.Errorf("deployment %q %s: %s", d.ID, d.Status, d.StatusDescription)
	}
	return nil
}

// deploymentProgress is one line of a deployment's state: its status and
// each group's healthy count against its desired total.
func deploymentProgress(d *api.Deployment) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Deployment %q %s", shortID(d.ID), d.Status)
	for _, tg := range slices.Sorted(maps.Keys(d.TaskGroups)) {
		s := d.TaskGroups[tg]
		fmt.Fprintf(&b, "; %q %d/%d healthy", tg, s.HealthyAllocs, s.DesiredTotal)
		if s.UnhealthyAllocs > 0 {
			fmt.Fprintf(&b, ", %d unhealthy", s.UnhealthyAllocs)
		}
	}
	return b.String()
}

// printDeploymentSummary writes a deployment's fields and its "Deployed"
// table, as `job run` ends and `deployment status` shows.
func printDeploymentSummary(w io.Writer, disp display, d *api.Deployment) error {
	if err := printPairs(w, []pair{{"ID", disp.id(d.ID)}, {"Job ID", d.JobID},
		{"Job Version", strconv.FormatUint(d.JobVersion, 10)}, {"Status", d.Status},
		{"Description", d.StatusDescription}}); err != nil {
		return err
	}
	if len(d.TaskGroups) == 0 {
		return nil
	}
	canaries := false
	for _, s := range d.TaskGroups {
		canaries = canaries || s.DesiredCanaries > 0
	}
	header := []string{"Task Group"}
	if canaries {
		header = append(header, "Promoted")
	}
	header = append(header, "Desired")
	if canaries {
		header = append(header, "Canaries")
	}
	header = append(header, "Placed", "Healthy", "Unhealthy", "Progress Deadline")
	var rows [][]string
	for _, tg := range slices.Sorted(maps.Keys(d.TaskGroups)) {
		s := d.TaskGroups[tg]
		row := []string{tg}
		if canaries {
			row = append(row, strconv.FormatBool(s.Promoted))
		}
		row = append(row, strconv.Itoa(s.DesiredTotal))
		if canaries {
			row = append(row, strconv.Itoa(s.DesiredCanaries))
		}
		row = append(row, strconv.Itoa(s.PlacedAllocs), strconv.Itoa(s.HealthyAllocs), strconv.Itoa(s.UnhealthyAllocs),
			orDash(disp.when(s.RequireProgressBy)))
		rows = append(rows, row)
	}
	fmt.Fprintf(w, "\nDeployed\n")
	return printTable(w, header, rows)
}

// placementFailures explains, group by group, why an evaluation could not
// place allocations (Nomad's "Placement Failure" text), each line starting
// with indent:
//
//	Task Group "web" (failed to place 1 allocation):
//	  * Constraint "missing drivers" filtered 1 node
func placementFailures(failed map[string]*api.AllocationMetric, indent string) string {
	var b strings.Builder
	for _, tg := range slices.Sorted(maps.Keys(failed)) {
		m := failed[tg]
		if m == nil {
			m = &api.AllocationMetric{}
		}
		n := m.CoalescedFailures + 1
		fmt.Fprintf(&b, "%sTask Group %q (failed to place %s):\n", indent, tg, plural(n, "allocation"))
		for _, line := range metricLines(m) {
			fmt.Fprintf(&b, "%s  * %s\n", indent, line)
		}
	}
	return b.String()
}

// metricLines are the reasons one group's placements failed, most telling
// first: no eligible node, empty datacenters, filters, exhausted resources.
func metricLines(m *api.AllocationMetric) []string {
	var out []string
	if m.NodesEvaluated == 0 {
		out = append(out, "No nodes were eligible for evaluation")
	}
	for _, dc := range slices.Sorted(maps.Keys(m.NodesAvailable)) {
		if m.NodesAvailable[dc] == 0 {
			out = append(out, fmt.Sprintf("No nodes are available in datacenter %q", dc))
		}
	}
	for _, c := range slices.Sorted(maps.Keys(m.ClassFiltered)) {
		n := m.ClassFiltered[c]
		out = append(out, fmt.Sprintf("Class %q filtered %s", c, plural(n, "node")))
	}
	for _, c := range slices.Sorted(maps.Keys(m.ConstraintFiltered)) {
		n := m.ConstraintFiltered[c]
		out = append(out, fmt.Sprintf("Constraint %q filtered %s", c, plural(n, "node")))
	}
	if m.NodesExhausted > 0 {
		out = append(out, fmt.Sprintf("Resources exhausted on %s", plural(m.NodesExhausted, "node")))
	}
	for _, c := range slices.Sorted(maps.Keys(m.ClassExhausted)) {
		n := m.ClassExhausted[c]
		out = append(out, fmt.Sprintf("Class %q exhausted on %s", c, plural(n, "node")))
	}
	for _, dim := range slices.Sorted(maps.Keys(m.DimensionExhausted)) {
		n := m.DimensionExhausted[dim]
		out = append(out, fmt.Sprintf("Dimension %q exhausted on %s", dim, plural(n, "node")))
	}
	return out
}
