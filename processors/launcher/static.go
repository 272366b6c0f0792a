package launcher

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	lcmd "github.com/ordoplane/ordo/commands/launcher"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/processors/launcher/driver"
	"github.com/ordoplane/ordo/projections/launcher"
)

// The runner's side of a HostDriver (static): its hosts are registered as
// ready instances when the provider starts and when its configuration
// changes (P29), handed out only when reachable, returned (not deleted)
// when used, and never created; the provider never pauses (P8).

// hostState is what a runner of a HostDriver keeps.
type hostState struct {
	d driver.HostDriver
	// cfg maps a host's name (its instance's external id) to its
	// configuration in this generation.
	cfg map[string]driver.Host
	// reach holds this pass's reachability checks, by host name.
	reach map[string]error
	// probed holds the answers probeHosts gathered for this pass, which
	// reachable takes as its checks.
	probed map[string]error
	// down are the hosts last found unreachable: a host going down is
	// logged at info once, not on every pass.
	down map[string]bool
}

func newHostState(d driver.Driver) *hostState {
	hd, ok := d.(driver.HostDriver)
	if !ok {
		return nil
	}
	h := &hostState{d: hd, cfg: map[string]driver.Host{}, down: map[string]bool{}}
	for _, host := range hd.Hosts() {
		h.cfg[host.Name] = host
	}
	return h
}

// hostMatches reports whether in registers a host of this generation's
// configuration as it is now: same address, first label, pool and pool
// attributes.
func (r *runner) hostMatches(in *launcher.Instance, prov *launcher.Provider) bool {
	h, ok := r.hosts.cfg[in.ExternalID]
	if !ok || len(in.Addresses) != 1 || in.Addresses[0] != h.Address || in.Label != h.Labels[0] {
		return false
	}
	pool, ok := prov.PoolFor(h.Labels)
	return ok && in.Pool == pool.Name && maps.Equal(in.Attributes, pool.NodeAttributes)
}

// syncHosts makes the provider's instances its configured hosts (P29):
// a free instance whose host left the configuration or changed is
// deregistered (and its host registered anew once it is gone); a host
// with no instance is registered. Hosts in use are left to their
// requestor. changed reports that it submitted something.
func (r *runner) syncHosts(ctx context.Context, s *snapshot) (changed bool, err error) {
	taken := map[string]bool{}
	for _, in := range s.insts {
		taken[in.ExternalID] = true
		if in.State != events.InstanceReady || in.RequestID != "" || r.hostMatches(in, s.prov) {
			continue
		}
		r.log.Info("static host left the configuration or changed; deregistering", "instance", in.ID, "host", in.ExternalID)
		err := r.submit(ctx, "instance.deleting", lcmd.SetInstanceState{ID: in.ID, State: events.InstanceDeleting,
			Reason: "static host left the configuration or changed"})
		if err != nil && !isConflict(err) {
			return true, fmt.Errorf("deregister host %s (instance %s): %w", in.ExternalID, in.ID, err)
		}
		changed = true
	}
	for _, h := range r.hosts.d.Hosts() {
		if taken[h.Name] {
			continue
		}
		pool, ok := s.prov.PoolFor(h.Labels)
		if !ok {
			r.log.Warn("no pool serves the static host's labels; not registered", "host", h.Name, "labels", h.Labels)
			continue
		}
		err := r.submit(ctx, "instance.register-host", lcmd.RegisterHost{Provider: r.name, ConfigIndex: r.gen, Pool: pool.Name,
			Host: events.StaticHost{Name: h.Name, Address: h.Address, Labels: h.Labels}, Attributes: pool.NodeAttributes})
		if err != nil && !isConflict(err) {
			return true, fmt.Errorf("register host %s: %w", h.Name, err)
		}
		r.log.Info("static host registered", "host", h.Name, "address", h.Address, "pool", pool.Name)
		changed = true
	}
	return changed, nil
}

// returnHost hands a used host out again, or deletes it when it left the
// configuration or changed (it is registered anew).
func (r *runner) returnHost(ctx context.Context, s *snapshot, in *launcher.Instance) (bool, error) {
	if !r.hostMatches(in, s.prov) {
		return false, nil
	}
	err := r.submit(ctx, "instance.return-host", lcmd.ReturnHost{ID: in.ID, ModifyIndex: in.ModifyIndex})
	if err != nil && !isConflict(err) {
		return true, fmt.Errorf("return host %s (instance %s): %w", in.ExternalID, in.ID, err)
	}
	return true, nil
}

// readyHosts indexes the free hosts by pool and every label each serves.
func (r *runner) readyHosts(s *snapshot) map[string][]*launcher.Instance {
	out := map[string][]*launcher.Instance{}
	for _, in := range s.insts {
		if in.State != events.InstanceReady || in.RequestID != "" || !r.hostMatches(in, s.prov) {
			continue
		}
		for _, l := range r.hosts.cfg[in.ExternalID].Labels {
			k := in.Pool + "\x00" + l
			out[k] = append(out[k], in)
		}
	}
	return out
}

// maxProbes bounds the reachability checks probeHosts runs at once.
const maxProbes = 32

// probeHosts checks, in rounds of checks run at once, the free hosts of
// the labels open requests ask for, in the order the pass tries them: a
// first round checks as many as are asked for, and each further round,
// for those still missing, twice as many as the round before. A pass so
// waits about one timeout per doubling, not one per unreachable host,
// and a host no request would get is not dialled.
func (r *runner) probeHosts(ctx context.Context, ready map[string][]*launcher.Instance, open []*launcher.Request) {
	need := map[string]int{}
	for _, req := range open {
		for _, l := range req.Labels {
			need[l]++
		}
	}
	candidates := map[string][]string{} // label -> host names, in order
	for _, k := range slices.Sorted(maps.Keys(ready)) {
		_, label, _ := strings.Cut(k, "\x00")
		if need[label] == 0 {
			continue
		}
		for _, in := range ready[k] {
			if !slices.Contains(candidates[label], in.ExternalID) {
				candidates[label] = append(candidates[label], in.ExternalID)
			}
		}
	}
	for factor := 1; ; factor *= 2 {
		var round []string
		picked := map[string]bool{}
		for _, label := range slices.Sorted(maps.Keys(candidates)) {
			up := 0
			for _, name := range candidates[label] {
				if err, done := r.hosts.probed[name]; done && err == nil {
					up++
				}
			}
			take := (need[label] - up) * factor
			for _, name := range candidates[label] {
				if take <= 0 {
					break
				}
				if _, done := r.hosts.probed[name]; !done && !picked[name] {
					picked[name] = true
					round = append(round, name)
					take--
				}
			}
		}
		if len(round) == 0 {
			return
		}
		answers := make([]error, len(round))
		slots := make(chan struct{}, maxProbes)
		var wg sync.WaitGroup
		for i, name := range round {
			slots <- struct{}{}
			wg.Go(func() {
				defer func() { <-slots }()
				answers[i] = r.hosts.d.Reachable(ctx, r.hosts.cfg[name])
			})
		}
		wg.Wait()
		for i, name := range round {
			r.hosts.probed[name] = answers[i]
		}
	}
}

// reachable checks in's host once per pass. An unreachable host is
// skipped: its request is left for later, not declined, and the
// provider does not pause (P8).
func (r *runner) reachable(ctx context.Context, log logger, req string, in *launcher.Instance) bool {
	err, ok := r.hosts.reach[in.ExternalID]
	if !ok {
		var probed bool
		if err, probed = r.hosts.probed[in.ExternalID]; !probed {
			err = r.hosts.d.Reachable(ctx, r.hosts.cfg[in.ExternalID])
		}
		r.hosts.reach[in.ExternalID] = err
		if err != nil {
			r.l.m.decisions.WithLabelValues(r.name, "host:unreachable").Inc()
		}
		switch {
		case err != nil && !r.hosts.down[in.ExternalID]:
			log.Info("static host unreachable; its requests are left for later, not declined", "host", in.ExternalID,
				"instance", in.ID, "request", req, "err", err)
		case err == nil && r.hosts.down[in.ExternalID]:
			r.log.Info("static host reachable again", "host", in.ExternalID, "instance", in.ID)
		}
		r.hosts.down[in.ExternalID] = err != nil
	}
	return err == nil
}

// hostsShort names why the pool's hosts could never serve labels at once
// (more instances of a label, or more labels, than hosts that carry
// them), or "".
func hostsShort(hosts []driver.Host, pool string, prov *launcher.Provider, labels []string) string {
	want := map[string]int{}
	for _, l := range labels {
		want[l]++
	}
	have := map[string]int{}
	anyOf := 0
	for _, h := range hosts {
		p, ok := prov.PoolFor(h.Labels)
		if !ok || p.Name != pool {
			continue
		}
		carries := false
		for _, l := range h.Labels {
			if want[l] > 0 {
				have[l]++
				carries = true
			}
		}
		if carries {
			anyOf++
		}
	}
	for _, l := range slices.Sorted(maps.Keys(want)) {
		if have[l] < want[l] {
			return fmt.Sprintf("%d hosts with label %s needed, %d configured", want[l], l, have[l])
		}
	}
	if anyOf < len(labels) {
		return fmt.Sprintf("%d hosts needed, %d carry the labels", len(labels), anyOf)
	}
	return ""
}
