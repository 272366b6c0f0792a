package main

import (
	"context"
	"encoding/json"
	"io"
	"net/url"
	"strconv"
	"time"

	"github.com/spf13/cobra"
)

// asOfBanner starts the output of a command reading a past state (-at-index
// or -at-time) with a line saying which, so it never looks live:
//
//	As of index 42 (2026-03-01T11:58:00Z, 2m ago)
//
// (the time alone under -verbose).
// It goes to stdout, or to stderr when -json or -t keeps stdout for the
// machine format. The index comes from the answer of a small read at that
// point, its time from the log's entry; when the server cannot tell, the
// banner says what was asked.
func (g *globals) asOfBanner(cmd *cobra.Command) error {
	if g.atIndex == 0 && g.atTime == "" {
		return nil
	}
	at, err := g.atParams(g.now())
	if err != nil {
		return err
	}
	w := cmd.OutOrStdout()
	if flagSet(cmd, "json") || flagSet(cmd, "t") {
		w = cmd.ErrOrStderr()
	}
	index, when := g.resolveAt(cmd.Context(), at)
	line := "As of index " + strconv.FormatUint(index, 10)
	if index == 0 {
		line = "As of " + at.Get("at_time")
	}
	if !when.IsZero() {
		line += " (" + when.UTC().Format(time.RFC3339)
		if !g.verbose {
			line += ", " + relativeTime(when, g.now())
		}
		line += ")"
	}
	_, err = io.WriteString(w, line+"\n\n")
	return err
}

// resolveAt returns the index a read at at answers from and the leader
// time of that index's entry; zeros for what the server does not say.
func (g *globals) resolveAt(ctx context.Context, at url.Values) (uint64, time.Time) {
	var index uint64
	if s := at.Get("at_index"); s != "" {
		index, _ = strconv.ParseUint(s, 10, 64)
	}
	if index == 0 {
		c, err := g.clientAt(at)
		if err != nil {
			return 0, time.Time{}
		}
		var ns json.RawMessage
		meta, err := c.Query(ctx, "/v1/namespaces", nil, &ns)
		if err != nil {
			return 0, time.Time{}
		}
		if index, err = strconv.ParseUint(meta.Header.Get("X-Ordo-At-Index"), 10, 64); err != nil {
			return 0, time.Time{}
		}
	}
	c, err := g.clientAt(nil)
	if err != nil {
		return index, time.Time{}
	}
	var page struct {
		Events []struct {
			Index uint64
			Time  time.Time
		}
	}
	q := url.Values{"from": {strconv.FormatUint(index, 10)}, "limit": {"1"}}
	if err := c.Get(ctx, "/v1/operator/log", q, &page); err != nil || len(page.Events) == 0 || page.Events[0].Index != index {
		return index, time.Time{}
	}
	return index, page.Events[0].Time
}

// flagSet reports whether cmd has flag name and it was given.
func flagSet(cmd *cobra.Command, name string) bool {
	f := cmd.Flags().Lookup(name)
	return f != nil && f.Changed
}
