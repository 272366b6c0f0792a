package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/keyring"
	"github.com/ordoplane/ordo/storage/snapshots"
)

// snapshotRestored is the answer of PUT /v1/operator/snapshot
// (history/backup.Result).
type snapshotRestored struct {
	Index, SnapshotIndex uint64
	ClusterID            string
	Rows                 uint64
	Bytes                int64
	Checksum             string
	// RecordedAt is the index of the SnapshotRestored event recording it.
	RecordedAt uint64
}

func newSnapshotCommand(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "snapshot",
		Short: "Save the cluster's whole state to a file, inspect one, restore one",
		Long: `A snapshot file holds the whole state of the cluster as one server held it
at one raft index: the archive (every event) and every projection, with a
header and a SHA-256 trailer. 'save' writes one, 'inspect' checks and
describes one, 'restore' replaces the cluster's state with one
(docs/operations.md).`,
	}
	cmd.AddCommand(newSnapshotSaveCommand(g), newSnapshotRestoreCommand(g), newSnapshotInspectCommand())
	return cmd
}

func newSnapshotSaveCommand(g *globals) *cobra.Command {
	var stale bool
	cmd := &cobra.Command{
		Use:   "save [flags] FILE",
		Short: "Save the cluster's whole state to FILE",
		Long: `Save the leader's whole state (with -stale, the answering server's) to
FILE, a snapshot file. The file is written to FILE.partial, checked whole,
then renamed. Saving needs a management token when ACLs are on.`,
		Args: oneArg("FILE"),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := g.client()
			if err != nil {
				return err
			}
			// The file first: a path that cannot be written fails before
			// the server streams anything.
			path, tmp := args[0], args[0]+".partial"
			f, err := os.Create(tmp)
			if err != nil {
				return fmt.Errorf("save snapshot: %w", err)
			}
			defer os.Remove(tmp) // a no-op once renamed
			defer f.Close()
			q := url.Values{}
			if stale {
				q.Set("stale", "true")
			}
			body, err := c.Stream(cmd.Context(), "/v1/operator/snapshot", q)
			if err != nil {
				return fmt.Errorf("save snapshot: %w", err)
			}
			defer body.Close()
			return saveSnapshot(cmd.OutOrStdout(), body, f, path)
		},
	}
	cmd.Flags().BoolVar(&stale, "stale", false, "let any server answer with its own state, even without a leader")
	return cmd
}

// saveSnapshot downloads a snapshot file from body into f (path's
// ".partial" file), checks it whole and renames it to path.
func saveSnapshot(out io.Writer, body io.Reader, f *os.File, path string) error {
	if _, err := io.Copy(f, body); err != nil {
		return fmt.Errorf("save snapshot: download: %w", err)
	}
	if err := f.Sync(); err != nil {
		return err
	}
	sum, err := snapshots.VerifyFile(f.Name(), nil)
	if err != nil {
		return fmt.Errorf("save snapshot: the file received does not check out: %w", err)
	}
	if err := os.Rename(f.Name(), path); err != nil {
		return err
	}
	fmt.Fprintf(out, "Saved the state of cluster %s at index %d to %s\n", sum.Header.ClusterID, sum.Header.Index, path)
	fmt.Fprintf(out, "%d rows, %d bytes, SHA-256 %s\n", sum.Rows, sum.Bytes, sum.Checksum)
	return nil
}

func newSnapshotRestoreCommand(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "restore FILE",
		Short: "Replace the cluster's whole state with the snapshot in FILE",
		Long: `Replace the whole state of the cluster — the archive and every projection —
with the snapshot in FILE. The file is checked here, then sent to the
leader, which checks it whole again before anything is installed. Raft
installs it at a new index past the log, on every server; the leader's
processors start again from it. Writes in flight during the restore fail
and may be retried. Events appended after the file was saved are no longer
in the archive. Restoring needs a management token when ACLs are on.`,
		Args: oneArg("FILE"),
		RunE: func(cmd *cobra.Command, args []string) error {
			sum, err := snapshots.VerifyFile(args[0], nil)
			if err != nil {
				return fmt.Errorf("restore snapshot: %s does not check out: %w", args[0], err)
			}
			f, err := os.Open(args[0])
			if err != nil {
				return err
			}
			defer f.Close()
			c, err := g.client()
			if err != nil {
				return err
			}
			var res snapshotRestored
			if err := c.Put(cmd.Context(), "/v1/operator/snapshot", f, &res); err != nil {
				return fmt.Errorf("restore snapshot: %w", err)
			}
			out := cmd.OutOrStdout()
			fmt.Fprintf(out, "Restored the state of cluster %s saved at index %d (%d rows, SHA-256 %s)\n",
				res.ClusterID, res.SnapshotIndex, res.Rows, res.Checksum)
			fmt.Fprintf(out, "The cluster now stands at index %d\n", res.Index)
			if res.RecordedAt != 0 {
				fmt.Fprintf(out, "Recorded in the log at index %d (ordo history server <leader>)\n", res.RecordedAt)
			} else {
				fmt.Fprintln(out, "Warning: the restore is not recorded in the log (see the leader's log output)")
			}
			if res.Checksum != sum.Checksum {
				return fmt.Errorf("restore snapshot: the server read SHA-256 %s, the file is %s", res.Checksum, sum.Checksum)
			}
			return nil
		},
	}
	return cmd
}

// snapshotInspection is what `ordo operator snapshot inspect` reports.
type snapshotInspection struct {
	Header   snapshots.Header
	Checksum string
	Bytes    int64
	Rows     uint64
	// Events is how many archived events the file holds; Tables the rows
	// and bytes of each projection table; Other the rest (metadata).
	Events uint64
	Tables map[string]*tableSize
	Other  tableSize
	// RootKeys are the ids of the root keys the state knows: their
	// material is not in the file but in the saving cluster's keystores.
	RootKeys []string
}

// tableSize counts rows and their bytes (keys and values).
type tableSize struct{ Rows, Bytes uint64 }

func (t *tableSize) add(k, v []byte) { t.Rows++; t.Bytes += uint64(len(k) + len(v)) }

func newSnapshotInspectCommand() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "inspect [flags] FILE",
		Short: "Check a snapshot file whole and describe what it holds",
		Args:  oneArg("FILE"),
		RunE: func(cmd *cobra.Command, args []string) error {
			in, err := inspectSnapshot(args[0])
			if err != nil {
				return fmt.Errorf("inspect snapshot: %s: %w", args[0], err)
			}
			if asJSON {
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				return enc.Encode(in)
			}
			return printInspection(cmd.OutOrStdout(), in)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

// inspectSnapshot reads the whole snapshot file at path and counts what
// it holds.
func inspectSnapshot(path string) (snapshotInspection, error) {
	in := snapshotInspection{Tables: map[string]*tableSize{}}
	var events tableSize
	sum, err := snapshots.VerifyFile(path, func(k, v []byte) error {
		switch t, ok := projections.KeyTable(k); {
		case bytes.HasPrefix(k, []byte("log/")):
			events.add(k, v)
		case ok:
			if in.Tables[t] == nil {
				in.Tables[t] = &tableSize{}
			}
			in.Tables[t].add(k, v)
			if row := "t/" + keyring.Table + "\x00"; bytes.HasPrefix(k, []byte(row)) {
				in.RootKeys = append(in.RootKeys, string(k[len(row):]))
			}
		default:
			in.Other.add(k, v)
		}
		return nil
	})
	if err != nil {
		return in, err
	}
	in.Header, in.Checksum, in.Bytes, in.Rows, in.Events = sum.Header, sum.Checksum, sum.Bytes, sum.Rows, events.Rows
	return in, nil
}

// rootKeys describes the root keys a snapshot's state knows.
func rootKeys(ids []string) string {
	if len(ids) == 0 {
		return "none"
	}
	return strings.Join(ids, ", ") + " (material not in the file: a restore into another cluster needs them in its keystore)"
}

// printInspection writes inspect's report.
func printInspection(w io.Writer, in snapshotInspection) error {
	h := in.Header
	last := "-"
	if h.LastTime != 0 {
		last = time.Unix(0, h.LastTime).UTC().Format(time.RFC3339)
	}
	fields := [][2]string{
		{"Cluster", h.ClusterID}, {"Saved by", h.Server}, {"Index", strconv.FormatUint(h.Index, 10)},
		{"Last entry", last}, {"Created", h.Created.Format(time.RFC3339)}, {"Ordo version", h.OrdoVersion},
		{"Format", strconv.Itoa(int(h.FormatVersion))}, {"Size", fmt.Sprintf("%d bytes", in.Bytes)},
		{"Rows", strconv.FormatUint(in.Rows, 10)}, {"Events", strconv.FormatUint(in.Events, 10)},
		{"SHA-256", in.Checksum},
		{"Root keys", rootKeys(in.RootKeys)},
	}
	for _, f := range fields {
		fmt.Fprintf(w, "%-13s= %s\n", f[0], f[1])
	}
	names := make([]string, 0, len(in.Tables))
	for t := range in.Tables {
		names = append(names, t)
	}
	sort.Strings(names)
	rows := make([][]string, 0, len(names)+1)
	for _, t := range names {
		rows = append(rows, []string{t, strconv.FormatUint(in.Tables[t].Rows, 10), strconv.FormatUint(in.Tables[t].Bytes, 10)})
	}
	rows = append(rows, []string{"(metadata)", strconv.FormatUint(in.Other.Rows, 10), strconv.FormatUint(in.Other.Bytes, 10)})
	fmt.Fprintln(w)
	if err := printTable(w, []string{"Table", "Rows", "Bytes"}, rows); err != nil {
		return err
	}
	if len(h.Projections) > 0 {
		pn := make([]string, 0, len(h.Projections))
		for p := range h.Projections {
			pn = append(pn, p)
		}
		sort.Strings(pn)
		prows := make([][]string, len(pn))
		for i, p := range pn {
			prows[i] = []string{p, strconv.Itoa(h.Projections[p])}
		}
		fmt.Fprintln(w)
		return printTable(w, []string{"Projection", "Version"}, prows)
	}
	return nil
}
