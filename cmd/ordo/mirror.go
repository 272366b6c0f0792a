package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/ordoplane/ordo/processors/mirror"
)

// mirrorVerifyExitMismatch is the exit code of a verify that found a problem.
const mirrorVerifyExitMismatch = 2

// newMirrorCommand is `ordo operator mirror`: the Kafka mirror's status
// and a check of the topic against the archive.
func newMirrorCommand(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "mirror",
		Short: "Inspect the Kafka mirror (docs/mirror.md)",
	}
	cmd.AddCommand(newMirrorStatusCommand(g), newMirrorVerifyCommand(g))
	return cmd
}

func newMirrorStatusCommand(g *globals) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Show the mirror: enabled, brokers reachable, topic, last mirrored index, lag",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return show(cmd, g, "/v1/operator/mirror", nil, "read mirror status", asJSON, printMirrorStatus)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the server's JSON answer")
	return cmd
}

// printMirrorStatus writes the table of `ordo operator mirror status`.
func printMirrorStatus(w io.Writer, st mirror.Status) error {
	if !st.Enabled {
		_, err := fmt.Fprintln(w, "Enabled = false (no mirror block in the leader's configuration)")
		return err
	}
	rows := [][]string{
		{"Enabled", "true"},
		{"Running", strconv.FormatBool(st.Running)},
		{"Brokers", strings.Join(st.Brokers, ",")},
		{"Brokers Reachable", strconv.FormatBool(st.BrokersReachable)},
		{"Topic", st.Topic},
		{"Format", st.Format},
		{"Partitions", strconv.Itoa(int(st.Partitions))},
		{"Last Mirrored", fmt.Sprintf("%d/%d", st.MirroredIndex, st.MirroredSeq)},
		{"Resume Point", fmt.Sprintf("%d/%d", st.ResumeIndex, st.ResumeSeq)},
		{"Lag (events)", strconv.FormatUint(st.LagEvents, 10)},
		{"Lag (seconds)", strconv.FormatFloat(st.LagSeconds, 'f', 3, 64)},
		{"Events Mirrored", strconv.FormatUint(st.EventsMirrored, 10)},
	}
	if st.LastError != "" {
		when := ""
		if st.LastErrorTime != nil {
			when = " at " + st.LastErrorTime.Format(time.RFC3339)
		}
		rows = append(rows, []string{"Last Error", st.LastError + when})
	}
	for _, r := range rows {
		if _, err := fmt.Fprintf(w, "%-17s = %s\n", r[0], r[1]); err != nil {
			return err
		}
	}
	return nil
}

func newMirrorVerifyCommand(g *globals) *cobra.Command {
	var (
		asJSON bool
		from   uint64
	)
	cmd := &cobra.Command{
		Use:   "verify",
		Short: "Read the topic back and check it against the archive (exit 2 on a mismatch)",
		Long: "The leader reads every committed record of the topic and checks that each archived event up to\n" +
			"the last mirrored one is there exactly once, keyed and partitioned as the mirror keys it, with\n" +
			"each partition (so each entity) in log order. Exit 0 when all holds, 2 on a mismatch.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := g.client()
			if err != nil {
				return err
			}
			q := url.Values{}
			if from > 0 {
				q.Set("from", strconv.FormatUint(from, 10))
			}
			var raw json.RawMessage
			if err := c.Call(cmd.Context(), "POST", "/v1/operator/mirror/verify", q, nil, &raw); err != nil {
				return fmt.Errorf("verify mirror: %w", err)
			}
			var rep mirror.Report
			if err := json.Unmarshal(raw, &rep); err != nil {
				return fmt.Errorf("verify mirror: decode: %w", err)
			}
			if asJSON {
				err = printJSON(cmd.OutOrStdout(), raw)
			} else {
				err = printMirrorReport(cmd.OutOrStdout(), rep)
			}
			if err != nil {
				return err
			}
			if !rep.OK {
				return &exitError{code: mirrorVerifyExitMismatch}
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the server's JSON report")
	cmd.Flags().Uint64Var(&from, "from", 0, "first raft index to check (for a topic whose retention dropped its start)")
	return cmd
}

// printMirrorReport writes the report of `ordo operator mirror verify`.
func printMirrorReport(w io.Writer, rep mirror.Report) error {
	verdict := "OK: every event exactly once, each partition in log order"
	if !rep.OK {
		verdict = "MISMATCH"
	}
	fmt.Fprintf(w, "Topic %s (%d partitions): %d records; %d archived events checked from index %d through %s; %d not mirrored yet (%s)\n",
		rep.Topic, rep.Partitions, rep.Records, rep.Checked, rep.From, rep.Through, rep.Pending, rep.Elapsed.Round(time.Millisecond))
	for _, f := range []struct {
		name string
		f    mirror.Finding
	}{{"Missing", rep.Missing}, {"Duplicates", rep.Duplicates}, {"Out of order", rep.OutOfOrder},
		{"Wrong partition", rep.WrongPartition}, {"Unknown", rep.Unknown}, {"Mismatched", rep.Mismatched}} {
		fmt.Fprintf(w, "%-16s %d\n", f.name, f.f.Count)
		for _, e := range f.f.Examples {
			fmt.Fprintf(w, "  %s\n", e)
		}
	}
	_, err := fmt.Fprintln(w, verdict)
	return err
}
