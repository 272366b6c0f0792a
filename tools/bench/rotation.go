package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"sync"
	"time"

	"github.com/ordoplane/ordo/cmd/agent"
	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/commands/variables"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	kp "github.com/ordoplane/ordo/projections/keyring"
	pv "github.com/ordoplane/ordo/projections/variables"
)

// seedVariables is the bench's command that appends a batch of variables
// already sealed by the agent's keyring: the same VariableUpserted events a
// put appends, many to an entry, without the put's cas and quota checks.
type seedVariables struct{ vars []events.VariableUpserted }

func (seedVariables) Validate() error { return nil }

func (c seedVariables) Decide(projections.View, time.Time, commands.IDs) (commands.Decision, error) {
	d := commands.Decision{Events: make([]events.Payload, len(c.vars))}
	for i := range c.vars {
		d.Events[i] = &c.vars[i]
	}
	return d, nil
}

// rotationRows measures a full rotation (N12) of n variables on a dev-like
// agent (one server, synced disks unless ORDO_BENCH_NOSYNC, scheduler and
// GC off). The variables are written through the leader's pipeline in
// entries of 1,000 (4 in flight), each sealed with the agent's keyring
// like a PUT /v1/var would (one item of 32 bytes); then PUT
// /v1/operator/keyring/rotate?full=true starts the rekey job, and the
// figure is the time until the old key is inactive — which the Rekeyer
// records only when no variable is left under it — checked by reading
// every variable back: all under the new key, all opening to their value.
func rotationRows(n int) ([]row, error) {
	a, stop, err := startServer("rotation")
	if err != nil {
		return nil, err
	}
	defer stop()
	old, err := waitActiveKey(a)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	if err := seedVars(a, n); err != nil {
		return nil, err
	}
	seeded := time.Since(start)
	fmt.Fprintf(os.Stderr, "bench: seeded %d variables in %s\n", n, seeded)

	start = time.Now()
	if err := benchClient(a.HTTPAddr()).Call(context.Background(), http.MethodPut, "/v1/operator/keyring/rotate",
		url.Values{"full": {"true"}}, nil, nil); err != nil {
		return nil, fmt.Errorf("rotate: %w", err)
	}
	deadline := time.Now().Add(30 * time.Minute)
	for {
		k, err := kp.Get(projections.NewView(a.Store()), old)
		if err != nil {
			return nil, fmt.Errorf("old key: %w", err)
		}
		if k.State == events.RootKeyInactive {
			break
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("old key still %s after 30 minutes", k.State)
		}
		time.Sleep(20 * time.Millisecond)
	}
	took := time.Since(start)
	if err := checkRekeyed(a, old, n); err != nil {
		return nil, err
	}
	return []row{
		{fmt.Sprintf("rotation: %d variables seeded", n), seeded.Seconds(), "s"},
		{fmt.Sprintf("rotation -full: %d variables re-encrypted, old key inactive", n), took.Seconds(), "s"},
		{"rotation -full: re-encryption rate", float64(n) / took.Seconds(), "variables/s"},
	}, nil
}

// waitActiveKey waits for the cluster's first root key and returns its id.
func waitActiveKey(a *agent.Agent) (string, error) {
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if k, err := kp.Active(projections.NewView(a.Store())); err == nil {
			return k.KeyID, nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	return "", errors.New("no active root key within 30s")
}

// seedVars writes n variables bench/v<i> = {password: secret-<i>} through
// the pipeline in entries of 1,000, 4 in flight.
func seedVars(a *agent.Agent, n int) error {
	const batch = 1000
	next := make(chan int)
	errs := make(chan error, 4)
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				vars := make([]events.VariableUpserted, 0, batch)
				for j := i; j < i+batch && j < n; j++ {
					path := fmt.Sprintf("bench/v%07d", j)
					id, data, err := variables.Seal(a.Keyring(), "default", path, benchItems(j))
					if err != nil {
						errs <- err
						return
					}
					vars = append(vars, events.VariableUpserted{Namespace: "default", Path: path, KeyID: id, Data: data})
				}
				if _, err := a.Pipeline().Run(context.Background(), "bench.seed_variables", commands.Request{}, seedVariables{vars}); err != nil {
					errs <- fmt.Errorf("seed at %d: %w", i, err)
					return
				}
			}
		}()
	}
	var err error
	func() {
		defer close(next)
		for i := 0; i < n; i += batch {
			select {
			case next <- i:
			case err = <-errs:
				return
			}
		}
	}()
	wg.Wait()
	if err != nil {
		return err
	}
	select {
	case err := <-errs:
		return err
	default:
		return nil
	}
}

func benchItems(i int) variables.Items {
	return variables.Items{"password": fmt.Sprintf("secret-%026d", i)}
}

// checkRekeyed reads every variable back: none under old, n in all, each
// opening to its value.
func checkRekeyed(a *agent.Agent, old string, n int) error {
	v := projections.NewView(a.Store())
	left := 0
	if err := pv.ByKey(v, old, func(string, string) error { left++; return nil }); err != nil {
		return err
	}
	if left > 0 {
		return fmt.Errorf("%d variables still under the old key", left)
	}
	seen := 0
	err := pv.Scan(v, pv.Query{Namespace: "default", Prefix: "bench/"}, func(x *pv.Variable) error {
		if x.KeyID == old {
			return fmt.Errorf("%s still under the old key", x.Path)
		}
		items, err := variables.Open(a.Keyring(), x.Namespace, x.Path, x.KeyID, x.Data)
		if err != nil {
			return fmt.Errorf("open %s: %w", x.Path, err)
		}
		var i int
		fmt.Sscanf(x.Path, "bench/v%d", &i)
		if items["password"] != benchItems(i)["password"] {
			return fmt.Errorf("%s opens to another value", x.Path)
		}
		seen++
		return nil
	})
	if err != nil {
		return err
	}
	if seen != n {
		return fmt.Errorf("%d variables read back, want %d", seen, n)
	}
	return nil
}
