package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/url"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/ordoplane/ordo/api"
	clienthttp "github.com/ordoplane/ordo/client/httpapi"
)

// tailBytesPerLine is the guess of a line's length that sizes the first
// read of `logs -n`; more is read when the guess was short.
const tailBytesPerLine = 120

// defaultTailLines is what -tail shows without -n or -c.
const defaultTailLines = 10

func newAllocLogsCommand(g *globals) *cobra.Command {
	var (
		follow, stderr, tail bool
		lines, nbytes        int64
	)
	cmd := &cobra.Command{
		Use:   "logs [flags] <alloc-id> [task]",
		Short: "Print or follow a task's stdout or stderr",
		Long: `Print a task's logs: its stdout (or stderr with -stderr), rotated files
first. The server proxies the request to the allocation's node. The task
may be left out when the allocation has one. An allocation not started yet
(pending) is waited for.

  -f          follow: keep printing what the task writes, until interrupted
              or the allocation has stopped and everything was printed
  -tail       start from the end: the last 10 lines unless -n or -c says
  -n lines    the last lines (implies -tail)
  -c bytes    the last bytes (implies -tail)`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) < 1 || len(args) > 2 {
				return errors.New("this command takes one or two arguments: <alloc-id> [task]")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if cmd.Flags().Changed("n") && lines < 0 || cmd.Flags().Changed("c") && nbytes < 0 {
				return errors.New("-n and -c take a number that is not negative")
			}
			c, err := g.client()
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			if follow {
				var stop context.CancelFunc
				ctx, stop = signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
				defer stop()
			}
			var a cliAlloc
			if err := c.Get(ctx, api.Pathf("/v1/allocation/%s", args[0]), nil, &a); err != nil {
				return fmt.Errorf("read allocation %q: %w", args[0], err)
			}
			if a, err = waitStarted(ctx, c, a, cmd.ErrOrStderr()); err != nil {
				return err
			}
			task := ""
			if len(args) == 2 {
				task = args[1]
			} else if len(a.TaskStates) > 1 {
				return fmt.Errorf("allocation %s runs tasks %s: name one", a.ID, strings.Join(slices.Sorted(maps.Keys(a.TaskStates)), ", "))
			} else {
				for name := range a.TaskStates {
					task = name // else the node picks the only task, or names them
				}
			}
			l := &logsRequest{c: c, path: api.Pathf("/v1/client/fs/logs/%s", a.ID), out: cmd.OutOrStdout(),
				query: url.Values{"plain": {"true"}, "type": {clienthttp.StreamStdout}}}
			if task != "" {
				l.query.Set("task", task)
			}
			if stderr {
				l.query.Set("type", clienthttp.StreamStderr)
			}
			switch {
			case cmd.Flags().Changed("c"):
				err = l.stream(ctx, "end", nbytes, follow)
			case cmd.Flags().Changed("n") || tail:
				n := int64(defaultTailLines)
				if cmd.Flags().Changed("n") {
					n = lines
				}
				err = l.lastLines(ctx, n, follow)
			default:
				err = l.stream(ctx, "start", 0, follow)
			}
			if err != nil && ctx.Err() != nil && cmd.Context().Err() == nil {
				return nil // interrupted: a normal end of -f
			}
			if err != nil {
				return fmt.Errorf("logs of allocation %s: %w", a.ID, err)
			}
			return nil
		},
	}
	cmd.Flags().BoolVarP(&follow, "f", "f", false, "follow the logs until interrupted")
	cmd.Flags().BoolVar(&stderr, "stderr", false, "print stderr instead of stdout")
	cmd.Flags().BoolVar(&tail, "tail", false, "start from the end of the logs (the last 10 lines by default)")
	cmd.Flags().Int64VarP(&lines, "n", "n", 0, "the number of `lines` to print from the end (implies -tail)")
	cmd.Flags().Int64VarP(&nbytes, "c", "c", 0, "the number of `bytes` to print from the end (implies -tail)")
	return cmd
}

// logsRequest reads one task's logs through the server.
type logsRequest struct {
	c     *api.Client
	path  string
	query url.Values
	out   io.Writer
}

// open requests the logs from offset bytes of origin and returns the
// body and the offset from the stream's start at which it begins.
func (l *logsRequest) open(ctx context.Context, origin string, offset int64, follow bool) (io.ReadCloser, int64, error) {
	q := maps.Clone(l.query)
	q.Set("origin", origin)
	q.Set("offset", strconv.FormatInt(offset, 10))
	q.Set("follow", strconv.FormatBool(follow))
	body, meta, err := l.c.Open(ctx, &api.Request{Method: "GET", Path: l.path, Params: q})
	if err != nil {
		return nil, 0, err
	}
	start, _ := strconv.ParseInt(meta.Header.Get(clienthttp.OffsetHeader), 10, 64)
	return body, start, nil
}

// stream copies the logs from offset bytes of origin to the output.
func (l *logsRequest) stream(ctx context.Context, origin string, offset int64, follow bool) error {
	body, _, err := l.open(ctx, origin, offset, follow)
	if err != nil {
		return err
	}
	defer body.Close()
	_, err = io.Copy(l.out, body)
	return err
}

// lastLines prints the last n lines, reading more of the end of the logs
// until it holds them or the whole stream, then follows from there.
func (l *logsRequest) lastLines(ctx context.Context, n int64, follow bool) error {
	want := max(n*tailBytesPerLine, 4096)
	for {
		body, start, err := l.open(ctx, "end", want, false)
		if err != nil {
			return err
		}
		data, err := io.ReadAll(body)
		body.Close()
		if err != nil {
			return err
		}
		if start == 0 || countLines(data) >= n {
			if _, err := l.out.Write(lastLines(data, n)); err != nil {
				return err
			}
			if !follow {
				return nil
			}
			return l.stream(ctx, "start", start+int64(len(data)), true)
		}
		want *= 4
	}
}

// countLines counts the lines of data that are preceded by a newline
// within it (so that they are whole), the last line included.
func countLines(data []byte) int64 {
	return int64(bytes.Count(bytes.TrimSuffix(data, []byte("\n")), []byte("\n")))
}

// lastLines returns the last n lines of data; a last line without its
// newline counts.
func lastLines(data []byte, n int64) []byte {
	if n <= 0 {
		return nil
	}
	i := len(bytes.TrimSuffix(data, []byte("\n")))
	for count := int64(0); i > 0; i-- {
		if data[i-1] == '\n' {
			if count++; count == n {
				break
			}
		}
	}
	return data[i:]
}
