package main

import (
	"strings"
	"testing"
)

// An unknown subcommand, a group called bare, or a bad flag prints help on
// stderr and exits 1 (Nomad's CLI), never help on stdout and 0.
func TestUsageExitCodes(t *testing.T) {
	tests := []struct {
		args []string
		// stderr starts with want and holds the usage of cmd.
		want, usage string
	}{
		{[]string{"job", "dispatchh"}, "Interact with jobs", "ordo job [command]"},
		{[]string{"job"}, "Interact with jobs", "ordo job [command]"},
		{[]string{"operator", "nope"}, "", "ordo operator [command]"},
		{[]string{"namespace", "list", "-bogus"}, "Error: unknown flag: --bogus\n\nUsage:\n", "ordo namespace list [flags]"},
		{[]string{"nosuch"}, "Error: unknown command \"nosuch\" for \"ordo\"", ""},
	}
	for _, tt := range tests {
		code, stdout, stderr := runCLI(tt.args...)
		if code != 1 || stdout != "" || !strings.HasPrefix(stderr, tt.want) || !strings.Contains(stderr, tt.usage) {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want 1, nothing, %q… with %q", tt.args, code, stdout, stderr, tt.want, tt.usage)
		}
	}
	if code, _, stderr := runCLI("job", "dispatchh"); !strings.HasSuffix(stderr, "Error: unknown subcommand \"dispatchh\" of \"ordo job\"\n") {
		t.Errorf("unknown subcommand: exit %d, stderr ends %q", code, stderr[max(0, len(stderr)-80):])
	}
	if code, stdout, _ := runCLI("job", "-help"); code != 0 || !strings.Contains(stdout, "ordo job [command]") {
		t.Errorf("job -help: exit %d, stdout %q; want 0 and the help", code, stdout)
	}
}
