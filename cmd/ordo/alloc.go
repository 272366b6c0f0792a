package main

import (
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/ordoplane/ordo/api"
)

// cliAlloc is an allocation as GET /v1/allocation/<id> answers it.
type cliAlloc struct {
	api.AllocationListStub
	DesiredDescription string
	DesiredTransition  struct {
		Migrate, Reschedule, ForceReschedule, NoShutdownDelay *bool
	}
	ClientDescription  string
	DeploymentID       string
	PreviousAllocation string
	NextAllocation     string
	FollowupEvalID     string
	Resources          struct{ CPU, MemoryMB, DiskMB int }
	TaskStates         map[string]*struct {
		State      string
		Failed     bool
		Restarts   uint64
		StartedAt  time.Time
		FinishedAt time.Time
		Events     []struct {
			Type           string
			Time           int64
			DisplayMessage string
		}
	}
}

func newAllocCommand(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "alloc",
		Short: "Interact with allocations",
	}
	cmd.AddCommand(newAllocStatusCommand(g), newAllocStopCommand(g), newAllocLogsCommand(g))
	cmd.AddCommand(newAllocExecCommand(g), newAllocFSCommand(g), newAllocRestartCommand(g), newAllocSignalCommand(g)) // allocexec.go, allocfs.go, alloclifecycle.go
	return cmd
}

func newAllocStatusCommand(g *globals) *cobra.Command {
	var out *outputFlags
	cmd := &cobra.Command{
		Use:   "status [flags] <id>",
		Short: "Show an allocation by id or unique id prefix",
		Args:  oneArg("<id>"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return showOut(cmd, g, api.Pathf("/v1/allocation/%s", args[0]), nil, fmt.Sprintf("read allocation %q", args[0]), out, printAlloc)
		},
	}
	out = addOutputFlags(cmd)
	return cmd
}

func newAllocStopCommand(g *globals) *cobra.Command {
	var noShutdownDelay bool
	cmd := &cobra.Command{
		Use:   "stop [flags] <id>",
		Short: "Stop an allocation; its job is evaluated again",
		Long: `Stop an allocation; its job is evaluated again.

With -no-shutdown-delay the client skips the tasks' shutdown delay (N23).`,
		Args: oneArg("<id>"),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := g.client()
			if err != nil {
				return err
			}
			var a api.AllocationListStub
			if err := c.Get(cmd.Context(), api.Pathf("/v1/allocation/%s", args[0]), nil, &a); err != nil {
				return fmt.Errorf("read allocation %q: %w", args[0], err)
			}
			var q url.Values
			if noShutdownDelay {
				q = url.Values{"no_shutdown_delay": {"true"}}
			}
			var out api.AllocStopResponse
			if err := c.Call(cmd.Context(), http.MethodPut, api.Pathf("/v1/allocation/%s/stop", a.ID), q, nil, &out); err != nil {
				return fmt.Errorf("stop allocation %q: %w", a.ID, err)
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "Allocation %q stopped; evaluation %q created at index %d\n", a.ID, out.EvalID, out.Index)
			return err
		},
	}
	cmd.Flags().BoolVar(&noShutdownDelay, "no-shutdown-delay", false, "skip the tasks' shutdown delay")
	return cmd
}

func boolPtr(b *bool) string {
	if b == nil {
		return "<none>"
	}
	return strconv.FormatBool(*b)
}

// printAlloc writes the "Key = value" view of `ordo alloc status`: short
// ids and relative times unless -verbose, sizes in MiB/GiB.
func printAlloc(w io.Writer, d display, a cliAlloc) error {
	pairs := []pair{
		{"ID", d.id(a.ID)},
		{"Eval ID", d.id(a.EvalID)},
		{"Name", a.Name},
		{"Namespace", a.Namespace},
		{"Node ID", d.id(a.NodeID)},
		{"Node Name", orNone(a.NodeName)},
		{"Job ID", a.JobID},
		{"Job Version", strconv.FormatUint(a.JobVersion, 10)},
		{"Task Group", a.TaskGroup},
		{"Client Status", a.ClientStatus},
		{"Client Description", orNone(a.ClientDescription)},
		{"Desired Status", a.DesiredStatus},
		{"Desired Description", orNone(a.DesiredDescription)},
		{"No Shutdown Delay", boolPtr(a.DesiredTransition.NoShutdownDelay)},
		{"Migrate", boolPtr(a.DesiredTransition.Migrate)},
		{"Deployment ID", orNone(d.id(a.DeploymentID))},
		{"Previous Allocation", orNone(d.id(a.PreviousAllocation))},
		{"Next Allocation", orNone(d.id(a.NextAllocation))},
		{"Follow-up Eval", orNone(d.id(a.FollowupEvalID))},
		{"Resources", fmt.Sprintf("%d MHz, %s memory, %s disk", a.Resources.CPU, humanMiB(int64(a.Resources.MemoryMB)), humanMiB(int64(a.Resources.DiskMB)))},
	}
	if a.CreateTime > 0 {
		pairs = append(pairs, pair{"Created", d.timestamp(time.Unix(0, a.CreateTime))})
	}
	if a.ModifyTime > 0 {
		pairs = append(pairs, pair{"Modified", d.timestamp(time.Unix(0, a.ModifyTime))})
	}
	pairs = append(pairs, pair{"Create Index", strconv.FormatUint(a.CreateIndex, 10)}, pair{"Modify Index", strconv.FormatUint(a.ModifyIndex, 10)})
	err := printPairs(w, pairs)
	if err != nil || len(a.TaskStates) == 0 {
		return err
	}
	fmt.Fprintln(w, "\nTasks")
	var rows [][]string
	for _, name := range slices.Sorted(maps.Keys(a.TaskStates)) {
		s := a.TaskStates[name]
		if s == nil {
			continue
		}
		started := orDash(d.when(s.StartedAt))
		rows = append(rows, []string{name, s.State, strconv.FormatBool(s.Failed), strconv.FormatUint(s.Restarts, 10), started})
	}
	if err := printTable(w, []string{"Task", "State", "Failed", "Restarts", "Started"}, rows); err != nil {
		return err
	}
	// Each task's recent events, newest first, as Nomad shows them.
	for _, name := range slices.Sorted(maps.Keys(a.TaskStates)) {
		s := a.TaskStates[name]
		if s == nil || len(s.Events) == 0 {
			continue
		}
		fmt.Fprintf(w, "\nRecent Events (%s):\n", name)
		var ev [][]string
		for i := len(s.Events) - 1; i >= 0; i-- {
			e := s.Events[i]
			ev = append(ev, []string{time.Unix(0, e.Time).UTC().Format(time.RFC3339), e.Type, e.DisplayMessage})
		}
		if err := printTable(w, []string{"Time", "Type", "Description"}, ev); err != nil {
			return err
		}
	}
	return nil
}
