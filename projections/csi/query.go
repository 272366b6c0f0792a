package csi

import (
	"errors"
	"fmt"
	"strings"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/allocs"
)

// GetVolume returns volume id of namespace ns (the exact id, never a
// prefix: N19), or projections.ErrNotFound. Its live claims whose
// allocation no longer exists or has stopped on its node are returned as
// past claims, with the modes they were made in (N22), so whoever reads
// the volume — the API, the scheduler, the volume watcher — releases them.
func GetVolume(v projections.View, ns, id string) (*Volume, error) {
	k := Key(ns, id)
	r, pr, err := get[volumeRow](v, VolumesTable, k)
	if err != nil {
		return nil, err
	}
	vol := fromVolumeRow(r, pr)
	if err := denormalize(v, vol); err != nil {
		return nil, fmt.Errorf("volume %q: %w", id, err)
	}
	return vol, nil
}

func fromVolumeRow(r *volumeRow, pr projections.Row) *Volume {
	return &Volume{CSIVolume: r.Volume, Secrets: r.Secrets, Claims: r.Claims,
		CreateIndex: pr.CreateIndex, ModifyIndex: pr.ModifyIndex}
}

// denormalize turns the live claims of allocations that are gone or
// client-terminal into past claims (state unpublishing).
func denormalize(v projections.View, vol *Volume) error {
	for i := range vol.Claims {
		c := &vol.Claims[i]
		if !Live(c) {
			continue
		}
		a, err := allocs.Get(v, c.AllocID)
		switch {
		case errors.Is(err, projections.ErrNotFound):
			c.State = events.CSIClaimUnpublishing
		case err != nil:
			return err
		case a.ClientTerminal():
			c.State = events.CSIClaimUnpublishing
		}
	}
	return nil
}

// VolumeQuery selects volumes for ScanVolumes.
type VolumeQuery struct {
	// Namespace keeps one namespace's volumes; AllNamespaces keeps all.
	Namespace string
	// Prefix keeps the volumes whose id starts with it, in every
	// namespace selected (N19: with AllNamespaces too).
	Prefix string
	// PluginID, when set, keeps the volumes of that plugin.
	PluginID string
}

// ScanVolumes calls fn with each volume q selects, by namespace then id,
// claims as GetVolume returns them; fn may return an error to stop.
func ScanVolumes(v projections.View, q VolumeQuery, fn func(*Volume) error) error {
	scan := Key(q.Namespace, q.Prefix)
	if q.Namespace == AllNamespaces {
		scan = ""
	}
	return v.Scan(VolumesTable, scan, false, func(k string, pr projections.Row) error {
		if _, id := SplitKey(k); !strings.HasPrefix(id, q.Prefix) {
			return nil
		}
		var r volumeRow
		if err := decodeInto(pr.Value, &r); err != nil {
			return fmt.Errorf("volume %q: %w", k, err)
		}
		if q.PluginID != "" && r.Volume.PluginID != q.PluginID {
			return nil
		}
		vol := fromVolumeRow(&r, pr)
		if err := denormalize(v, vol); err != nil {
			return err
		}
		return fn(vol)
	})
}

// CountVolumes returns how many volumes namespace ns holds.
func CountVolumes(v projections.View, ns string) (int, error) {
	n := 0
	err := v.Scan(VolumesTable, Key(ns, ""), false, func(string, projections.Row) error {
		n++
		return nil
	})
	return n, err
}

// GetPlugin returns plugin id (exact), or projections.ErrNotFound.
func GetPlugin(v projections.View, id string) (*Plugin, error) {
	r, pr, err := get[pluginRow](v, PluginsTable, id)
	if err != nil {
		return nil, err
	}
	return fromPluginRow(id, r, pr), nil
}

// ScanPlugins calls fn with each plugin whose id starts with prefix (N19),
// by id; fn may return an error to stop.
func ScanPlugins(v projections.View, prefix string, fn func(*Plugin) error) error {
	return v.Scan(PluginsTable, prefix, false, func(k string, pr projections.Row) error {
		var r pluginRow
		if err := decodeInto(pr.Value, &r); err != nil {
			return fmt.Errorf("plugin %q: %w", k, err)
		}
		return fn(fromPluginRow(k, &r, pr))
	})
}

// fromPluginRow derives a plugin's health and expected counts: expected
// from its jobs' registrations (N21), healthy from its instances.
func fromPluginRow(id string, r *pluginRow, pr projections.Row) *Plugin {
	p := &Plugin{ID: id, Controllers: map[string]*events.CSIInfo{}, Nodes: map[string]*events.CSIInfo{},
		CreateIndex: pr.CreateIndex, ModifyIndex: pr.ModifyIndex}
	seen := map[string]bool{}
	add := func(m map[string]*events.CSIInfo, list []instance, healthy *int) {
		for _, in := range list {
			info := in.Info
			if in.Down {
				info.Healthy, info.HealthDescription = false, "node is down"
			}
			m[in.NodeID] = &info
			if info.Healthy {
				*healthy++
			}
			if p.Provider == "" {
				p.Provider, p.Version = info.Provider, info.ProviderVersion
			}
			if info.RequiresControllerPlugin {
				p.ControllerRequired = true
			}
			if info.AllocID != "" && !seen[info.AllocID] {
				seen[info.AllocID] = true
				p.AllocIDs = append(p.AllocIDs, info.AllocID)
			}
		}
	}
	add(p.Controllers, r.Controllers, &p.ControllersHealthy)
	add(p.Nodes, r.Nodes, &p.NodesHealthy)
	system := false
	for _, j := range r.Jobs {
		p.ControllersExpected += j.Controllers
		if j.System {
			system = true
			continue
		}
		p.NodesExpected += j.Nodes
	}
	if system {
		p.NodesExpected += len(r.Nodes)
	}
	sortStrings(p.AllocIDs)
	return p
}

// NodePlugins returns the plugin instances node id last reported, by
// plugin id, as its registration carried them (capabilities sorted); nil
// maps when it reported none.
func NodePlugins(v projections.View, id string) (controllers, nodes map[string]*events.CSIInfo, err error) {
	nr, _, err := get[nodeRow](v, NodesTable, id)
	if errors.Is(err, projections.ErrNotFound) {
		return nil, nil, nil
	} else if err != nil {
		return nil, nil, err
	}
	find := func(ids []string, pick func(*pluginRow) []instance) (map[string]*events.CSIInfo, error) {
		if len(ids) == 0 {
			return nil, nil
		}
		out := map[string]*events.CSIInfo{}
		for _, pid := range ids {
			r, _, err := get[pluginRow](v, PluginsTable, pid)
			if errors.Is(err, projections.ErrNotFound) {
				continue
			} else if err != nil {
				return nil, err
			}
			for _, in := range pick(r) {
				if in.NodeID == id {
					info := in.Info
					out[pid] = &info
				}
			}
		}
		return out, nil
	}
	if controllers, err = find(nr.Controllers, func(r *pluginRow) []instance { return r.Controllers }); err != nil {
		return nil, nil, err
	}
	nodes, err = find(nr.Nodes, func(r *pluginRow) []instance { return r.Nodes })
	return controllers, nodes, err
}
