package nomadevents

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"

	"github.com/ordoplane/ordo/events"
)

// TestMapScripts runs testdata/map (datadriven; rewrite the expectations
// with -rewrite). Each "map index=N" block's input is one entry, an event
// a line: its ordo type and its payload as JSON. The output is the Nomad
// events of the entry, one a line:
//
//	<Topic> <Type> <Key> [ns=<namespace>] [read-at=<index>]
//
// read-at appears for an entity the entry removed, read before it. A line
// may start with cmd=<id>, the command (correlation id) of a grouped
// entry the event belongs to.
func TestMapScripts(t *testing.T) {
	datadriven.RunTest(t, "testdata/map", func(t *testing.T, d *datadriven.TestData) string {
		if d.Cmd != "map" {
			t.Fatalf("unknown command %q", d.Cmd)
		}
		var index uint64 = 10
		d.MaybeScanArgs(t, "index", &index)
		var entry []*events.Event
		for i, line := range strings.Split(strings.TrimSpace(d.Input), "\n") {
			line = strings.TrimSpace(line)
			var cmd string
			if rest, ok := strings.CutPrefix(line, "cmd="); ok {
				cmd, line, _ = strings.Cut(rest, " ")
			}
			typ, body, _ := strings.Cut(line, " ")
			if typ == "" {
				continue
			}
			et, ok := events.Lookup(typ)
			if !ok {
				t.Fatalf("unknown event type %q", typ)
			}
			p := et.New()
			if err := json.Unmarshal([]byte(body), p); err != nil {
				t.Fatalf("%s payload: %v", typ, err)
			}
			ev, err := events.New(fmt.Sprintf("ev%d", i), p)
			if err != nil {
				t.Fatal(err)
			}
			ev.Index, ev.Seq, ev.CorrelationID = index, uint32(i), cmd
			entry = append(entry, &ev)
		}
		refs, err := Map(entry)
		if err != nil {
			return "error: " + err.Error() + "\n"
		}
		var b strings.Builder
		for _, r := range refs {
			fmt.Fprintf(&b, "%s %s %s", r.Topic, r.Type, r.Key)
			if r.Namespace != "" {
				fmt.Fprintf(&b, " ns=%s", r.Namespace)
			}
			if r.Removed {
				fmt.Fprintf(&b, " read-at=%d", r.ReadAt(index))
			}
			b.WriteString("\n")
		}
		if b.Len() == 0 {
			return "(none)\n"
		}
		return b.String()
	})
}
