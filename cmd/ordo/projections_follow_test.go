package main

import (
	"bytes"
	"context"
	"regexp"
	"strings"
	"testing"

	"github.com/ordoplane/ordo/projections/fsm"
)

// TestFollowDrawsRateAndETA: the progress bar of a rebuild shows the
// events replayed of the target, their rate (events/s) and the time
// elapsed and left, and ends at the target.
func TestFollowDrawsRateAndETA(t *testing.T) {
	jobs := []fsm.Job{
		{Kind: fsm.JobRebuild, Projections: []string{"jobs"}, State: fsm.JobRunning, Phase: "replay", Events: 250, Target: 1000},
		{Kind: fsm.JobRebuild, Projections: []string{"jobs"}, State: fsm.JobRunning, Phase: "replay", Events: 600, Target: 1000},
		{Kind: fsm.JobRebuild, Projections: []string{"jobs"}, State: fsm.JobDone, Events: 1000, Target: 1000},
	}
	var out bytes.Buffer
	first := fsm.Job{Kind: fsm.JobRebuild, Projections: []string{"jobs"}, State: fsm.JobQueued}
	n := 0
	j, err := follow(context.Background(), &out, first, func(context.Context) (fsm.Job, error) {
		j := jobs[min(n, len(jobs)-1)]
		n++
		return j, nil
	}, progressBar)
	if err != nil || j.State != fsm.JobDone {
		t.Fatalf("follow: %+v %v", j, err)
	}
	s := out.String()
	for _, re := range []string{`rebuild jobs \[replay\]`, `\d+/1000`, `1000/1000`, `[\d.]+ events/s`, `\[\d+s:\d+s\]`} {
		if !regexp.MustCompile(re).MatchString(s) {
			t.Errorf("the progress bar lacks %s:\n%q", re, s)
		}
	}
	out.Reset()
	if _, err := follow(context.Background(), &out, jobs[2], nil, progressQuiet); err != nil || strings.TrimSpace(out.String()) != "" {
		t.Errorf("quiet: %v %q", err, out.String())
	}
	// Not a terminal: plain lines, no bar's carriage returns.
	if progressStyleFor(&out, false) != progressLines {
		t.Errorf("a buffer is drawn as a terminal")
	}
	out.Reset()
	if _, err := follow(context.Background(), &out, jobs[2], nil, progressLines); err != nil ||
		out.String() != "rebuild jobs [done]: 1000/1000 events\n" {
		t.Errorf("lines: %v %q", err, out.String())
	}
}
