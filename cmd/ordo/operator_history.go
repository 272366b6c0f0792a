package main

import (
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/ordoplane/ordo/history/timetravel"
)

// newOperatorHistoryCommand is `ordo operator history`: what past the
// addressed server serves (at_index, at_time) and how.
func newOperatorHistoryCommand(g *globals) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "history",
		Short: "Show what past states the server serves: the versions store's spans and backfill",
		Long: `Show what past states the addressed server serves for reads at_index and
at_time: the spans of indexes its versions store answers (a seek per key), the
oldest index it serves, the backfill from the archive under way (reads of the
indexes it has not reached are refused with 503 until it ends), and the disk
the store takes. Each server keeps its own.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return show(cmd, g, "/v1/operator/history", nil, "read history status", asJSON, printHistoryStatus)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the server's JSON answer")
	return cmd
}

// printHistoryStatus writes `ordo operator history`.
func printHistoryStatus(w io.Writer, st timetravel.Status) error {
	fmt.Fprintf(w, "Applied index  %d\n", st.Applied)
	if v := st.Versions; v != nil {
		kept := "every version"
		if v.Kept > 0 {
			kept = fmt.Sprintf("the newest %d entries", v.Kept)
		}
		fmt.Fprintf(w, "Versions       %s on disk, %d entries behind, keeping %s\n", mib(v.Bytes), v.Lag, kept)
		fmt.Fprintf(w, "Oldest index   %d\n", v.Oldest)
		if b := v.Backfill; b != nil {
			pct := 100 * float64(b.Reached+1-b.From) / float64(b.To+2-b.From)
			fmt.Fprintf(w, "Backfill       indexes %d to %d, at %d (%.0f%%), %d events replayed, since %s\n",
				b.From, b.To, b.Reached, pct, b.Events, b.Started.Format(time.RFC3339))
		}
		rows := make([][]string, len(v.Spans))
		for i, sp := range v.Spans {
			serves := "yes"
			if !sp.Current {
				serves = "no (another history or projection versions)"
			}
			rows[i] = []string{strconv.FormatUint(sp.From, 10), strconv.FormatUint(sp.To, 10), serves, sp.Tag}
		}
		if len(rows) > 0 {
			fmt.Fprintln(w)
			if err := printTable(w, []string{"From", "To", "Serves", "Projection versions"}, rows); err != nil {
				return err
			}
		}
		return nil
	}
	fmt.Fprintln(w, "Versions       not kept (time_travel { disable_versions }): no past state is served")
	return nil
}

// mib formats a byte count in MiB.
func mib(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }
