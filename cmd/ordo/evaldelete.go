package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"

	"github.com/ordoplane/ordo/api"
)

func newEvalDeleteCommand(g *globals) *cobra.Command {
	var (
		filter   string
		pageSize int
		perCall  int
		quiet    bool
		yes      bool
	)
	cmd := &cobra.Command{
		Use:   "delete [flags] <id> [<id>...] | -filter <expression>",
		Short: "Delete evaluations by id, or every evaluation a filter selects",
		Long: `Delete evaluations by id (all or none: an eval whose job is live and has
running allocations refuses the whole request), or by a filter in Nomad's
expression syntax, page by page with a progress bar while the cluster keeps
scheduling. A delete by filter first shows how many evaluations the filter
selects and asks for confirmation, unless -yes. Only evals whose job is
gone, stopped or dead and whose allocations are all terminal are deleted;
the others are counted as skipped.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			switch {
			case filter != "" && len(args) > 0:
				return errors.New("give eval ids or -filter, not both")
			case filter == "" && len(args) == 0:
				return errors.New("give eval ids or -filter")
			case pageSize < 0 || perCall < 1:
				return errors.New("-page-size must not be negative and -pages-per-request must be positive")
			}
			c, err := g.client()
			if err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			if len(args) > 0 {
				var out api.EvalDeleteResponse
				if err := c.Call(cmd.Context(), "DELETE", "/v1/evaluations", nil, map[string]any{"EvalIDs": args}, &out); err != nil {
					return fmt.Errorf("delete evaluations: %w", err)
				}
				_, err := fmt.Fprintf(w, "Deleted %d evaluations\n", out.Count)
				return err
			}
			var total struct{ Count int }
			if err := c.Get(cmd.Context(), "/v1/evaluations/count", url.Values{"filter": {filter}, "namespace": {"*"}}, &total); err != nil {
				return fmt.Errorf("count evaluations: %w", err)
			}
			if total.Count == 0 {
				_, err := fmt.Fprintf(w, "No evaluations match the filter %s\n", filter)
				return err
			}
			if !yes {
				ok, err := confirm(cmd.InOrStdin(), cmd.ErrOrStderr(),
					fmt.Sprintf("Delete the %d evaluations the filter %s selects (evaluations that are not safe to delete are kept)? [y/N] ", total.Count, filter))
				if err != nil {
					return err
				}
				if !ok {
					_, err := fmt.Fprintln(w, "Cancelled: no evaluation deleted")
					return err
				}
			}
			var bar *progressbar.ProgressBar
			style := progressStyleFor(cmd.ErrOrStderr(), quiet) // progress.go
			if style == progressBar {
				bar = newEvalBar(cmd.ErrOrStderr(), total.Count)
			}
			deleted, skipped, token := 0, 0, ""
			for {
				body := map[string]any{"Filter": filter, "MaxPages": perCall, "NextToken": token}
				if pageSize > 0 {
					body["PerPage"] = pageSize
				}
				var out api.EvalDeleteResponse
				if err := c.Call(cmd.Context(), "DELETE", "/v1/evaluations", nil, body, &out); err != nil {
					if bar != nil {
						fmt.Fprintln(cmd.ErrOrStderr())
					}
					return fmt.Errorf("delete evaluations after %d deleted: %w", deleted, err)
				}
				deleted, skipped = deleted+out.Count, skipped+out.Skipped
				if bar != nil {
					if deleted+skipped > int(bar.GetMax64()) {
						bar.ChangeMax64(int64(deleted + skipped)) // evals created since the count
					}
					_ = bar.Set(deleted + skipped)
				}
				if style == progressLines {
					fmt.Fprintf(cmd.ErrOrStderr(), "deleting evaluations: %d/%d\n", deleted+skipped, max(total.Count, deleted+skipped))
				}
				if token = out.NextToken; token == "" {
					break
				}
			}
			if bar != nil {
				_ = bar.Finish()
				fmt.Fprintln(cmd.ErrOrStderr())
			}
			msg := fmt.Sprintf("Deleted %d evaluations", deleted)
			if skipped > 0 {
				msg += fmt.Sprintf("; %d selected but not safe to delete (their job or one of their allocations is not terminal)", skipped)
			}
			_, err = fmt.Fprintln(w, msg)
			return err
		},
	}
	cmd.Flags().StringVar(&filter, "filter", "", "delete every evaluation this expression selects (Nomad's filter syntax)")
	cmd.Flags().IntVar(&pageSize, "page-size", 0, "evaluations per page (one log entry each; 0: the server's default)")
	cmd.Flags().IntVar(&perCall, "pages-per-request", 100, "pages each request deletes before reporting progress")
	cmd.Flags().BoolVar(&quiet, "quiet", false, "no progress bar")
	cmd.Flags().BoolVar(&yes, "yes", false, "delete by filter without asking for confirmation")
	return cmd
}

// confirm writes question to w and reports whether the line read from r
// answers yes ("y" or "yes", any case); end of input is no.
func confirm(r io.Reader, w io.Writer, question string) (bool, error) {
	if _, err := fmt.Fprint(w, question); err != nil {
		return false, err
	}
	line, err := bufio.NewReader(r).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return false, fmt.Errorf("read confirmation: %w", err)
	}
	switch strings.ToLower(strings.TrimSpace(line)) {
	case "y", "yes":
		return true, nil
	}
	return false, nil
}

// newEvalBar draws evals deleted of total, with the rate and the ETA.
func newEvalBar(w io.Writer, total int) *progressbar.ProgressBar {
	return progressbar.NewOptions(max(total, 1),
		progressbar.OptionSetWriter(w),
		progressbar.OptionSetDescription("deleting evaluations"),
		progressbar.OptionShowCount(),
		progressbar.OptionShowIts(),
		progressbar.OptionSetItsString("evals"),
		progressbar.OptionSetPredictTime(true),
		progressbar.OptionSetWidth(30),
		progressbar.OptionSetRenderBlankState(true),
	)
}

func newSystemCommand(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "system",
		Short: "Interact with the system API",
	}
	cmd.AddCommand(&cobra.Command{
		Use:   "gc",
		Short: "Run a garbage collection now (thresholds ignored)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := g.client()
			if err != nil {
				return err
			}
			var out struct {
				Index     uint64
				Collected struct{ Evals, Allocs, Jobs, Nodes, Deployments int }
			}
			if err := c.Put(cmd.Context(), "/v1/system/gc", nil, &out); err != nil {
				return fmt.Errorf("garbage collect: %w", err)
			}
			n := out.Collected
			parts := []string{}
			for _, p := range []struct {
				what string
				n    int
			}{{"evaluations", n.Evals}, {"allocations", n.Allocs}, {"jobs", n.Jobs}, {"nodes", n.Nodes}, {"deployments", n.Deployments}} {
				parts = append(parts, fmt.Sprintf("%d %s", p.n, p.what))
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "Garbage collected: %s\n", strings.Join(parts, ", "))
			return err
		},
	})
	return cmd
}
