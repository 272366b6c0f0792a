package main

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ordoplane/ordo/api"
)

// execBoolFlags are the flags alloc exec takes (its own and the global
// ones) that take no separate value; every other flag does.
var execBoolFlags = map[string]bool{"i": true, "t": true, "verbose": true, "tls-skip-verify": true, "h": true, "help": true}

// normalizeExecArgs is normalizeArgs for what follows "alloc exec": its
// own flags are rewritten to the double-dash form, and everything from
// the allocation id on is kept as typed, so that `alloc exec <id> ls -la`
// passes -la to ls.
func normalizeExecArgs(args []string) []string {
	out := make([]string, 0, len(args))
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" || !strings.HasPrefix(a, "-") || a == "-" {
			return append(out, args[i:]...)
		}
		if len(a) > 2 && a[1] != '-' {
			a = "-" + a
		}
		out = append(out, a)
		if name := strings.TrimLeft(a, "-"); !strings.Contains(name, "=") && !execBoolFlags[name] && i+1 < len(args) {
			i++
			out = append(out, args[i])
		}
	}
	return out
}

func newAllocExecCommand(g *globals) *cobra.Command {
	var (
		task             string
		interactive, tty bool
	)
	cmd := &cobra.Command{
		Use:   "exec [flags] <alloc-id> <command> [args...]",
		Short: "Run a command in a running task's environment",
		Long: `Run a command beside a running task of the allocation, in the task's
working directory and environment (NOMAD_* variables included), on the
allocation's node; the server proxies Nomad's exec websocket to it. The
command's output is printed as it comes and ordo exits with the command's
exit code. -i (default true) sends this terminal's input to the command;
-i=false sends none. The task may be left out when the allocation has
one. -t (a terminal) is not supported yet.`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) < 2 {
				return errors.New("this command takes an allocation id and a command: <alloc-id> <command> [args...]")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if tty {
				return errors.New("-t: running a command on a terminal is not supported yet; run it without -t")
			}
			c, err := g.client()
			if err != nil {
				return err
			}
			a, err := readAlloc(cmd.Context(), c, args[0])
			if err != nil {
				return err
			}
			if task, err = pickTask(a, task); err != nil {
				return err
			}
			var stdin io.Reader
			if interactive {
				stdin = cmd.InOrStdin()
			}
			code, err := c.Exec(cmd.Context(), api.ExecRequest{AllocID: a.ID, Task: task, Command: args[1:],
				Stdin: stdin, Stdout: cmd.OutOrStdout(), Stderr: cmd.ErrOrStderr()})
			if err != nil {
				return fmt.Errorf("exec in allocation %s task %s: %w", a.ID, task, err)
			}
			if code != 0 {
				return &exitError{code: code}
			}
			return nil
		},
	}
	cmd.Flags().SetInterspersed(false)
	cmd.Flags().StringVar(&task, "task", "", "the task to run the command in (default: the allocation's only task)")
	cmd.Flags().BoolVarP(&interactive, "i", "i", true, "send this terminal's input to the command")
	cmd.Flags().BoolVarP(&tty, "t", "t", false, "run the command on a terminal (not supported yet)")
	return cmd
}
