package main

import (
	"cmp"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/ordoplane/ordo/api"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/processors/periodic"
)

// showJob writes `ordo job status <id>` as Nomad's does: the job, its
// next periodic launch, its summary, why allocations wait to be placed
// ("Placement Failure", while a blocked evaluation waits for capacity),
// its latest deployment and its allocations.
func showJob(cmd *cobra.Command, c *api.Client, w io.Writer, d display, j *cliJob) error {
	periodicOn := j.Periodic != nil && j.Periodic.Enabled
	param := j.ParameterizedJob != nil && !j.Dispatched
	pairs := []pair{
		{"ID", j.ID},
		{"Name", j.Name},
		{"Submit Date", d.timestamp(time.Unix(0, j.SubmitTime))},
		{"Type", j.Type},
		{"Priority", strconv.Itoa(j.Priority)},
		{"Datacenters", strings.Join(j.Datacenters, ",")},
		{"Namespace", j.Namespace},
		{"Node Pool", j.NodePool},
		{"Status", j.Status},
		{"Periodic", strconv.FormatBool(periodicOn)},
		{"Parameterized", strconv.FormatBool(param)},
		{"Version", strconv.FormatUint(j.Version, 10)},
	}
	if j.SubmitTime == 0 {
		pairs = slices.Delete(pairs, 2, 3)
	}
	if j.ParentID != "" {
		pairs = append(pairs, pair{"Parent ID", j.ParentID})
	}
	if periodicOn && !j.Stop {
		if next, err := periodic.Next(j.Periodic, d.now); err == nil {
			pairs = append(pairs, pair{"Next Periodic Launch", d.timestamp(next)})
		}
	}
	if err := printPairs(w, pairs); err != nil {
		return err
	}
	q := jobQuery(cmd)
	ctx := cmd.Context()
	var sum api.JobSummary
	if err := c.Get(ctx, api.Pathf("/v1/job/%s/summary", j.ID), q, &sum); err != nil {
		return fmt.Errorf("read summary of job %q: %w", j.ID, err)
	}
	if sum.Children != nil && (periodicOn || param) {
		fmt.Fprintf(w, "\nChildren Job Summary\n")
		if err := printTable(w, []string{"Pending", "Running", "Dead"}, [][]string{{
			strconv.FormatInt(sum.Children.Pending, 10), strconv.FormatInt(sum.Children.Running, 10),
			strconv.FormatInt(sum.Children.Dead, 10)}}); err != nil {
			return err
		}
	}
	if len(sum.Summary) > 0 {
		fmt.Fprintf(w, "\nSummary\n")
		cols := []string{"Queued", "Starting", "Running", "Failed", "Complete", "Lost", "Unknown"}
		var rows [][]string
		for _, tg := range slices.Sorted(maps.Keys(sum.Summary)) {
			row := []string{tg}
			for _, col := range cols {
				row = append(row, strconv.Itoa(sum.Summary[tg][col]))
			}
			rows = append(rows, row)
		}
		if err := printTable(w, append([]string{"Task Group"}, cols...), rows); err != nil {
			return err
		}
	}
	var evals []api.Evaluation
	if err := c.Get(ctx, api.Pathf("/v1/job/%s/evaluations", j.ID), q, &evals); err == nil {
		if failed := latestPlacementFailure(evals); failed != nil {
			fmt.Fprintf(w, "\nPlacement Failure\n%s", placementFailures(failed.FailedTGAllocs, ""))
		}
	}
	var dep api.Deployment
	if err := c.Get(ctx, api.Pathf("/v1/job/%s/deployment", j.ID), q, &dep); err == nil && dep.ID != "" {
		fmt.Fprintf(w, "\nLatest Deployment\n")
		if err := printDeploymentSummary(w, d, &dep); err != nil {
			return err
		}
	}
	var allocs []api.AllocationListStub
	if err := c.Get(ctx, api.Pathf("/v1/job/%s/allocations", j.ID), q, &allocs); err == nil && !periodicOn && !param {
		fmt.Fprintf(w, "\nAllocations\n")
		return printAllocTable(w, d, allocs, false)
	}
	return nil
}

// latestPlacementFailure returns the newest evaluation with placement
// failures when a blocked evaluation still waits for capacity to place
// them (as Nomad shows them); nil otherwise.
func latestPlacementFailure(evals []api.Evaluation) *api.Evaluation {
	blocked := false
	var latest *api.Evaluation
	for i := range evals {
		e := &evals[i]
		blocked = blocked || e.Status == events.EvalStatusBlocked
		if len(e.FailedTGAllocs) > 0 && (latest == nil || e.CreateIndex > latest.CreateIndex) {
			latest = e
		}
	}
	if !blocked {
		return nil
	}
	return latest
}

// printAllocTable writes allocations as Nomad's job and node status list
// them: short ids, relative times, newest first; withJob adds the job
// column (node status).
func printAllocTable(w io.Writer, d display, list []api.AllocationListStub, withJob bool) error {
	if len(list) == 0 {
		_, err := fmt.Fprintln(w, "No allocations placed")
		return err
	}
	list = slices.Clone(list)
	slices.SortStableFunc(list, func(a, b api.AllocationListStub) int {
		return cmp.Compare(b.CreateIndex, a.CreateIndex)
	})
	header := []string{"ID", "Node ID", "Task Group", "Version", "Desired", "Status", "Created", "Modified"}
	if withJob {
		header = []string{"ID", "Job ID", "Task Group", "Version", "Desired", "Status", "Created", "Modified"}
	}
	rows := make([][]string, len(list))
	for i, a := range list {
		second := d.id(a.NodeID)
		if withJob {
			second = a.JobID
		}
		rows[i] = []string{d.id(a.ID), second, a.TaskGroup, strconv.FormatUint(a.JobVersion, 10), a.DesiredStatus,
			a.ClientStatus, d.whenNS(a.CreateTime), d.whenNS(a.ModifyTime)}
	}
	return printTable(w, header, rows)
}
