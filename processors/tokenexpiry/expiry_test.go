package tokenexpiry_test

import (
	"context"
	"testing"
	"time"

	"github.com/ordoplane/ordo/clock/clocktest"
	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/commands/acl"
	"github.com/ordoplane/ordo/processors/tokenexpiry"
)

// submitter records the commands the processor submits.
type submitter struct {
	calls  int
	actors []string
}

func (s *submitter) Run(_ context.Context, _ string, req commands.Request, c commands.Command) (commands.Outcome, error) {
	s.calls++
	s.actors = append(s.actors, req.Actor)
	if _, ok := c.(*acl.ExpireTokens); !ok {
		panic("unexpected command")
	}
	return commands.Outcome{Index: uint64(s.calls)}, nil
}

// TestRunPacedByClock: the processor submits ExpireTokens as
// its own actor, paced by its injected clock (no sleeps), and returns
// when its context ends.
func TestRunPacedByClock(t *testing.T) {
	s := &submitter{}
	clk := clocktest.NewClock(time.Unix(1_700_000_000, 0))
	p, err := tokenexpiry.New(tokenexpiry.Config{Pipeline: s, Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- p.Run(ctx) }()
	clk.BlockUntilWaiters(1)
	clk.Advance(tokenexpiry.DefaultConfig().Interval)
	clk.BlockUntilWaiters(1) // the next wait starts only after the first sweep
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if s.calls < 1 || s.actors[0] != tokenexpiry.Actor {
		t.Fatalf("calls = %d actors = %v", s.calls, s.actors)
	}
}
