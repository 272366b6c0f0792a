package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"

	"golang.org/x/term"

	"github.com/spf13/cobra"

	"github.com/ordoplane/ordo/api"
)

// execBoolFlags are the flags alloc exec takes (its own and the global
// ones) that take no separate value; every other flag does.
var execBoolFlags = map[string]bool{"i": true, "t": true, "job": true, "verbose": true, "tls-skip-verify": true, "h": true, "help": true}

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
		job              *bool
	)
	cmd := &cobra.Command{
		Use:   "exec [flags] <alloc-id> <command> [args...]",
		Short: "Run a command in a running task's environment",
		Long: `Run a command beside a running task of the allocation, in the task's
working directory and environment (NOMAD_* variables included), on the
allocation's node; the server proxies Nomad's exec websocket to it. The
command's output is printed as it comes and ordo exits with the command's
exit code. -i (default true) sends this terminal's input to the command;
-i=false sends none. -t runs the command on a terminal of the node (the
default when ordo's input and output are terminals): this terminal is put
in raw mode and its size follows. The task may be left out when the
allocation has one. With -job the first argument is a job id or prefix,
and the command runs in the job's most recently created running
allocation.`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) < 2 {
				return errors.New("this command takes an allocation id and a command: <alloc-id> <command> [args...]")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if !cmd.Flags().Changed("t") {
				in, _ := cmd.InOrStdin().(*os.File)
				tty = in != nil && term.IsTerminal(int(in.Fd())) && isTerminal(cmd.OutOrStdout())
			}
			allocID, err := allocArg(cmd, g, args[0], *job) // allocjob.go
			if err != nil {
				return err
			}
			c, a, task, err := allocTask(cmd.Context(), g, allocID, task, true)
			if err != nil {
				return err
			}
			var stdin io.Reader
			if interactive {
				stdin = cmd.InOrStdin()
			}
			req := api.ExecRequest{AllocID: a.ID, Task: task, Command: args[1:], TTY: tty,
				Stdin: stdin, Stdout: cmd.OutOrStdout(), Stderr: cmd.ErrOrStderr()}
			if tty {
				restore, resize, err := rawTerminal(cmd.Context(), cmd.InOrStdin())
				if err != nil {
					return err
				}
				defer restore()
				req.Resize = resize
			}
			code, err := c.Exec(cmd.Context(), req)
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
	cmd.Flags().BoolVarP(&tty, "t", "t", false, "run the command on a terminal (default: when input and output are terminals)")
	job = addJobFlag(g, cmd)
	return cmd
}

// rawTerminal puts the terminal in (when it is one) in raw mode, so that
// keys reach the command as typed, and returns how to restore it and a
// channel of its sizes: the current one, then one per SIGWINCH until ctx
// ends.
func rawTerminal(ctx context.Context, in io.Reader) (restore func(), sizes <-chan api.TerminalSize, err error) {
	f, ok := in.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return func() {}, nil, nil
	}
	fd := int(f.Fd())
	old, err := term.MakeRaw(fd)
	if err != nil {
		return nil, nil, fmt.Errorf("-t: put the terminal in raw mode: %w", err)
	}
	ch := make(chan api.TerminalSize, 1)
	winch := make(chan os.Signal, 1)
	signal.Notify(winch, syscall.SIGWINCH)
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	send := func() {
		if w, h, err := term.GetSize(fd); err == nil {
			select {
			case ch <- api.TerminalSize{Width: w, Height: h}:
			case <-ctx.Done():
			}
		}
	}
	wg.Go(func() {
		send()
		for {
			select {
			case <-ctx.Done():
				return
			case <-winch:
				send()
			}
		}
	})
	return func() {
		cancel()
		wg.Wait()
		signal.Stop(winch)
		_ = term.Restore(fd, old)
	}, ch, nil
}
