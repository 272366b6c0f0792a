package chaos

import (
	"context"
	"fmt"
	"net/http"
	"os/exec"
	"strings"
	"time"
)

// FaultKind is a kind of failure the nemesis brings on the leader.
type FaultKind string

// The faults.
const (
	// FaultKill SIGKILLs the leader and restarts it once another server
	// has taken a write.
	FaultKill FaultKind = "kill"
	// FaultPause SIGSTOPs the leader for Config.Hold, then SIGCONTs it.
	FaultPause FaultKind = "pause"
	// FaultPartition cuts the leader's raft traffic off from the other
	// servers for Config.Hold (Network.Isolate), then heals it.
	FaultPartition FaultKind = "partition"
	// FaultTransfer asks the leader to hand leadership over
	// (`ordo operator raft transfer-leadership`), when the binary has it.
	FaultTransfer FaultKind = "transfer"
)

// Fault is one fault of a run and what it cost.
type Fault struct {
	Kind FaultKind
	// Server is the leader it hit; NewLeader the leader once a write was
	// taken again (-1 when not known).
	Server, NewLeader int
	// At is when it began, from the start of the run.
	At time.Duration
	// Unavailable is the longest time without an acknowledged write from
	// the fault until writes are taken again after it (probe writes, one
	// at a time, to the servers the fault spared): for a kill, pause or
	// partition, the time from the fault to the first acknowledged write
	// begun after it; for a transfer, the longest gap while leadership
	// moved.
	Unavailable time.Duration
}

// Failover reports whether leadership moved to another server.
func (f Fault) Failover() bool { return f.NewLeader >= 0 && f.NewLeader != f.Server }

// nemesis brings faults on the leader, one at a time, with quiet time
// between them.
type nemesis struct {
	c      *Cluster
	cfg    Config
	client *http.Client
	start  time.Time
	logf   func(string, ...any)
}

// run brings cfg.Faults faults in the order of cfg.Kinds and returns them.
func (n *nemesis) run(ctx context.Context) ([]Fault, error) {
	var faults []Fault
	for i := 0; i < n.cfg.Faults; i++ {
		if err := n.waitHealthy(ctx); err != nil {
			return faults, err
		}
		if !n.quiet(ctx, n.cfg.Quiet) {
			return faults, ctx.Err()
		}
		f, err := n.inject(ctx, n.cfg.Kinds[i%len(n.cfg.Kinds)])
		if err != nil {
			return faults, err
		}
		n.logf("fault %d/%d: %s of s%d at %v: writes again after %v, leader s%d", i+1, n.cfg.Faults, f.Kind, f.Server,
			f.At.Round(time.Millisecond), f.Unavailable.Round(time.Millisecond), f.NewLeader)
		faults = append(faults, f)
	}
	if err := n.waitHealthy(ctx); err != nil {
		return faults, err
	}
	return faults, nil
}

// quiet waits d (the schedule's own timer) or until ctx ends.
func (n *nemesis) quiet(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// waitHealthy waits until every server runs, a majority names a leader
// and the leader takes a write.
func (n *nemesis) waitHealthy(ctx context.Context) error {
	var last string
	ok := poll(ctx, 60*time.Second, func() bool {
		for _, s := range n.c.servers {
			if !s.Serving() {
				last = fmt.Sprintf("s%d is not serving", s.Index)
				return false
			}
		}
		l, err := n.c.Leader(ctx)
		if err != nil {
			last = err.Error()
			return false
		}
		pctx, cancel := context.WithTimeout(ctx, time.Second)
		defer cancel()
		if _, err := putProbe(pctx, n.client, l.HTTP, "healthy"); err != nil {
			last = err.Error()
			return false
		}
		return true
	})
	if !ok {
		return fmt.Errorf("cluster not healthy within 60s: %s", last)
	}
	return nil
}

// inject brings one fault on the current leader and undoes it.
func (n *nemesis) inject(ctx context.Context, kind FaultKind) (Fault, error) {
	leader, err := n.c.Leader(ctx)
	if err != nil {
		return Fault{}, err
	}
	f := Fault{Kind: kind, Server: leader.Index, NewLeader: -1}
	t0 := time.Now()
	f.At = t0.Sub(n.start)
	spare := leader.Index // the server the probe leaves alone
	var transferred chan error
	switch kind {
	case FaultKill:
		if err := leader.Kill(); err != nil {
			return f, err
		}
	case FaultPause:
		if err := leader.Pause(); err != nil {
			return f, err
		}
	case FaultPartition:
		n.c.net.Isolate(leader.Index)
	case FaultTransfer:
		// The leader serves until it hands over: probe meanwhile.
		transferred = make(chan error, 1)
		go func() { transferred <- n.transfer(ctx, leader) }()
		spare = -1
	default:
		return f, fmt.Errorf("unknown fault %q", kind)
	}
	f.Unavailable, err = n.probe(ctx, t0, spare, transferred)
	if err == nil {
		if l, lerr := n.c.Leader(ctx); lerr == nil {
			f.NewLeader = l.Index
		}
	}
	// Undo the fault: at once for a kill, after the hold otherwise.
	if kind == FaultPause || kind == FaultPartition {
		n.quiet(ctx, time.Until(t0.Add(n.cfg.Hold)))
	}
	switch kind {
	case FaultKill:
		if rerr := leader.Restart(ctx); rerr != nil && err == nil {
			err = rerr
		}
	case FaultPause:
		if rerr := leader.Resume(); rerr != nil && err == nil {
			err = rerr
		}
	case FaultPartition:
		n.c.net.Heal(leader.Index)
	}
	return f, err
}

// probe writes the probe variable to the servers other than skip, one
// attempt at a time, until one is acknowledged after done (nil: at once)
// has delivered, and returns the longest time without an acknowledged
// write from t0 on: for a fault that stops the leader at once, from t0 to
// the first acknowledgement. An error from done ends the probe with it.
func (n *nemesis) probe(ctx context.Context, t0 time.Time, skip int, done <-chan error) (time.Duration, error) {
	var (
		next    int
		lastAck = t0
		gap     time.Duration
		last    error
		over    = done == nil
	)
	ok := poll(ctx, 60*time.Second, func() bool {
		if !over {
			select {
			case err := <-done:
				if err != nil {
					last = err
					return true
				}
				over = true
			default:
			}
		}
		s := n.c.servers[next%len(n.c.servers)]
		next++
		if s.Index == skip || !s.Serving() {
			return false
		}
		wasOver := over
		pctx, cancel := context.WithTimeout(ctx, time.Second)
		defer cancel()
		if _, last = putProbe(pctx, n.client, s.HTTP, "probe"); last != nil {
			return false
		}
		now := time.Now()
		gap, lastAck = max(gap, now.Sub(lastAck)), now
		return wasOver
	})
	switch {
	case !ok:
		return 0, fmt.Errorf("no write acknowledged within 60s of the fault: %v", last)
	case !over:
		return 0, last // the transfer failed
	}
	return gap, nil
}

// transfer asks the leader to hand leadership over with the CLI.
func (n *nemesis) transfer(ctx context.Context, leader *Server) error {
	cmd := exec.CommandContext(ctx, n.cfg.Bin, "operator", "raft", "transfer-leadership", "-address", "http://"+leader.HTTP)
	cmd.Env = n.c.Env()
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("transfer-leadership: %v: %s", err, strings.TrimSpace(string(out)))
	}
	return nil
}

// hasTransfer reports whether the binary has `ordo operator raft
// transfer-leadership`.
func hasTransfer(bin string) bool {
	out, _ := exec.Command(bin, "operator", "raft", "--help").CombinedOutput()
	return strings.Contains(string(out), "transfer-leadership")
}
