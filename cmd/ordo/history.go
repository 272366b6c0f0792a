package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/ordoplane/ordo/api"
)

// historyEvent is one event of GET /v1/history/{kind}/{id}; see
// projections/history.Event.
type historyEvent struct {
	Index         uint64
	Seq           uint32
	Time          time.Time
	Type          string
	Version       uint16
	Actor         string
	CorrelationID string
	// EntityKind and EntityID name what a line of a job's related
	// timeline is about.
	EntityKind string
	EntityID   string
	Summary    string
	Changes    []struct{ Field, Old, New string }
}

// historyPageSize is how many events the CLI asks for per request; a
// variable so tests can make pages small.
var historyPageSize = 1000

// historyKinds maps what the CLI accepts to the API's entity kinds.
var historyKinds = map[string]string{
	"alloc": "alloc", "allocation": "alloc", "eval": "eval", "evaluation": "eval",
	"job": "job", "node": "node", "deployment": "deployment", "namespace": "namespace", "server": "server",
	// The launcher's kinds (docs/launcher.md, docs/capacity.md).
	"node_request": "node_request", "node-request": "node_request", "instance": "instance", "provider": "provider",
	"tenant": "tenant", "component": "component",
	"service": "service", // a service instance, by registration id (docs/services.md)
}

func newHistoryCommand(g *globals) *cobra.Command {
	var (
		since, until, namespace string
		asJSON, payload         bool
		reverse, related        bool
		last                    int
	)
	cmd := &cobra.Command{
		Use:   "history [flags] <kind> <id>",
		Short: "Show every event that touched an entity",
		Long: `Show every event that touched an entity, oldest first: its index, leader
time, type, actor and what it did, with the fields it changed indented
below. Kinds: alloc, eval, job, node, deployment, namespace, server, and the
launcher's node_request, instance, provider, tenant, component.

An alloc, eval, deployment or node may be named by a unique id prefix, as
in every other command. A job is "<namespace>/<id>", or its id with
-namespace (default "default").
A job's history includes what happened to its evaluations, allocations and
deployments, each line naming the entity it is about (Entity column);
-related=false shows only the events keyed to the job itself.
-since and -until take an RFC 3339 time or a duration ago (2h, 90m).
-n N shows the N most recent events of the window.`,
		Example: `  ordo history alloc 01a24d26
  ordo history job web -since 2h
  ordo history node node-1 -n 20 -reverse`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) != 2 {
				return fmt.Errorf("this command takes two arguments: <kind> <id>")
			}
			if _, ok := historyKinds[args[0]]; !ok {
				return fmt.Errorf("unknown kind %q: want alloc, eval, job, node, deployment, namespace, server, node_request, instance, provider, tenant or component", args[0])
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if last < 0 {
				return fmt.Errorf("-n must not be negative")
			}
			kind, id := historyKinds[args[0]], args[1]
			id, err := resolveHistoryID(cmd, g, kind, id) // historyprefix.go
			if err != nil {
				return err
			}
			q := url.Values{}
			for k, v := range map[string]string{"since": since, "until": until} {
				if v != "" {
					q.Set(k, v)
				}
			}
			if namespace != "" {
				if kind != "job" {
					return fmt.Errorf("-namespace applies to jobs only")
				}
				q.Set("namespace", namespace)
			}
			if payload {
				q.Set("payload", "true")
			}
			if cmd.Flags().Changed("related") && kind != "job" {
				return fmt.Errorf("-related applies to jobs only")
			}
			related := related && kind == "job"
			if related {
				q.Set("related", "true")
			}
			raw, err := readHistory(cmd, g, api.Pathf("/v1/history/%s/%s", kind, id), q, reverse, last)
			if err != nil {
				return fmt.Errorf("history of %s %q: %w", kind, id, err)
			}
			if asJSON {
				b, err := json.Marshal(raw)
				if err != nil {
					return err
				}
				return printJSON(cmd.OutOrStdout(), b)
			}
			evs := make([]historyEvent, len(raw))
			for i, r := range raw {
				if err := json.Unmarshal(r, &evs[i]); err != nil {
					return fmt.Errorf("history of %s %q: decode: %w", kind, id, err)
				}
			}
			return printHistory(cmd.OutOrStdout(), evs, payload, related, raw)
		},
	}
	f := cmd.Flags()
	f.StringVar(&since, "since", "", "only events at or after this time (RFC 3339, or a duration ago such as 2h)")
	f.StringVar(&until, "until", "", "only events at or before this time (RFC 3339, or a duration ago)")
	f.StringVar(&namespace, "namespace", "", "namespace of a job (default \"default\", or the part before / in the id)")
	f.BoolVar(&asJSON, "json", false, "print the API's JSON")
	f.BoolVar(&payload, "payload", false, "show each event's payload (redacted)")
	f.BoolVar(&reverse, "reverse", false, "newest first")
	f.BoolVar(&related, "related", true, "for a job: its evals', allocations' and deployments' events too")
	f.IntVarP(&last, "n", "n", 0, "show only the N most recent events (0: all)")
	return cmd
}

// readHistory reads every page of a history, or the last n events, and
// returns them in the order asked (oldest first unless reverse).
func readHistory(cmd *cobra.Command, g *globals, path string, q url.Values, reverse bool, n int) ([]json.RawMessage, error) {
	c, err := g.client()
	if err != nil {
		return nil, err
	}
	// The last n are the first n of the reversed timeline.
	newestFirst := reverse || n > 0
	q.Set("reverse", strconv.FormatBool(newestFirst))
	out := []json.RawMessage{}
	for {
		size := historyPageSize
		if n > 0 {
			size = min(size, n-countEvents(out))
		}
		q.Set("per_page", strconv.Itoa(size))
		var page []json.RawMessage
		meta, err := c.Do(cmd.Context(), &api.Request{Method: "GET", Path: path, Params: q}, &page)
		if err != nil {
			return nil, err
		}
		next := meta.NextToken
		out = append(out, page...)
		if next == "" || (n > 0 && countEvents(out) >= n) {
			break
		}
		q.Set("next_token", next)
	}
	if newestFirst && !reverse {
		out = reverseEvents(out)
	}
	return out, nil
}

// linePos reads the position (index, seq) of a timeline line.
func linePos(line json.RawMessage) [2]uint64 {
	var p struct {
		Index uint64
		Seq   uint32
	}
	_ = json.Unmarshal(line, &p)
	return [2]uint64{p.Index, uint64(p.Seq)}
}

// reverseEvents reverses the order of the events of a timeline, keeping
// the lines of one event (a job's related timeline has one per entity) in
// their order.
func reverseEvents(lines []json.RawMessage) []json.RawMessage {
	out := make([]json.RawMessage, 0, len(lines))
	for end := len(lines); end > 0; {
		start := end - 1
		for start > 0 && linePos(lines[start-1]) == linePos(lines[end-1]) {
			start--
		}
		out = append(out, lines[start:end]...)
		end = start
	}
	return out
}

// countEvents counts the distinct events (index, seq) of a timeline's
// lines: a job's related timeline shows an event once per entity.
func countEvents(lines []json.RawMessage) int {
	seen := map[[2]uint64]bool{}
	for _, l := range lines {
		seen[linePos(l)] = true
	}
	return len(seen)
}

// printHistory writes the events as a table, each event's changes (and,
// with payload, its payload) indented under it.
//
//	Index  Time                  Type          Actor      Summary
//	12     2026-11-30T14:02:00Z  AllocsPlaced  scheduler  placed on node n1 by eval e1
//	         NodeID: n1
//
// A job's related timeline adds an Entity column after Time: "job", or
// the kind and short id of the eval, allocation or deployment.
func printHistory(w io.Writer, evs []historyEvent, payload, related bool, raw []json.RawMessage) error {
	if len(evs) == 0 {
		_, err := fmt.Fprintln(w, "No events")
		return err
	}
	header := []string{"Index", "Time", "Type", "Actor", "Summary"}
	if related {
		header = slices.Insert(header, 2, "Entity")
	}
	rows := make([][]string, 0, len(evs))
	for _, e := range evs {
		row := []string{fmt.Sprint(e.Index), e.Time.UTC().Format(time.RFC3339), e.Type, orDash(e.Actor), e.Summary}
		if related {
			entity := e.EntityKind
			if e.EntityKind != "job" {
				entity += " " + shortID(e.EntityID)
			}
			row = slices.Insert(row, 2, entity)
		}
		rows = append(rows, row)
	}
	var b strings.Builder
	if err := printTable(&b, header, rows); err != nil {
		return err
	}
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	var out strings.Builder
	out.WriteString(lines[0] + "\n")
	for i, e := range evs {
		out.WriteString(strings.TrimRight(lines[i+1], " ") + "\n")
		for _, c := range e.Changes {
			fmt.Fprintf(&out, "    %s: %s\n", cell(c.Field), cell(changeText(c.Old, c.New)))
		}
		if payload {
			var p struct{ Payload json.RawMessage }
			if err := json.Unmarshal(raw[i], &p); err == nil && len(p.Payload) > 0 {
				fmt.Fprintf(&out, "    payload: %s\n", p.Payload)
			}
		}
	}
	_, err := io.WriteString(w, out.String())
	return err
}

// changeText renders old → new, with (none) for an unset side.
func changeText(old, new string) string {
	if old == "" {
		old = "(none)"
	}
	if new == "" {
		new = "(none)"
	}
	return old + " → " + new
}
