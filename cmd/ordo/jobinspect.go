package main

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/ordoplane/ordo/api"
)

func newJobInspectCommand(g *globals) *cobra.Command {
	var version int64
	cmd := &cobra.Command{
		Use:   "inspect [flags] <job>",
		Short: "Print a job's JSON, as the API's register body takes it",
		Long: `Print a job's JSON wrapped as {"Job": …}, the body PUT /v1/jobs takes, so
the output registers the job again; -version prints a prior version, -t
runs a Go template over the job itself.`,
		Args: oneArg("<job>"),
	}
	out := addOutputFlags(cmd)
	cmd.Flags().Int64Var(&version, "version", -1, "print this version of the job")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if _, err := out.active(); err != nil {
			return err
		}
		c, id, err := jobClient(cmd, g, args[0])
		if err != nil {
			return err
		}
		var raw json.RawMessage
		if version < 0 {
			if err := c.Get(cmd.Context(), api.Pathf("/v1/job/%s", id), jobQuery(cmd), &raw); err != nil {
				return fmt.Errorf("read job %q: %w", id, err)
			}
		} else if raw, err = jobVersion(cmd, c, id, uint64(version)); err != nil {
			return err
		}
		w := cmd.OutOrStdout()
		if out.template != "" {
			return out.write(w, raw)
		}
		var b bytes.Buffer
		b.WriteString(`{"Job":`)
		b.Write(raw)
		b.WriteString(`}`)
		return printJSON(w, b.Bytes())
	}
	return cmd
}

// jobVersion returns the JSON of version n of job id.
func jobVersion(cmd *cobra.Command, c *api.Client, id string, n uint64) (json.RawMessage, error) {
	var raws []json.RawMessage
	if err := c.JobVersions(cmd.Context(), jobNamespace(cmd), id, api.JobVersionsOptions{}, &raws, nil); err != nil {
		return nil, fmt.Errorf("read versions of job %q: %w", id, err)
	}
	for _, raw := range raws {
		var v cliJobVersion
		if err := json.Unmarshal(raw, &v); err != nil {
			return nil, fmt.Errorf("decode a version of job %q: %w", id, err)
		}
		if v.Version == n {
			return raw, nil
		}
	}
	return nil, fmt.Errorf("job %q has no version %d", id, n)
}
