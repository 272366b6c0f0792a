package events_test

import (
	"testing"

	"github.com/ordoplane/ordo/events"
)

func TestKillSignal(t *testing.T) {
	for _, tc := range []struct {
		in, name string
		num      int
		ok       bool
	}{
		{"", "SIGTERM", 15, true}, {"SIGINT", "SIGINT", 2, true}, {"hup", "SIGHUP", 1, true},
		{" sigkill ", "SIGKILL", 9, true}, {"USR1", "SIGUSR1", 10, true},
		{"SIGWINCH", "SIGWINCH", 0, false}, {"9", "SIG9", 0, false},
	} {
		name, num, ok := events.KillSignal(tc.in)
		if name != tc.name || num != tc.num || ok != tc.ok {
			t.Errorf("KillSignal(%q) = %q %d %v, want %q %d %v", tc.in, name, num, ok, tc.name, tc.num, tc.ok)
		}
	}
}
