package main

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ordoplane/ordo/api"
)

// readAlloc reads the allocation of id (or unique id prefix).
func readAlloc(ctx context.Context, c *api.Client, id string) (cliAlloc, error) {
	var a cliAlloc
	if err := c.Get(ctx, api.Pathf("/v1/allocation/%s", id), nil, &a); err != nil {
		return a, fmt.Errorf("read allocation %q: %w", id, err)
	}
	return a, nil
}

// pickTask returns task when set and the allocation has it, else the
// allocation's only task; an allocation of several tasks needs one named.
func pickTask(a cliAlloc, task string) (string, error) {
	names := slices.Sorted(maps.Keys(a.TaskStates))
	switch {
	case task != "" && slices.Contains(names, task):
		return task, nil
	case task != "":
		return "", fmt.Errorf("allocation %s has no task %q (it has %s)", a.ID, task, strings.Join(names, ", "))
	case len(names) == 1:
		return names[0], nil
	}
	return "", fmt.Errorf("allocation %s runs tasks %s: name one with -task", a.ID, strings.Join(names, ", "))
}

// taskArg returns the task a command names with -task (flag) or as its
// second argument; naming two is an error.
func taskArg(flag string, args []string) (string, error) {
	if len(args) < 2 {
		return flag, nil
	}
	if flag != "" && flag != args[1] {
		return "", fmt.Errorf("the task is named twice: -task %s and %s", flag, args[1])
	}
	return args[1], nil
}

// allocTask returns a client, the allocation id names and its task:
// task checked against the allocation's, or with only set and task "",
// the allocation's only task ("" stays "" otherwise: every task).
func allocTask(ctx context.Context, g *globals, id, task string, only bool) (*api.Client, cliAlloc, string, error) {
	c, err := g.client()
	if err != nil {
		return nil, cliAlloc{}, "", err
	}
	a, err := readAlloc(ctx, c, id)
	if err == nil && (task != "" || only) {
		task, err = pickTask(a, task)
	}
	return c, a, task, err
}

func newAllocRestartCommand(g *globals) *cobra.Command {
	var (
		task     string
		allTasks bool
	)
	cmd := &cobra.Command{
		Use:   "restart [flags] <alloc-id> [task]",
		Short: "Restart an allocation's running tasks in place",
		Long: `Restart an allocation's tasks in place: each is stopped with its kill
signal and started again at once on the same node (events Restart
Signaled, Terminated, Restarting), without counting against the restart
policy. With no task every running task restarts; -all-tasks says so
explicitly. The server passes the request to the allocation's node.`,
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			task, err := taskArg(task, args)
			if err != nil {
				return err
			}
			if allTasks && task != "" {
				return fmt.Errorf("-all-tasks restarts every task: do not name one")
			}
			c, a, task, err := allocTask(cmd.Context(), g, args[0], task, false)
			if err != nil {
				return err
			}
			req := api.AllocRestartRequest{TaskName: task, AllTasks: allTasks}
			if err := c.Call(cmd.Context(), http.MethodPut, api.Pathf("/v1/client/allocation/%s/restart", a.ID), nil, req, nil); err != nil {
				return fmt.Errorf("restart allocation %s: %w", a.ID, err)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&task, "task", "", "the task to restart (default: every running task)")
	cmd.Flags().BoolVar(&allTasks, "all-tasks", false, "restart every task of the allocation")
	return cmd
}

func newAllocSignalCommand(g *globals) *cobra.Command {
	var task, sig string
	cmd := &cobra.Command{
		Use:   "signal [flags] <alloc-id> [task]",
		Short: "Send a signal to an allocation's tasks",
		Long: `Send a signal (-s, default SIGKILL as Nomad's) to a task of the allocation,
or to every running task when none is named; the task records a
Signaling event. Signals: SIGHUP, SIGINT, SIGQUIT, SIGKILL, SIGUSR1,
SIGUSR2, SIGTERM.`,
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			task, err := taskArg(task, args)
			if err != nil {
				return err
			}
			c, a, task, err := allocTask(cmd.Context(), g, args[0], task, false)
			if err != nil {
				return err
			}
			req := api.AllocSignalRequest{Task: task, Signal: strings.ToUpper(sig)}
			if err := c.Call(cmd.Context(), http.MethodPut, api.Pathf("/v1/client/allocation/%s/signal", a.ID), nil, req, nil); err != nil {
				return fmt.Errorf("signal allocation %s: %w", a.ID, err)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&task, "task", "", "the task to signal (default: every running task)")
	cmd.Flags().StringVarP(&sig, "s", "s", "SIGKILL", "the signal to send")
	return cmd
}
