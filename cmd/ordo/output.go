package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
)

// printJSON writes raw, a JSON answer from the server, indented the way
// Nomad's -json output is.
func printJSON(w io.Writer, raw json.RawMessage) error {
	var b bytes.Buffer
	if err := json.Indent(&b, raw, "", "    "); err != nil {
		return fmt.Errorf("indent JSON: %w", err)
	}
	b.WriteByte('\n')
	_, err := w.Write(b.Bytes())
	return err
}

// printJSONLine writes raw as one line of compact JSON (ndjson).
func printJSONLine(w io.Writer, raw json.RawMessage) error {
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return fmt.Errorf("compact JSON: %w", err)
	}
	b.WriteByte('\n')
	_, err := w.Write(b.Bytes())
	return err
}

// printTable writes a table with a header row, columns aligned with two
// spaces between them.
func printTable(w io.Writer, header []string, rows [][]string) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	writeRow(tw, header)
	for _, r := range rows {
		writeRow(tw, r)
	}
	return tw.Flush()
}

func writeRow(w io.Writer, cells []string) {
	clean := make([]string, len(cells))
	for i, c := range cells {
		clean[i] = cell(c)
	}
	fmt.Fprintln(w, strings.Join(clean, "\t"))
}

// cell keeps a value on one line and out of the tabwriter's way.
func cell(s string) string {
	return strings.NewReplacer("\t", " ", "\n", " ", "\r", " ").Replace(s)
}

// pair is one "Key = value" line.
type pair struct{ key, value string }

// printPairs writes "Key = value" lines with the equals signs aligned.
func printPairs(w io.Writer, pairs []pair) error {
	tw := tabwriter.NewWriter(w, 0, 0, 1, ' ', 0)
	for _, p := range pairs {
		fmt.Fprintf(tw, "%s\t= %s\n", cell(p.key), cell(p.value))
	}
	return tw.Flush()
}

// event is the part of an API event the CLI shows; see commands/httpapi.Event.
type event struct {
	Topic   string
	Type    string
	Key     string
	Index   uint64
	Seq     uint32
	Version uint16
	Time    time.Time
	Payload json.RawMessage
}

// formatEvent renders e as one line:
//
//	<index>/<seq>  <time RFC3339>  <Type> v<Version>  <Topic> <Key>  <payload as compact JSON>
//
// An empty topic or key shows as "-", a missing payload as null.
func formatEvent(e event) (string, error) {
	payload := []byte("null")
	if len(e.Payload) > 0 {
		var b bytes.Buffer
		if err := json.Compact(&b, e.Payload); err != nil {
			return "", fmt.Errorf("event %d/%d payload: %w", e.Index, e.Seq, err)
		}
		payload = b.Bytes()
	}
	return fmt.Sprintf("%d/%d  %s  %s v%d  %s %s  %s", e.Index, e.Seq, e.Time.UTC().Format(time.RFC3339),
		e.Type, e.Version, orDash(e.Topic), orDash(e.Key), payload), nil
}

// printEvent writes raw, an API event, as a formatted line or, with
// asJSON, as one line of JSON.
func printEvent(w io.Writer, raw json.RawMessage, asJSON bool) error {
	if asJSON {
		return printJSONLine(w, raw)
	}
	var e event
	if err := json.Unmarshal(raw, &e); err != nil {
		return fmt.Errorf("decode event: %w", err)
	}
	line, err := formatEvent(e)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(w, line)
	return err
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// show reads path and prints the server's answer: its JSON as is with
// -json, else render of it decoded into T. what names the read in errors.
func show[T any](cmd *cobra.Command, g *globals, path string, q url.Values, what string, asJSON bool,
	render func(io.Writer, T) error) error {
	out := &outputFlags{json: asJSON, template: templateFlag(cmd)} // -t: addTemplateFlag, format.go
	return showWith(cmd, g, path, q, what, out, render)            // nodepool.go
}
