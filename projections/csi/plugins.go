package csi

import (
	"cmp"
	"errors"
	"slices"
	"strings"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
)

// applyJob records a job's CSI volume requests and the plugins it runs,
// and sets its expectation on each plugin from the registration: its
// groups' counts, or nothing once the job is stopped (N21).
func applyJob(tx *projections.Tx, job *events.Job) error {
	key := Key(job.Namespace, job.ID)
	old, _, err := get[jobRow](tx.View, JobsTable, key)
	if err != nil && !errors.Is(err, projections.ErrNotFound) {
		return err
	}
	ver := jobVersion{Version: job.Version}
	expect := map[string]*pluginJob{}
	for i := range job.TaskGroups {
		tg := &job.TaskGroups[i]
		if reqs := CSIRequests(tg); len(reqs) > 0 {
			ver.Groups = append(ver.Groups, groupVolumes{Group: tg.Name, Requests: reqs})
		}
		for _, t := range tg.Tasks {
			pc := t.CSIPluginConfig
			if pc == nil || pc.ID == "" {
				continue
			}
			e := expect[pc.ID]
			if e == nil {
				e = &pluginJob{Key: key, System: job.Type == events.JobTypeSystem || job.Type == events.JobTypeSysbatch}
				expect[pc.ID] = e
			}
			if pc.Type == events.CSIPluginTypeController || pc.Type == events.CSIPluginTypeMonolith {
				e.Controllers += tg.Count
			}
			if pc.Type == events.CSIPluginTypeNode || pc.Type == events.CSIPluginTypeMonolith {
				e.Nodes += tg.Count
			}
		}
	}
	if old == nil && len(ver.Groups) == 0 && len(expect) == 0 {
		return nil // a job CSI knows nothing of
	}
	r := jobRow{Type: job.Type, Stop: job.Stop}
	if old != nil {
		r.Versions = slices.DeleteFunc(old.Versions, func(v jobVersion) bool { return v.Version == job.Version })
	}
	if len(ver.Groups) > 0 {
		r.Versions = append(r.Versions, ver)
		slices.SortFunc(r.Versions, func(a, b jobVersion) int { return cmp.Compare(a.Version, b.Version) })
	}
	if n := len(r.Versions); n > maxJobVersions {
		r.Versions = r.Versions[n-maxJobVersions:]
	}
	for id := range expect {
		r.Plugins = append(r.Plugins, id)
	}
	slices.Sort(r.Plugins)
	var ids []string
	if old != nil {
		ids = append(ids, old.Plugins...)
	}
	ids = append(ids, r.Plugins...)
	slices.Sort(ids)
	for _, id := range slices.Compact(ids) {
		e := expect[id]
		if job.Stop {
			e = nil
		}
		if err := setExpectation(tx, id, key, e); err != nil {
			return err
		}
	}
	return put(tx, JobsTable, key, &r)
}

// applyJobDeregistered stops the job counting on its plugins; a plugin
// that never registered is no error (N19).
func applyJobDeregistered(tx *projections.Tx, p *events.JobDeregistered) error {
	key := Key(p.Namespace, p.ID)
	r, _, err := get[jobRow](tx.View, JobsTable, key)
	if errors.Is(err, projections.ErrNotFound) {
		return nil
	} else if err != nil {
		return err
	}
	for _, id := range r.Plugins {
		if err := setExpectation(tx, id, key, nil); err != nil {
			return err
		}
	}
	if p.Purge {
		_, err := tx.Delete(JobsTable, key)
		return err
	}
	if r.Stop {
		return nil
	}
	r.Stop = true
	return put(tx, JobsTable, key, r)
}

// setExpectation sets (nil: removes) job key's expectation on plugin id,
// creating the plugin on a first expectation and removing a plugin left
// with neither jobs nor instances.
func setExpectation(tx *projections.Tx, id, key string, e *pluginJob) error {
	r, _, err := get[pluginRow](tx.View, PluginsTable, id)
	if errors.Is(err, projections.ErrNotFound) {
		if e == nil {
			return nil // a plugin that never registered (N19)
		}
		r = &pluginRow{}
	} else if err != nil {
		return err
	}
	i, found := slices.BinarySearchFunc(r.Jobs, key, func(j pluginJob, k string) int { return strings.Compare(j.Key, k) })
	switch {
	case e == nil && !found:
		return nil
	case e == nil:
		r.Jobs = slices.Delete(r.Jobs, i, i+1)
	case found:
		if r.Jobs[i] == *e {
			return nil
		}
		r.Jobs[i] = *e
	default:
		r.Jobs = slices.Insert(r.Jobs, i, *e)
	}
	return putPlugin(tx, id, r)
}

func putPlugin(tx *projections.Tx, id string, r *pluginRow) error {
	if r.empty() {
		_, err := tx.Delete(PluginsTable, id)
		return err
	}
	return put(tx, PluginsTable, id, r)
}

// applyNode records the plugin instances a node reports (none for a
// deregistered node), updating each plugin it ran or runs.
func applyNode(tx *projections.Tx, n *events.Node) error {
	old, _, err := get[nodeRow](tx.View, NodesTable, n.ID)
	if err != nil && !errors.Is(err, projections.ErrNotFound) {
		return err
	}
	if old == nil && len(n.CSIControllerPlugins) == 0 && len(n.CSINodePlugins) == 0 {
		return nil
	}
	nr := nodeRow{Controllers: sortedKeys(n.CSIControllerPlugins), Nodes: sortedKeys(n.CSINodePlugins)}
	ids := append(append([]string(nil), nr.Controllers...), nr.Nodes...)
	if old != nil {
		nr.Down = old.Down
		ids = append(append(ids, old.Controllers...), old.Nodes...)
	}
	slices.Sort(ids)
	for _, id := range slices.Compact(ids) {
		r, _, err := get[pluginRow](tx.View, PluginsTable, id)
		if errors.Is(err, projections.ErrNotFound) {
			r = &pluginRow{}
		} else if err != nil {
			return err
		}
		r.Controllers = setInstance(r.Controllers, n.ID, n.CSIControllerPlugins[id], nr.Down)
		r.Nodes = setInstance(r.Nodes, n.ID, n.CSINodePlugins[id], nr.Down)
		if err := putPlugin(tx, id, r); err != nil {
			return err
		}
	}
	if len(nr.Controllers) == 0 && len(nr.Nodes) == 0 {
		_, err := tx.Delete(NodesTable, n.ID)
		return err
	}
	return put(tx, NodesTable, n.ID, &nr)
}

// applyNodeStatus marks a node's plugin instances down (unhealthy) or up.
func applyNodeStatus(tx *projections.Tx, node string, down bool) error {
	nr, _, err := get[nodeRow](tx.View, NodesTable, node)
	if errors.Is(err, projections.ErrNotFound) {
		return nil
	} else if err != nil {
		return err
	}
	if nr.Down == down {
		return nil
	}
	nr.Down = down
	ids := append(append([]string(nil), nr.Controllers...), nr.Nodes...)
	slices.Sort(ids)
	for _, id := range slices.Compact(ids) {
		r, _, err := get[pluginRow](tx.View, PluginsTable, id)
		if errors.Is(err, projections.ErrNotFound) {
			continue
		} else if err != nil {
			return err
		}
		for _, list := range [][]instance{r.Controllers, r.Nodes} {
			for i := range list {
				if list[i].NodeID == node {
					list[i].Down = down
				}
			}
		}
		if err := putPlugin(tx, id, r); err != nil {
			return err
		}
	}
	return put(tx, NodesTable, node, nr)
}

// setInstance sets (info nil: removes) node's instance in list, sorted by
// node id; capabilities are stored sorted (N16).
func setInstance(list []instance, node string, info *events.CSIInfo, down bool) []instance {
	i, found := slices.BinarySearchFunc(list, node, func(in instance, n string) int { return strings.Compare(in.NodeID, n) })
	if info == nil {
		if found {
			list = slices.Delete(list, i, i+1)
		}
		return list
	}
	in := instance{NodeID: node, Info: *info, Down: down}
	if c := info.ControllerInfo; c != nil {
		cc := *c
		cc.Capabilities = sortedCopy(c.Capabilities)
		in.Info.ControllerInfo = &cc
	}
	if ni := info.NodeInfo; ni != nil {
		nc := *ni
		nc.Capabilities = sortedCopy(ni.Capabilities)
		in.Info.NodeInfo = &nc
	}
	if found {
		list[i] = in
		return list
	}
	return slices.Insert(list, i, in)
}

func sortedCopy(s []string) []string {
	if s == nil {
		return nil
	}
	out := slices.Clone(s)
	slices.Sort(out)
	return out
}

func sortedKeys(m map[string]*events.CSIInfo) []string {
	var out []string
	for k, v := range m {
		if v != nil {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

// Canonical returns a copy of a node's reported plugin instances as the
// projection stores them — capabilities sorted (N16), nil instances
// dropped — or nil when there are none, so a registration that reports
// the same plugins compares equal to what is stored.
func Canonical(m map[string]*events.CSIInfo) map[string]*events.CSIInfo {
	var out map[string]*events.CSIInfo
	for id, info := range m {
		if info == nil {
			continue
		}
		if out == nil {
			out = map[string]*events.CSIInfo{}
		}
		in := setInstance(nil, "", info, false)[0].Info
		out[id] = &in
	}
	return out
}
