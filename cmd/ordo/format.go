package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strconv"
	"strings"
	"text/template"
	"time"

	"github.com/spf13/cobra"
)

// shortIDLength is how many characters of an id tables show unless
// -verbose is given, as Nomad's CLI does.
const shortIDLength = 8

// display renders ids, times and sizes the way Nomad's CLI does: short
// ids and relative times by default, full ids and timestamps with
// -verbose. Get one from globals.display(); its zero value is terse and
// measures relative times from the zero time.
type display struct {
	// verbose shows full ids and absolute timestamps.
	verbose bool
	// now is the instant relative times are measured from (the command's
	// clock, fixed in tests).
	now time.Time
}

// id returns id cut to eight characters, or whole under -verbose.
func (d display) id(id string) string {
	if d.verbose {
		return id
	}
	return shortID(id)
}

// shortID returns the first eight characters of id (all of a shorter id).
func shortID(id string) string {
	if len(id) <= shortIDLength {
		return id
	}
	return id[:shortIDLength]
}

// when returns t as "2m ago" (or "5m from now" for a future time), or as an RFC
// 3339 UTC timestamp under -verbose; "" for the zero time.
func (d display) when(t time.Time) string {
	if t.IsZero() || t.UnixNano() == 0 {
		return ""
	}
	if d.verbose {
		return t.UTC().Format(time.RFC3339)
	}
	return relativeTime(t, d.now)
}

// whenNS is when of a Unix time in nanoseconds, the API's form of
// CreateTime, ModifyTime and SubmitTime; 0 gives "".
func (d display) whenNS(ns int64) string {
	if ns == 0 {
		return ""
	}
	return d.when(time.Unix(0, ns))
}

// timestamp returns t as an RFC 3339 UTC timestamp followed by how long ago
// it was ("2026-01-02T15:04:05Z (2m ago)"), the timestamp alone under
// -verbose; "" for the zero time. Detail views use it where a bare
// relative time would lose the date.
func (d display) timestamp(t time.Time) string {
	if t.IsZero() || t.UnixNano() == 0 {
		return ""
	}
	if d.verbose {
		return t.UTC().Format(time.RFC3339)
	}
	return t.UTC().Format(time.RFC3339) + " (" + relativeTime(t, d.now) + ")"
}

// relativeTime says how far t is from now in at most its two largest
// units, rounded to the second: "0s ago", "45s ago", "2m ago", "1h5m ago",
// "3d2h ago", "1y20d ago", or "5m from now" for a time after now.
func relativeTime(t, now time.Time) string {
	d := now.Round(time.Second).Sub(t.Round(time.Second))
	future := d < 0
	if future {
		d = -d
	}
	s := compactDuration(d)
	if future {
		return s + " from now"
	}
	return s + " ago"
}

// compactDuration writes d in its two largest non-zero units of years
// (365 days), days, hours, minutes and seconds, dropping any fraction of a
// second: 90m is "1h30m", 49h is "2d1h", 0 is "0s".
func compactDuration(d time.Duration) string {
	secs := int64(d / time.Second)
	units := []struct {
		name string
		size int64
	}{{"y", 365 * 24 * 3600}, {"d", 24 * 3600}, {"h", 3600}, {"m", 60}, {"s", 1}}
	var b strings.Builder
	shown := 0
	for _, u := range units {
		n := secs / u.size
		secs %= u.size
		if n == 0 {
			if shown > 0 {
				break // "1h5s" would skip the minutes: stop at the gap
			}
			continue
		}
		b.WriteString(strconv.FormatInt(n, 10))
		b.WriteString(u.name)
		if shown++; shown == 2 {
			break
		}
	}
	if b.Len() == 0 {
		return "0s"
	}
	return b.String()
}

// humanBytes writes n bytes in powers of 1024 with one decimal where it
// matters: 512 B, 1.5 KiB, 64 MiB, 2.3 GiB. A negative n is "unlimited"
// (the API's mark for no bound).
func humanBytes(n int64) string {
	if n < 0 {
		return "unlimited"
	}
	const unit = 1024
	if n < unit {
		return strconv.FormatInt(n, 10) + " B"
	}
	v, i := float64(n), -1
	for v >= unit && i < 5 {
		v /= unit
		i++
	}
	s := strconv.FormatFloat(v, 'f', 1, 64)
	s = strings.TrimSuffix(s, ".0")
	return s + " " + string("KMGTPE"[i]) + "iB"
}

// humanMiB is humanBytes of a size the API gives in MiB (MemoryMB, DiskMB);
// negative is "unlimited".
func humanMiB(mb int64) string {
	if mb < 0 {
		return "unlimited"
	}
	return humanBytes(mb << 20)
}

// outputFlags are a read command's -json and -t flags (Nomad's): print the
// server's answer as indented JSON, or through a Go template, instead of
// the human rendering. Add them with addOutputFlags.
type outputFlags struct {
	json     bool
	template string
}

// addOutputFlags registers -json and -t on cmd and returns where they land.
func addOutputFlags(cmd *cobra.Command) *outputFlags {
	o := &outputFlags{}
	cmd.Flags().BoolVar(&o.json, "json", false, "print the server's answer as JSON")
	cmd.Flags().StringVarP(&o.template, "t", "t", "", "print the server's answer through this Go template (text/template)")
	return o
}

// errJSONAndTemplate is the error of giving both -json and -t.
var errJSONAndTemplate = errors.New("both -json and -t given: choose one")

// active reports whether -json or -t asks for a machine format; it fails
// when both are given.
func (o *outputFlags) active() (bool, error) {
	if o == nil {
		return false, nil
	}
	if o.json && o.template != "" {
		return false, errJSONAndTemplate
	}
	return o.json || o.template != "", nil
}

// write prints raw, a JSON answer of the server, as -json or -t ask.
// Call it only when active() is true.
func (o *outputFlags) write(w io.Writer, raw json.RawMessage) error {
	if o.template == "" {
		return printJSON(w, raw)
	}
	return printTemplate(w, o.template, raw)
}

// writeValue is write for a value the CLI built (a list joined from
// several answers, say): it is marshalled to JSON first, so -json and -t
// see the same field names as the API's.
func (o *outputFlags) writeValue(w io.Writer, v any) error {
	raw, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode output: %w", err)
	}
	return o.write(w, raw)
}

// printTemplate runs the Go template text over raw decoded as generic JSON
// (objects as maps, so {{.ID}} and {{range .}} work as on Nomad's structs;
// numbers kept exact) and writes the result and a newline.
func printTemplate(w io.Writer, text string, raw json.RawMessage) error {
	tmpl, err := template.New("-t").Option("missingkey=zero").Parse(text)
	if err != nil {
		return fmt.Errorf("-t: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var data any
	if err := dec.Decode(&data); err != nil {
		return fmt.Errorf("-t: decode answer: %w", err)
	}
	var b bytes.Buffer
	if err := tmpl.Execute(&b, data); err != nil {
		return fmt.Errorf("-t: %w", err)
	}
	b.WriteByte('\n')
	_, err = w.Write(b.Bytes())
	return err
}

// showOut reads path and prints the server's answer: as -json or -t ask,
// else render of it decoded into T with the command's display (short ids
// and relative times unless -verbose). what names the read in errors.
func showOut[T any](cmd *cobra.Command, g *globals, path string, q url.Values, what string, out *outputFlags,
	render func(io.Writer, display, T) error) error {
	machine, err := out.active()
	if err != nil {
		return err
	}
	c, err := g.client()
	if err != nil {
		return err
	}
	var raw json.RawMessage
	if err := c.Get(cmd.Context(), path, q, &raw); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if machine {
		return out.write(cmd.OutOrStdout(), raw)
	}
	var v T
	if err := json.Unmarshal(raw, &v); err != nil {
		return fmt.Errorf("%s: decode: %w", what, err)
	}
	return render(cmd.OutOrStdout(), g.display(), v)
}

// addTemplateFlag gives a command that prints through show (with its own
// -json flag) Nomad's -t flag too.
func addTemplateFlag(cmd *cobra.Command) {
	cmd.Flags().StringP("t", "t", "", "print the server's answer through this Go template (text/template)")
}

// templateFlag returns the -t template given to cmd, "" without one.
func templateFlag(cmd *cobra.Command) string {
	f := cmd.Flags().Lookup("t")
	if f == nil {
		return ""
	}
	return f.Value.String()
}
