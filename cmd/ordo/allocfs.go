package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/ordoplane/ordo/api"
)

func newAllocFSCommand(g *globals) *cobra.Command {
	var (
		stat, follow bool
		job          *bool
	)
	cmd := &cobra.Command{
		Use:   "fs [flags] <alloc-id> [path]",
		Short: "List, stat or print files of an allocation's directory",
		Long: `Show the allocation's directory on its node, through the server: a
directory's entries (mode, size, modification time, name), or a file's
bytes. The path is relative to the allocation's directory (default "/"):
alloc/logs holds the tasks' logs, <task>/local a task's local directory.
Paths that climb out of the directory, links that lead out of it, and
the tasks' secrets directories are refused.

  -stat   show the file's (or directory's) own entry instead
  -f      print the file and keep printing what is appended, until
          interrupted
  -job    the first argument is a job id or prefix: show the job's most
          recently created running allocation`,
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			allocID, err := allocArg(cmd, g, args[0], *job) // allocjob.go
			if err != nil {
				return err
			}
			c, a, _, err := allocTask(cmd.Context(), g, allocID, "", false)
			if err != nil {
				return err
			}
			p := "/"
			if len(args) == 2 {
				p = args[1]
			}
			var info api.AllocFileInfo
			if err := c.Get(cmd.Context(), api.Pathf("/v1/client/fs/stat/%s", a.ID), url.Values{"path": {p}}, &info); err != nil {
				return fmt.Errorf("stat %s in allocation %s: %w", p, a.ID, err)
			}
			w := cmd.OutOrStdout()
			d := g.display()
			switch {
			case stat:
				return printFileInfos(w, d, []api.AllocFileInfo{info})
			case info.IsDir && follow:
				return fmt.Errorf("%s is a directory: -f follows a file", p)
			case info.IsDir:
				var list []api.AllocFileInfo
				if err := c.Get(cmd.Context(), api.Pathf("/v1/client/fs/ls/%s", a.ID), url.Values{"path": {p}}, &list); err != nil {
					return fmt.Errorf("list %s in allocation %s: %w", p, a.ID, err)
				}
				return printFileInfos(w, d, list)
			}
			ctx := cmd.Context()
			if follow {
				var stop context.CancelFunc
				ctx, stop = signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
				defer stop()
			}
			err = catFile(ctx, c, a.ID, p, w, cmd.ErrOrStderr(), follow)
			if follow && ctx.Err() != nil && cmd.Context().Err() == nil {
				return nil // interrupted: the normal end of -f
			}
			return err
		},
	}
	cmd.Flags().BoolVar(&stat, "stat", false, "show the file's entry instead of its contents")
	cmd.Flags().BoolVarP(&follow, "f", "f", false, "keep printing what is appended to the file")
	job = addJobFlag(g, cmd)
	return cmd
}

// printFileInfos writes entries as Nomad's alloc fs does.
func printFileInfos(w io.Writer, d display, list []api.AllocFileInfo) error {
	rows := make([][]string, 0, len(list))
	for _, f := range list {
		name := f.Name
		if f.IsDir {
			name += "/"
		}
		rows = append(rows, []string{f.FileMode, humanBytes(f.Size), d.when(f.ModTime), name})
	}
	return printTable(w, []string{"Mode", "Size", "Modified Time", "Name"}, rows)
}

// catFile copies file p of allocation id to w; with follow it then
// prints what is appended (Nomad's file stream) until ctx ends or the file
// is removed, saying on errW when it was truncated or removed.
func catFile(ctx context.Context, c *api.Client, id, p string, w, errW io.Writer, follow bool) error {
	if !follow {
		body, err := c.Stream(ctx, api.Pathf("/v1/client/fs/cat/%s", id), url.Values{"path": {p}})
		if err != nil {
			return fmt.Errorf("read %s in allocation %s: %w", p, id, err)
		}
		defer body.Close()
		if _, err := io.Copy(w, body); err != nil {
			return fmt.Errorf("read %s in allocation %s: %w", p, id, err)
		}
		return nil
	}
	body, err := c.Stream(ctx, api.Pathf("/v1/client/fs/stream/%s", id), url.Values{"path": {p}})
	if err != nil {
		return fmt.Errorf("follow %s in allocation %s: %w", p, id, err)
	}
	defer body.Close()
	dec := json.NewDecoder(body)
	for {
		var f struct {
			Data      []byte
			FileEvent string
		}
		if err := dec.Decode(&f); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return fmt.Errorf("follow %s in allocation %s: %w", p, id, err)
		}
		if f.FileEvent != "" {
			fmt.Fprintf(errW, "%s: %s\n", p, f.FileEvent)
		}
		if _, err := w.Write(f.Data); err != nil {
			return err
		}
	}
}
