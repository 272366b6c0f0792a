package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/ordoplane/ordo/history/export"
)

// logPage is the answer of GET /v1/operator/log.
type logPage struct {
	Events []json.RawMessage
	// NextIndex is the from of the next page; 0 at the end of the log.
	NextIndex uint64
	LastIndex uint64
	Length    uint64
}

// streamFrame is one line of GET /v1/operator/log/stream; {} is a heartbeat.
type streamFrame struct {
	Index  uint64
	Events []json.RawMessage
}

func newLogCommand(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "log",
		Short: "Read the cluster's event log",
	}
	cmd.AddCommand(newLogShowCommand(g), newLogTailCommand(g), newLogExportCommand(g))
	return cmd
}

func newLogShowCommand(g *globals) *cobra.Command {
	var (
		from, limit uint64
		all, asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "show",
		Short: "Print archived events in commit order",
		Long: `Print archived events in commit order, one line each:

  <index>/<seq>  <time>  <Type> v<Version>  <Topic> <Key>  <payload>

A page holds whole entries, so it may hold a few more than -limit events.
With -all, pages are read until the end of the log. With -json, each event
is printed as one line of JSON.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := g.client()
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			for {
				q := url.Values{}
				q.Set("from", strconv.FormatUint(from, 10))
				q.Set("limit", strconv.FormatUint(limit, 10))
				var page logPage
				if err := c.Get(cmd.Context(), "/v1/operator/log", q, &page); err != nil {
					return fmt.Errorf("read log from index %d: %w", from, err)
				}
				for _, raw := range page.Events {
					if err := printEvent(out, raw, asJSON); err != nil {
						return err
					}
				}
				if page.NextIndex == 0 {
					return nil
				}
				if !all {
					fmt.Fprintf(cmd.ErrOrStderr(), "(more events from index %d: ordo log show -from %d, or -all)\n",
						page.NextIndex, page.NextIndex)
					return nil
				}
				from = page.NextIndex
			}
		},
	}
	cmd.Flags().Uint64Var(&from, "from", 1, "first raft index to show")
	cmd.Flags().Uint64Var(&limit, "limit", 100, "events per page (1-10000)")
	cmd.Flags().BoolVar(&all, "all", false, "follow pages to the end of the log")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print each event as one line of JSON")
	return cmd
}

func newLogTailCommand(g *globals) *cobra.Command {
	var (
		index  uint64
		topics []string
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "tail",
		Short: "Follow events as they are committed",
		Long: `Follow events as they are committed, in the format of 'ordo log show',
until interrupted. -index starts from an older raft index; -topic Topic:Key
(repeatable; Key may be *) selects events.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			q := url.Values{}
			if index > 0 {
				q.Set("index", strconv.FormatUint(index, 10))
			}
			for _, t := range topics {
				q.Add("topic", t)
			}
			return followStream(cmd, g, "open event stream", "/v1/operator/log/stream", q, func(r io.Reader, w io.Writer) error {
				return tailFrames(r, w, asJSON)
			}) // agentmonitor.go
		},
	}
	cmd.Flags().Uint64Var(&index, "index", 0, "raft index to start from; default the next one committed")
	cmd.Flags().StringArrayVar(&topics, "topic", nil, "Topic:Key to follow; repeatable (default all)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print each event as one line of JSON")
	return cmd
}

// tailFrames prints the events of each ndjson frame read from r, skipping
// heartbeats, until r ends.
func tailFrames(r io.Reader, w io.Writer, asJSON bool) error {
	dec := json.NewDecoder(r)
	for {
		var f streamFrame
		err := dec.Decode(&f)
		if errors.Is(err, io.EOF) {
			return errors.New("event stream closed by the server")
		}
		if err != nil {
			return fmt.Errorf("read event stream: %w", err)
		}
		for _, raw := range f.Events {
			if err := printEvent(w, raw, asJSON); err != nil {
				return err
			}
		}
	}
}

func newLogExportCommand(g *globals) *cobra.Command {
	var (
		from, to uint64
		state    bool
	)
	cmd := &cobra.Command{
		Use:   "export [flags] FILE",
		Short: "Write a slice of the log to a portable history file",
		Long: `Write the archived events with raft indexes in [-from, -to] to FILE, a
portable history file: a header (cluster id, first and last index, event
count, format version, time), the events exactly as archived, and a SHA-256
trailer. 'ordo replay FILE -- <read command>' answers reads from it with no
cluster. The server exports from one snapshot of its own archive; the file is
written to FILE.partial, checked whole, then renamed. FILE "-" writes to
standard output unchecked.

A slice that starts after index 1 carries, by default, every projection as
it stood at -from minus 1 (the server rebuilds it from the archive), so a
replay shows the whole cluster; -state=false leaves it out, and a replay of
the slice then shows only what its own events build.`,
		Args: oneArg("FILE"),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := g.client()
			if err != nil {
				return err
			}
			q := url.Values{}
			q.Set("from", strconv.FormatUint(from, 10))
			q.Set("to", strconv.FormatUint(to, 10))
			q.Set("state", strconv.FormatBool(state))
			body, err := c.Stream(cmd.Context(), "/v1/operator/log/export", q)
			if err != nil {
				return fmt.Errorf("export log: %w", err)
			}
			defer body.Close()
			if args[0] == "-" {
				_, err := io.Copy(cmd.OutOrStdout(), body)
				return err
			}
			return saveExport(cmd.OutOrStdout(), body, args[0])
		},
	}
	cmd.Flags().Uint64Var(&from, "from", 1, "first raft index to export")
	cmd.Flags().Uint64Var(&to, "to", 0, "last raft index to export (default the end of the log)")
	cmd.Flags().BoolVar(&state, "state", true, "with -from after 1, start the file with the state at -from minus 1")
	return cmd
}

// saveExport writes an export to path through path.partial, checks it
// and renames it into place.
func saveExport(out io.Writer, body io.Reader, path string) error {
	tmp := path + ".partial"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	defer os.Remove(tmp) // a no-op once renamed
	if _, err := io.Copy(f, body); err != nil {
		f.Close()
		return fmt.Errorf("export log: download: %w", err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		f.Close()
		return err
	}
	sum, err := export.Verify(bufio.NewReader(f))
	f.Close()
	if err != nil {
		return fmt.Errorf("export log: the file received does not check out: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	h := sum.Header
	fmt.Fprintf(out, "Exported %d events (indexes %d to %d) of cluster %s to %s\n", sum.Events, h.FirstIndex, h.LastIndex, h.ClusterID, path)
	if h.StateIndex > 0 {
		fmt.Fprintf(out, "With the state at index %d (%d rows)\n", h.StateIndex, sum.StateRows)
	}
	fmt.Fprintf(out, "%d bytes, SHA-256 %s\n", sum.Bytes, sum.Checksum)
	return nil
}
