package main

import (
	"bytes"
	"strings"
	"testing"
)

// A plan's diff leaves out the fields the servers keep (Stable, Version,
// …), so only what the user changed shows.
func TestPlanHidesBookkeeping(t *testing.T) {
	var b bytes.Buffer
	printFields(&b, "", []cliPlanFieldDiff{
		{Type: "Edited", Name: "Stable", Old: "true", New: "false"},
		{Type: "Edited", Name: "Version", Old: "1", New: "2"},
		{Type: "Edited", Name: "Priority", Old: "50", New: "60"},
	}, nil)
	if got, want := b.String(), "+/- Priority: \"50\" => \"60\"\n"; got != want {
		t.Errorf("diff:\n%s\nwant\n%s", got, want)
	}
	b.Reset()
	printFields(&b, "  ", []cliPlanFieldDiff{{Type: "Edited", Name: "Version", Old: "1", New: "2"}}, nil)
	if !strings.Contains(b.String(), "Version") {
		t.Errorf("a group's field named like a job's bookkeeping is shown: %q", b.String())
	}
}
