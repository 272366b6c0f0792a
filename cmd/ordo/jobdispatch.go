package main

import (
	"encoding/base64"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ordoplane/ordo/api"
	"github.com/ordoplane/ordo/commands/job"
)

func newJobDispatchCommand(g *globals) *cobra.Command {
	var (
		detach   bool
		meta     []string
		prefix   string
		priority int
	)
	cmd := &cobra.Command{
		Use:   "dispatch [flags] <job> [<input file>|-]",
		Short: "Run a parameterized job once",
		Long: `Run a parameterized job once: a child job is registered with the input (a
file, or - for stdin) as its payload and the -meta pairs merged over the
parent's meta, and its evaluation is followed unless -detach. Exits 2 when
allocations could not be placed.`,
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			body := map[string]any{}
			if len(meta) > 0 {
				m := map[string]string{}
				for _, kv := range meta {
					k, v, ok := strings.Cut(kv, "=")
					if !ok || k == "" {
						return fmt.Errorf("-meta %q is not key=value", kv)
					}
					m[k] = v
				}
				body["Meta"] = m
			}
			if len(args) == 2 {
				payload, err := readPayload(cmd, args[1])
				if err != nil {
					return err
				}
				body["Payload"] = base64.StdEncoding.EncodeToString(payload)
			}
			if prefix != "" {
				body["IdPrefixTemplate"] = prefix
			}
			if priority != 0 {
				body["Priority"] = priority
			}
			c, id, err := jobClient(cmd, g, args[0])
			if err != nil {
				return err
			}
			body["JobID"] = id
			var out api.JobDispatchResponse
			if err := c.Call(cmd.Context(), "PUT", api.Pathf("/v1/job/%s/dispatch", id), jobQuery(cmd), body, &out); err != nil {
				return fmt.Errorf("dispatch job %q: %w", id, err)
			}
			w := cmd.OutOrStdout()
			pairs := []pair{{"Dispatched Job ID", out.DispatchedJobID}}
			if out.EvalID != "" {
				pairs = append(pairs, pair{"Evaluation ID", g.display().id(out.EvalID)})
			}
			if err := printPairs(w, pairs); err != nil {
				return err
			}
			if detach || out.EvalID == "" {
				return nil
			}
			fmt.Fprintln(w)
			return monitorEval(cmd.Context(), c, w, out.EvalID, out.Index)
		},
	}
	cmd.Flags().BoolVar(&detach, "detach", false, "print the dispatched job's id and return without following its evaluation")
	cmd.Flags().StringArrayVar(&meta, "meta", nil, "a key=value meta pair for the dispatched job (repeatable)")
	cmd.Flags().StringVar(&prefix, "id-prefix-template", "", "a prefix for the dispatched job's id, after <job>/dispatch-")
	cmd.Flags().IntVar(&priority, "priority", 0, "the priority of the dispatched job's evaluation (1-100; default the job's)")
	return cmd
}

// readPayload reads a dispatch's input: the file path, or stdin for "-",
// at most job.MaxDispatchPayload bytes.
func readPayload(cmd *cobra.Command, path string) ([]byte, error) {
	var r io.Reader = cmd.InOrStdin()
	if path != "-" {
		f, err := os.Open(path)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		r = f
	}
	b, err := io.ReadAll(io.LimitReader(r, job.MaxDispatchPayload+1))
	if err != nil {
		return nil, fmt.Errorf("read the input %s: %w", path, err)
	}
	if len(b) > job.MaxDispatchPayload {
		return nil, fmt.Errorf("the input %s is larger than %d bytes", path, job.MaxDispatchPayload)
	}
	return b, nil
}
