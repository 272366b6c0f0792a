package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"
)

// Exit codes shared by every command, as Nomad's CLI has them: 0 for
// success, 1 for an error (a bad flag, an unknown subcommand, a failed
// call), 2 when `job run` could not place every allocation (jobmonitor.go).
// `job plan` has its own (jobplan.go).
const (
	exitCodeOK    = 0
	exitCodeError = 1
	// exitCodePlacementFailed ends `job run` when its evaluation left
	// allocations unplaced, as Nomad's does.
	exitCodePlacementFailed = 2
)

// usageError is a mistake on the command line: run prints it, then the
// command's usage, on stderr and exits 1.
type usageError struct {
	cmd *cobra.Command
	err error
}

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }

// writeUsage prints the usage of the command e is about to w.
func (e *usageError) writeUsage(w io.Writer) {
	fmt.Fprintf(w, "\n%s", e.cmd.UsageString())
}

// requireSubcommand makes every command that only groups others (job,
// node, operator, …) fail as Nomad's do when it is called without a known
// subcommand: its help on stderr and exit 1, where cobra would print the
// help on stdout and exit 0.
func requireSubcommand(root *cobra.Command, stderr io.Writer) {
	for _, c := range root.Commands() {
		requireSubcommand(c, stderr)
	}
	if root.HasParent() && !root.Runnable() && root.HasSubCommands() {
		root.Args = cobra.ArbitraryArgs
		root.RunE = func(cmd *cobra.Command, args []string) error {
			cmd.SetOut(stderr)
			if err := cmd.Help(); err != nil {
				return err
			}
			if len(args) > 0 {
				return &exitError{code: exitCodeError, err: fmt.Errorf("unknown subcommand %q of %q", args[0], cmd.CommandPath())}
			}
			return &exitError{code: exitCodeError}
		}
	}
}
