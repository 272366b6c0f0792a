package main

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ordoplane/ordo/api"
)

// jobVerbCommands are the job verbs beside run, status, stop, inspect and
// plan: validate, history, revert, eval, scale, promote, allocs, init
// and dispatch, with Nomad's flags and output.
func jobVerbCommands(g *globals) []*cobra.Command {
	return []*cobra.Command{newJobValidateCommand(g), newJobHistoryCommand(g), newJobRevertCommand(g),
		newJobEvalCommand(g), newJobScaleCommand(g), newJobPromoteCommand(g), newJobAllocsCommand(g),
		newJobInitCommand(), newJobDispatchCommand(g)}
}

// jobNamespace returns the -namespace flag's value ("" for the client's).
func jobNamespace(cmd *cobra.Command) string {
	ns, _ := cmd.Flags().GetString("namespace")
	return ns
}

// jobClient returns a client and the id of the job idOrPrefix names
// (resolveJob).
func jobClient(cmd *cobra.Command, g *globals, idOrPrefix string) (*api.Client, string, error) {
	c, err := g.client()
	if err != nil {
		return nil, "", err
	}
	id, err := resolveJob(cmd, c, idOrPrefix)
	return c, id, err
}

// followEval prints what a write that created evaluation id did: with
// detach, the evaluation's id; otherwise the evaluation followed to its
// end (monitorEval: exit code 2 when allocations could not be placed).
func followEval(cmd *cobra.Command, c *api.Client, id string, index uint64, detach bool) error {
	w := cmd.OutOrStdout()
	if id == "" {
		return nil
	}
	if detach {
		_, err := fmt.Fprintf(w, "Evaluation ID: %s\n", id)
		return err
	}
	return monitorEval(cmd.Context(), c, w, id, index)
}

func newJobValidateCommand(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "validate <file.hcl|file.json>",
		Short: "Check a jobspec for errors without registering it",
		Long: `Check a jobspec for errors: it is parsed and validated locally (HCL, or
Nomad's API JSON for a .json file), then validated by the servers as
registering it would. Exits 0 when the job is valid, 1 otherwise.`,
		Args: oneArg("<file>"),
		RunE: func(cmd *cobra.Command, args []string) error {
			job, err := readJobspec(args[0])
			if err != nil {
				fmt.Fprintf(cmd.ErrOrStderr(), "Job validation errors:\n%v\n", err)
				return &exitError{code: exitCodeError}
			}
			c, err := g.client()
			if err != nil {
				return err
			}
			out, err := c.ValidateJob(cmd.Context(), job)
			if err != nil {
				return fmt.Errorf("validate job %q: %w", job.ID, err)
			}
			if len(out.ValidationErrors) > 0 {
				fmt.Fprintf(cmd.ErrOrStderr(), "Job validation errors:\n%s\n", strings.Join(out.ValidationErrors, "\n"))
				return &exitError{code: exitCodeError}
			}
			if out.Warnings != "" {
				fmt.Fprintf(cmd.OutOrStdout(), "Job Warnings:\n%s\n\n", out.Warnings)
			}
			_, err = fmt.Fprintln(cmd.OutOrStdout(), "Job validation successful")
			return err
		},
	}
}

func newJobRevertCommand(g *globals) *cobra.Command {
	var detach bool
	cmd := &cobra.Command{
		Use:   "revert [flags] <job> <version>",
		Short: "Register a prior version of a job again",
		Long: `Register a prior version of a job again, as a new version, and follow the
evaluation it creates (unless -detach). Exits 2 when allocations could not
be placed.`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) != 2 {
				return fmt.Errorf("this command takes two arguments: <job> <version>")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			version, err := strconv.ParseUint(args[1], 10, 64)
			if err != nil {
				return fmt.Errorf("version %q is not a number", args[1])
			}
			c, id, err := jobClient(cmd, g, args[0])
			if err != nil {
				return err
			}
			out, err := c.RevertJob(cmd.Context(), jobNamespace(cmd), id, version, nil)
			if err != nil {
				return fmt.Errorf("revert job %q to version %d: %w", id, version, err)
			}
			return followEval(cmd, c, out.EvalID, out.Index, detach)
		},
	}
	cmd.Flags().BoolVar(&detach, "detach", false, "print the evaluation id and return without following it")
	return cmd
}

func newJobEvalCommand(g *globals) *cobra.Command {
	var detach, force bool
	cmd := &cobra.Command{
		Use:   "eval [flags] <job>",
		Short: "Create a new evaluation of a job",
		Long: `Create a new evaluation of a job as it stands, so the scheduler looks at it
again; -force-reschedule also reschedules its failed allocations, even
those whose reschedule policy is exhausted. Follows the evaluation unless
-detach.`,
		Args: oneArg("<job>"),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, id, err := jobClient(cmd, g, args[0])
			if err != nil {
				return err
			}
			out, err := c.EvaluateJob(cmd.Context(), jobNamespace(cmd), id, api.EvalOptions{ForceReschedule: force})
			if err != nil {
				return fmt.Errorf("evaluate job %q: %w", id, err)
			}
			if detach {
				_, err := fmt.Fprintf(cmd.OutOrStdout(), "Created eval ID: %q\n", g.display().id(out.EvalID))
				return err
			}
			return followEval(cmd, c, out.EvalID, out.Index, false)
		},
	}
	cmd.Flags().BoolVar(&detach, "detach", false, "print the evaluation id and return without following it")
	cmd.Flags().BoolVar(&force, "force-reschedule", false, "reschedule failed allocations even if their reschedule policy is exhausted")
	return cmd
}

func newJobScaleCommand(g *globals) *cobra.Command {
	var detach bool
	cmd := &cobra.Command{
		Use:   "scale [flags] <job> [<group>] <count>",
		Short: "Change the count of a job's task group",
		Long: `Change the count of a job's task group: the group may be left out when the
job has one. The count must lie within the group's scaling block, if it
has one. The request is recorded as a scaling event (job scale status
shows them). Follows the evaluation unless -detach.`,
		Args: cobra.RangeArgs(2, 3),
		RunE: func(cmd *cobra.Command, args []string) error {
			count, err := strconv.ParseInt(args[len(args)-1], 10, 64)
			if err != nil {
				return fmt.Errorf("count %q is not a number", args[len(args)-1])
			}
			c, id, err := jobClient(cmd, g, args[0])
			if err != nil {
				return err
			}
			group := ""
			if len(args) == 3 {
				group = args[1]
			} else if group, err = onlyGroup(cmd, c, id); err != nil {
				return err
			}
			out, err := c.ScaleJob(cmd.Context(), jobNamespace(cmd), id, api.ScalingRequest{Count: &count,
				Target: map[string]string{"Job": id, "Group": group}, Message: "submitted using the ordo CLI"})
			if err != nil {
				return fmt.Errorf("scale job %q group %q: %w", id, group, err)
			}
			return followEval(cmd, c, out.EvalID, out.Index, detach)
		},
	}
	cmd.Flags().BoolVar(&detach, "detach", false, "print the evaluation id and return without following it")
	return cmd
}

// onlyGroup returns the name of job id's one task group, or an error
// asking for it when the job has several.
func onlyGroup(cmd *cobra.Command, c *api.Client, id string) (string, error) {
	var j cliJob
	if err := c.Get(cmd.Context(), api.Pathf("/v1/job/%s", id), jobQuery(cmd), &j); err != nil {
		return "", fmt.Errorf("read job %q: %w", id, err)
	}
	if len(j.TaskGroups) != 1 {
		return "", fmt.Errorf("job %q has %d task groups: name the group to scale", id, len(j.TaskGroups))
	}
	return j.TaskGroups[0].Name, nil
}

func newJobPromoteCommand(g *globals) *cobra.Command {
	var (
		detach bool
		groups []string
	)
	cmd := &cobra.Command{
		Use:   "promote [flags] <job>",
		Short: "Promote the canaries of a job's latest deployment",
		Long: `Promote the canaries of a job's latest deployment: every group's, or with
-group (repeatable) only those named. Follows the evaluation unless -detach.`,
		Args: oneArg("<job>"),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, id, err := jobClient(cmd, g, args[0])
			if err != nil {
				return err
			}
			var d struct{ ID string }
			if err := c.Get(cmd.Context(), api.Pathf("/v1/job/%s/deployment", id), jobQuery(cmd), &d); err != nil {
				return fmt.Errorf("read the latest deployment of job %q: %w", id, err)
			}
			if d.ID == "" {
				return fmt.Errorf("job %q has no deployment to promote", id)
			}
			body := map[string]any{"DeploymentID": d.ID, "All": len(groups) == 0, "Groups": groups}
			var out api.DeploymentUpdateResponse
			if err := c.Call(cmd.Context(), "PUT", api.Pathf("/v1/deployment/promote/%s", d.ID), jobQuery(cmd), body, &out); err != nil {
				return fmt.Errorf("promote deployment %q of job %q: %w", d.ID, id, err)
			}
			return followEval(cmd, c, out.EvalID, out.Index, detach)
		},
	}
	cmd.Flags().BoolVar(&detach, "detach", false, "print the evaluation id and return without following it")
	cmd.Flags().StringArrayVar(&groups, "group", nil, "promote only this group's canaries (repeatable)")
	return cmd
}

func newJobAllocsCommand(g *globals) *cobra.Command {
	var all bool
	cmd := &cobra.Command{
		Use:   "allocs [flags] <job>",
		Short: "List a job's allocations",
		Long: `List a job's allocations, newest first: ids cut to eight characters and
times relative unless -verbose; -json or -t print the server's answer.`,
		Args: oneArg("<job>"),
	}
	out := addOutputFlags(cmd)
	cmd.Flags().BoolVar(&all, "all", false, "also list the allocations of earlier jobs with the same id")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		machine, err := out.active()
		if err != nil {
			return err
		}
		c, id, err := jobClient(cmd, g, args[0])
		if err != nil {
			return err
		}
		q := jobQuery(cmd)
		if all {
			q.Set("all", "true")
		}
		var raw json.RawMessage
		if err := c.Get(cmd.Context(), api.Pathf("/v1/job/%s/allocations", id), q, &raw); err != nil {
			return fmt.Errorf("list allocations of job %q: %w", id, err)
		}
		w := cmd.OutOrStdout()
		if machine {
			return out.write(w, raw)
		}
		var list []api.AllocationListStub
		if err := json.Unmarshal(raw, &list); err != nil {
			return fmt.Errorf("decode allocations of job %q: %w", id, err)
		}
		if len(list) == 0 {
			_, err := fmt.Fprintf(w, "No allocations placed for job %q\n", id)
			return err
		}
		d := g.display()
		rows := make([][]string, len(list))
		for i, a := range list {
			rows[i] = []string{d.id(a.ID), d.id(a.NodeID), a.TaskGroup, strconv.FormatUint(a.JobVersion, 10),
				a.DesiredStatus, a.ClientStatus, d.whenNS(a.CreateTime), d.whenNS(a.ModifyTime)}
		}
		return printTable(w, []string{"ID", "Node ID", "Task Group", "Version", "Desired", "Status", "Created", "Modified"}, rows)
	}
	return cmd
}
