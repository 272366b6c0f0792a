package jobs

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/ordoplane/ordo/events"
)

// TestSummaryEncodesAs: encodesAs, which spares a summary's rewrite
// (N15), says two summaries are equal exactly when their encodings are,
// and a clone shares nothing with its original.
func TestSummaryEncodesAs(t *testing.T) {
	rows := []*summaryRow{
		{},
		{Groups: groupCounts{}},
		{Groups: counts(map[string]TaskGroupSummary{"web": {}})},
		{Groups: counts(map[string]TaskGroupSummary{"web": {Running: 1}})},
		{Groups: counts(map[string]TaskGroupSummary{"web": {Running: 1}, "db": {}})},
		{Children: &Children{}},
		{Children: &Children{Running: 2}},
		{Status: StatusRunning},
		{JobCreateIndex: 4},
	}
	for i, a := range rows {
		for j, b := range rows {
			ea, _ := events.Marshal(a)
			eb, _ := events.Marshal(b)
			if got, want := a.encodesAs(b), bytes.Equal(ea, eb); got != want {
				t.Errorf("rows %d and %d: encodesAs %v, equal encodings %v", i, j, got, want)
			}
		}
	}
	many := &summaryRow{}
	for i := range 20 {
		many.Groups.set(fmt.Sprint("g", i), TaskGroupSummary{Running: i})
	}
	first, _ := events.Marshal(many)
	for range 20 {
		if again, _ := events.Marshal(many); !bytes.Equal(first, again) {
			t.Fatal("a summary of several groups encoded to different bytes")
		}
	}
	s := &summaryRow{Groups: counts(map[string]TaskGroupSummary{"web": {Running: 1}}), Children: &Children{Dead: 1}}
	c := s.clone()
	c.Groups.set("web", TaskGroupSummary{})
	c.Children.Dead = 5
	if g, _ := s.Groups.get("web"); g.Running != 1 || s.Children.Dead != 1 {
		t.Errorf("changing a clone changed the original: %+v %+v", s.Groups, s.Children)
	}
}

// counts returns m's counts as a summary row holds them.
func counts(m map[string]TaskGroupSummary) groupCounts {
	var gs groupCounts
	for name, c := range m {
		gs.set(name, c)
	}
	return gs
}

// TestGroupCountsEncodeAsMap: a summary row encodes to the bytes its map
// of groups did, so a stored projection stays valid (and a rebuild equals
// one built before), and decodes those bytes back, a key given twice
// keeping its last counts.
func TestGroupCountsEncodeAsMap(t *testing.T) {
	for _, m := range []map[string]TaskGroupSummary{
		nil,
		{},
		{"web": {Running: 2, Queued: 1}},
		{"web": {Running: 1}, "db": {Failed: 3}, "cache": {}, "a": {Lost: 1, Unknown: 2, Complete: 4, Starting: 5}},
	} {
		row := summaryRow{Groups: counts(m), Status: StatusRunning, JobCreateIndex: 9, Children: &Children{Dead: 1}}
		old := plainSummaryOf(row.Status, row.JobCreateIndex, m, row.Children)
		sameBytes(t, &row, &old)
		want, err := events.Marshal(&old)
		if err != nil {
			t.Fatal(err)
		}
		back, err := decodeSummary(want)
		if err != nil {
			t.Fatal(err)
		}
		if !back.encodesAs(&row) || len(back.Groups) != len(m) {
			t.Errorf("groups %v: decoded %+v", m, back.Groups)
		}
		for name, c := range m {
			if g, ok := back.Groups.get(name); !ok || g != c {
				t.Errorf("group %s: decoded %+v, %v; want %+v", name, g, ok, c)
			}
		}
	}
	// Two entries of one group, out of order: the last one counts.
	var b bytes.Buffer
	enc := msgpack.NewEncoder(&b)
	enc.EncodeMapLen(1)
	enc.EncodeString("g")
	enc.EncodeMapLen(3)
	for _, g := range []struct {
		name string
		n    int
	}{{"web", 1}, {"db", 2}, {"web", 3}} {
		enc.EncodeString(g.name)
		enc.Encode(&TaskGroupSummary{Running: g.n})
	}
	back, err := decodeSummary(b.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	web, _ := back.Groups.get("web")
	db, _ := back.Groups.get("db")
	if len(back.Groups) != 2 || web.Running != 3 || db.Running != 2 || back.Groups[0].Name != "db" {
		t.Errorf("decoded %+v, want db 2 then web 3", back.Groups)
	}
}
