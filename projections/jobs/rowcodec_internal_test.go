package jobs

import (
	"bytes"
	"math"
	"testing"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/ordoplane/ordo/events"
)

// The rows' plain twins, without their encoders: what reflection writes.
type (
	plainRef      allocRef
	plainCounts   TaskGroupSummary
	plainChildren Children
	plainSummary  struct {
		Groups         map[string]plainCounts `msgpack:"g,omitempty"`
		Children       *plainChildren         `msgpack:"ch,omitempty"`
		Status         string                 `msgpack:"st"`
		JobCreateIndex uint64                 `msgpack:"jci"`
	}
)

func init() { events.SortMapKeys(map[string]plainCounts(nil)) }

// sameBytes fails t unless got and want encode alike.
func sameBytes(t *testing.T, got, want any) {
	t.Helper()
	g, err := events.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	w, err := events.Marshal(want)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(g, w) {
		t.Errorf("%+v encoded %x\nreflection %x", got, g, w)
	}
	// Within another value, a row encodes through msgpack's encoder.
	var buf bytes.Buffer
	enc := msgpack.NewEncoder(&buf)
	enc.SetSortMapKeys(true)
	if err := enc.Encode(got); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(buf.Bytes(), w) {
		t.Errorf("%+v encoded by an encoder %x\nreflection %x", got, buf.Bytes(), w)
	}
}

// TestRowEncoders: allocation references, group counts, children counts
// and summary rows, with every field set, none, each alone and at the
// ends of its type's range, encode as reflection encodes them (a stored
// projection stays valid, and a rebuild equals one built before).
func TestRowEncoders(t *testing.T) {
	for _, r := range []allocRef{{}, {Namespace: "default", JobID: "web", Group: "g", ClientStatus: "running", JobCreateIndex: 7},
		{JobCreateIndex: math.MaxUint64}, {JobCreateIndex: 128}} {
		sameBytes(t, &r, (*plainRef)(&r))
	}
	groups := []TaskGroupSummary{{}, {1, 2, 3, 4, 5, 6, 7}, {Queued: -1}, {Complete: math.MaxInt}, {Failed: math.MinInt},
		{Running: 1}, {Starting: 200}, {Lost: 1 << 40}, {Unknown: -129}}
	for _, c := range groups {
		sameBytes(t, &c, (*plainCounts)(&c))
	}
	children := []Children{{}, {Pending: 1, Running: 2, Dead: 3}, {Pending: math.MinInt64}, {Running: math.MaxInt64}, {Dead: -1}}
	for _, c := range children {
		sameBytes(t, &c, (*plainChildren)(&c))
	}
	for _, s := range []struct {
		groups   map[string]TaskGroupSummary
		children *Children
	}{
		{nil, nil}, {map[string]TaskGroupSummary{}, nil}, {map[string]TaskGroupSummary{"web": groups[1], "db": {}, "a": groups[4]}, nil},
		{nil, &Children{}}, {map[string]TaskGroupSummary{"web": {Running: 1}}, &children[1]},
	} {
		row := summaryRow{Groups: counts(s.groups), Children: s.children, Status: StatusRunning, JobCreateIndex: 9}
		plain := plainSummaryOf(row.Status, row.JobCreateIndex, s.groups, s.children)
		sameBytes(t, &row, &plain)
	}
}

// plainSummaryOf returns a summary row as reflection stored it before its
// groups were a sorted slice.
func plainSummaryOf(status string, jci uint64, groups map[string]TaskGroupSummary, children *Children) plainSummary {
	plain := plainSummary{Status: status, JobCreateIndex: jci, Children: (*plainChildren)(children)}
	if len(groups) > 0 {
		plain.Groups = map[string]plainCounts{}
		for name, c := range groups {
			plain.Groups[name] = plainCounts(c)
		}
	}
	return plain
}
