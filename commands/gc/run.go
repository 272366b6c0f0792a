package gc

import (
	"context"
	"errors"
	"fmt"

	"github.com/ordoplane/ordo/commands"
)

// MaxRounds bounds the entries one Run appends.
const MaxRounds = 10000

// Run runs c through the pipeline until a round collects nothing, each
// round one entry of at most c.Limit objects (so no apply is long). A
// round refused because something changed since it was decided (409) is
// decided again. It returns what was collected and the last index.
func Run(ctx context.Context, p *commands.Pipeline, actor string, c Collect) (Counts, uint64, error) {
	var total Counts
	var index uint64
	conflicts := 0
	for round := 0; round < MaxRounds; round++ {
		var got Counts
		c.Report = &got
		out, err := p.Run(ctx, "system.gc", commands.Request{Actor: actor}, c)
		var ce *commands.ConflictError
		if errors.As(err, &ce) && conflicts < 3 {
			conflicts++
			continue
		}
		if err != nil {
			return total, index, fmt.Errorf("gc round %d: %w", round, err)
		}
		if got.Total() == 0 {
			return total, max(index, out.Index), nil
		}
		index = out.Index
		total.Evals += got.Evals
		total.Allocs += got.Allocs
		total.Jobs += got.Jobs
		total.Nodes += got.Nodes
		total.Deployments += got.Deployments
	}
	return total, index, nil
}
