package main

import (
	"context"
	"fmt"
	"io"

	"github.com/ordoplane/ordo/api"
)

// waitStarted returns the allocation once its client has started it: an
// allocation still pending (placed, its tasks not started yet) has no logs
// to read, so `alloc logs` right after `job run` waits for it, through
// blocking queries, instead of failing. It says so on note.
func waitStarted(ctx context.Context, c *api.Client, a cliAlloc, note io.Writer) (cliAlloc, error) {
	if a.ClientStatus != "pending" || a.DesiredStatus != "run" {
		return a, nil
	}
	fmt.Fprintf(note, "waiting for allocation %s to start\n", a.ID)
	index := a.ModifyIndex
	for a.ClientStatus == "pending" && a.DesiredStatus == "run" {
		meta, err := c.Query(ctx, api.Pathf("/v1/allocation/%s", a.ID), &api.QueryOptions{Index: index}, &a)
		if err != nil {
			return a, fmt.Errorf("wait for allocation %s to start: %w", a.ID, err)
		}
		index = max(meta.LastIndex, index)
	}
	return a, nil
}
