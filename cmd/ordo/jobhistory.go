package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ordoplane/ordo/api"
)

// cliJobVersion is what `job history` shows of a version.
type cliJobVersion struct {
	Version    uint64
	Stable     bool
	SubmitTime int64
}

// cliJobDiff is Nomad's JobDiff, as GET /v1/job/<id>/versions?diffs=true
// answers it.
type cliJobDiff struct {
	Type       string
	ID         string
	Fields     []cliPlanFieldDiff
	Objects    []cliPlanObjectDiff
	TaskGroups []cliPlanGroupDiff
}

func newJobHistoryCommand(g *globals) *cobra.Command {
	var (
		diffs, full bool
		version     int64
	)
	cmd := &cobra.Command{
		Use:   "history [flags] <job>",
		Short: "List a job's versions, with -p the changes between them",
		Long: `List a job's versions, newest first: each version, whether it is stable and
when it was submitted. -p adds what changed from the version before it;
-full prints each version's whole job; -version shows that version alone;
-json and -t print the versions as the API answers them.`,
		Args: oneArg("<job>"),
	}
	out := addOutputFlags(cmd)
	cmd.Flags().BoolVarP(&diffs, "p", "p", false, "show the changes between each version and the one before it")
	cmd.Flags().BoolVar(&full, "full", false, "print each version's whole job as JSON")
	cmd.Flags().Int64Var(&version, "version", -1, "show this version only")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		machine, err := out.active()
		if err != nil {
			return err
		}
		c, id, err := jobClient(cmd, g, args[0])
		if err != nil {
			return err
		}
		var raws []json.RawMessage
		var ds []*cliJobDiff
		if err := c.JobVersions(cmd.Context(), jobNamespace(cmd), id, api.JobVersionsOptions{Diffs: diffs}, &raws, &ds); err != nil {
			return fmt.Errorf("read versions of job %q: %w", id, err)
		}
		w := cmd.OutOrStdout()
		printed := false
		for i, raw := range raws {
			var v cliJobVersion
			if err := json.Unmarshal(raw, &v); err != nil {
				return fmt.Errorf("decode a version of job %q: %w", id, err)
			}
			if version >= 0 && v.Version != uint64(version) {
				continue
			}
			if machine {
				if version >= 0 { // the one version; without -version, the list below
					if err := out.write(w, raw); err != nil {
						return err
					}
				}
				printed = true
				continue
			}
			if printed {
				fmt.Fprintln(w)
			}
			printed = true
			var d *cliJobDiff
			if diffs && i < len(ds) {
				d = ds[i]
			}
			if err := printJobVersion(w, g.display(), &v, d, raw, full); err != nil {
				return err
			}
		}
		if !printed && version >= 0 {
			return fmt.Errorf("job %q has no version %d", id, version)
		}
		if machine && version < 0 {
			return out.writeValue(w, raws)
		}
		return nil
	}
	return cmd
}

// printJobVersion writes one version as Nomad's `job history` does.
func printJobVersion(w io.Writer, disp display, v *cliJobVersion, d *cliJobDiff, raw json.RawMessage, full bool) error {
	pairs := []pair{{"Version", strconv.FormatUint(v.Version, 10)}, {"Stable", strconv.FormatBool(v.Stable)},
		{"Submit Date", disp.whenNS(v.SubmitTime)}}
	if err := printPairs(w, pairs); err != nil {
		return err
	}
	if d != nil {
		var b bytes.Buffer
		printJobDiff(&b, d)
		fmt.Fprintf(w, "Diff        =\n%s\n", strings.TrimRight(b.String(), "\n"))
	}
	if full {
		fmt.Fprintln(w, "Full        =")
		return printJSON(w, raw)
	}
	return nil
}

// printJobDiff writes a job's diff as Nomad's CLI does: the job's and
// each changed group's and task's fields and blocks, marked +, - or +/-.
func printJobDiff(w io.Writer, d *cliJobDiff) {
	fmt.Fprintf(w, "%s Job: %q\n", diffMark(d.Type), d.ID)
	printFields(w, "", d.Fields, d.Objects)
	for _, tg := range d.TaskGroups {
		if tg.Type == "None" {
			continue
		}
		fmt.Fprintf(w, "%s Task Group: %q\n", diffMark(tg.Type), tg.Name)
		printFields(w, "  ", tg.Fields, tg.Objects)
		for _, t := range tg.Tasks {
			if t.Type == "None" {
				continue
			}
			fmt.Fprintf(w, "  %s Task: %q\n", diffMark(t.Type), t.Name)
			printFields(w, "    ", t.Fields, t.Objects)
		}
	}
}
