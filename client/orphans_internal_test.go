package client

import (
	"errors"
	"fmt"
	"slices"
	"testing"
)

// TestDecideWatch walks the watch's decision through sequences of the
// servers' answers: which local allocations each destroys, and that no
// transient answer (a failed call, one without an index, an older state
// than the client acted on) destroys any.
func TestDecideWatch(t *testing.T) {
	type step struct {
		ans   watchAnswer
		local []string
		// want: trusted, the allocations removed, the index queried next.
		trusted bool
		remove  []string
		query   uint64
	}
	errNoLeader := errors.New("503 no cluster leader")
	for _, tc := range []struct {
		name  string
		start watchCursor
		steps []step
	}{
		{name: "a newer list removes what it does not hold", steps: []step{
			{ans: watchAnswer{Index: 10, Listed: []string{"a", "b"}}, local: []string{"a", "b"}, trusted: true, query: 10},
			{ans: watchAnswer{Index: 12, Listed: []string{"b"}}, local: []string{"a", "b"}, trusted: true, remove: []string{"a"}, query: 12},
			// The same index again (the wait ran out): still the servers' state.
			{ans: watchAnswer{Index: 12, Listed: []string{"b"}}, local: []string{"b"}, trusted: true, query: 12},
		}},
		{name: "a failed call removes nothing", start: watchCursor{Seen: 40}, steps: []step{
			{ans: watchAnswer{Err: errNoLeader}, local: []string{"a"}, query: 40},
			{ans: watchAnswer{Err: errors.New("dial tcp: connection refused"), Index: 50}, local: []string{"a"}, query: 40},
			{ans: watchAnswer{Index: 41, Listed: []string{"a"}}, local: []string{"a"}, trusted: true, query: 41},
		}},
		{name: "an answer without an index removes nothing", start: watchCursor{Seen: 40}, steps: []step{
			{ans: watchAnswer{Index: 0}, local: []string{"a"}, query: 40},
			{ans: watchAnswer{Index: 0}, local: []string{"a"}, query: 40},
		}},
		{name: "an empty answer from a server behind removes nothing", start: watchCursor{Seen: 6254}, steps: []step{
			// A new leader that has not applied its predecessors' entries.
			{ans: watchAnswer{Index: 6249}, local: []string{"a", "b"}, query: 6254},
			// It caught up: the state it answers is at least what was seen.
			{ans: watchAnswer{Index: 6254, Listed: []string{"a", "b"}}, local: []string{"a", "b"}, trusted: true, query: 6254},
			// Behind again, then caught up past it: the regression was forgotten.
			{ans: watchAnswer{Index: 1}, local: []string{"a", "b"}, query: 6254},
			{ans: watchAnswer{Index: 6300, Listed: []string{"a", "b"}}, local: []string{"a", "b"}, trusted: true, query: 6300},
			{ans: watchAnswer{Index: 6299}, local: []string{"a", "b"}, query: 6300},
		}},
		{name: "a failed call between two older answers", start: watchCursor{Seen: 90}, steps: []step{
			{ans: watchAnswer{Index: 70}, local: []string{"a"}, query: 90},
			{ans: watchAnswer{Err: errNoLeader}, local: []string{"a"}, query: 90},
			// The second older answer in a row, after a whole wait: believed.
			{ans: watchAnswer{Index: 70}, local: []string{"a"}, trusted: true, remove: []string{"a"}, query: 70},
		}},
		{name: "a restore reports its own index, past everything seen", steps: []step{
			{ans: watchAnswer{Index: 120, Listed: []string{"sleep", "csi-plugin"}}, local: []string{"csi-plugin", "sleep"}, trusted: true, query: 120},
			// Restored from a state saved at 80, installed at 4,221.
			{ans: watchAnswer{Index: 4221}, local: []string{"sleep", "csi-plugin"}, trusted: true, remove: []string{"csi-plugin", "sleep"}, query: 4221},
		}},
		{name: "servers that report a restore with its old index are believed on the second answer", start: watchCursor{Seen: 120}, steps: []step{
			{ans: watchAnswer{Index: 80}, local: []string{"sleep"}, query: 120},
			{ans: watchAnswer{Index: 80}, local: []string{"sleep"}, trusted: true, remove: []string{"sleep"}, query: 80},
			{ans: watchAnswer{Index: 85, Listed: []string{"new"}}, local: []string{"new"}, trusted: true, query: 85},
		}},
		{name: "a restarted client starts from the index it stored", start: watchCursor{Seen: 300}, steps: []step{
			// Its first, non-blocking query reaches a server behind.
			{ans: watchAnswer{Index: 250, Listed: []string{"a"}}, local: []string{"a", "b"}, query: 300},
			{ans: watchAnswer{Index: 310, Listed: []string{"a"}}, local: []string{"a", "b"}, trusted: true, remove: []string{"b"}, query: 310},
		}},
		{name: "a fresh client believes its first answer", steps: []step{
			{ans: watchAnswer{Index: 3, Listed: nil}, local: nil, trusted: true, query: 3},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cur := tc.start
			for i, s := range tc.steps {
				d := decideWatch(cur, s.ans, s.local)
				desc := fmt.Sprintf("step %d (%+v, seen %d, regressed %v)", i, s.ans, cur.Seen, cur.Regressed)
				if d.Trusted != s.trusted {
					t.Fatalf("%s: trusted %v, want %v", desc, d.Trusted, s.trusted)
				}
				if !slices.Equal(d.Remove, s.remove) {
					t.Fatalf("%s: removes %v, want %v", desc, d.Remove, s.remove)
				}
				if !d.Trusted && len(d.Remove) > 0 {
					t.Fatalf("%s: an untrusted answer removes %v", desc, d.Remove)
				}
				if d.Query != s.query {
					t.Fatalf("%s: queries %d next, want %d", desc, d.Query, s.query)
				}
				if d.Cursor.Seen < cur.Seen && !cur.Regressed {
					t.Fatalf("%s: seen went back from %d to %d at the first older answer", desc, cur.Seen, d.Cursor.Seen)
				}
				cur = d.Cursor
			}
		})
	}
}
