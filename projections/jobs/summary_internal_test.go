package jobs

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/ordoplane/ordo/events"
)

// TestSummaryEncodesAs: encodesAs, which spares a summary's rewrite
// (N15), says two summaries are equal exactly when their encodings are,
// and a clone shares nothing with its original.
func TestSummaryEncodesAs(t *testing.T) {
	rows := []*summaryRow{
		{},
		{Groups: map[string]TaskGroupSummary{}},
		{Groups: map[string]TaskGroupSummary{"web": {}}},
		{Groups: map[string]TaskGroupSummary{"web": {Running: 1}}},
		{Groups: map[string]TaskGroupSummary{"web": {Running: 1}, "db": {}}},
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
	many := &summaryRow{Groups: map[string]TaskGroupSummary{}}
	for i := range 20 {
		many.Groups[fmt.Sprint("g", i)] = TaskGroupSummary{Running: i}
	}
	first, _ := events.Marshal(many)
	for range 20 {
		if again, _ := events.Marshal(many); !bytes.Equal(first, again) {
			t.Fatal("a summary of several groups encoded to different bytes")
		}
	}
	s := &summaryRow{Groups: map[string]TaskGroupSummary{"web": {Running: 1}}, Children: &Children{Dead: 1}}
	c := s.clone()
	c.Groups["web"] = TaskGroupSummary{}
	c.Children.Dead = 5
	if s.Groups["web"].Running != 1 || s.Children.Dead != 1 {
		t.Errorf("changing a clone changed the original: %+v %+v", s.Groups, s.Children)
	}
}
