package raftlog

import (
	"errors"
	"testing"

	"github.com/hashicorp/raft"
)

// TestCheckRemoval: a removal is refused when the voters left would not
// hold a healthy quorum of themselves, or none would be left.
func TestCheckRemoval(t *testing.T) {
	voter := func(id string) raft.Server { return raft.Server{ID: raft.ServerID(id), Suffrage: raft.Voter} }
	nonvoter := func(id string) raft.Server { return raft.Server{ID: raft.ServerID(id), Suffrage: raft.Nonvoter} }
	for _, tc := range []struct {
		name    string
		servers []raft.Server
		healthy string // ids judged healthy, one letter each
		remove  string
		want    error
	}{
		{"last voter", []raft.Server{voter("a")}, "a", "a", ErrUnsafeChange},
		{"last voter beside a non-voter", []raft.Server{voter("a"), nonvoter("b")}, "ab", "a", ErrUnsafeChange},
		{"a non-voter, always", []raft.Server{voter("a"), nonvoter("b")}, "a", "b", nil},
		{"unknown", []raft.Server{voter("a")}, "a", "z", ErrUnknownPeer},
		{"dead one of two", []raft.Server{voter("a"), voter("b")}, "a", "b", nil},
		{"healthy one of three beside a dead one", []raft.Server{voter("a"), voter("b"), voter("c")}, "ab", "b", ErrUnsafeChange},
		{"dead one of three", []raft.Server{voter("a"), voter("b"), voter("c")}, "ab", "c", nil},
		{"healthy one of three", []raft.Server{voter("a"), voter("b"), voter("c")}, "abc", "c", nil},
		{"the leader of three", []raft.Server{voter("a"), voter("b"), voter("c")}, "abc", "a", nil},
		{"the leader of three with one dead", []raft.Server{voter("a"), voter("b"), voter("c")}, "ab", "a", ErrUnsafeChange},
		{"one of five with two dead", []raft.Server{voter("a"), voter("b"), voter("c"), voter("d"), voter("e")}, "abc", "c", ErrUnsafeChange},
		{"a dead one of five with two dead", []raft.Server{voter("a"), voter("b"), voter("c"), voter("d"), voter("e")}, "abc", "e", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			healthy := func(id raft.ServerID) bool {
				for _, c := range tc.healthy {
					if string(c) == string(id) {
						return true
					}
				}
				return false
			}
			err := checkRemoval(raft.Configuration{Servers: tc.servers}, raft.ServerID(tc.remove), healthy)
			if tc.want == nil && err != nil || tc.want != nil && !errors.Is(err, tc.want) {
				t.Fatalf("checkRemoval(%s) = %v, want %v", tc.remove, err, tc.want)
			}
		})
	}
}
