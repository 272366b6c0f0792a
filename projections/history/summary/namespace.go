package summary

import (
	"strconv"

	"github.com/ordoplane/ordo/events"
)

func init() {
	register("NamespaceUpserted", func(s *step, p events.Payload) string {
		return namespaceUpserted(s, p.(*events.NamespaceUpserted))
	})
	register("NamespaceDeleted", func(s *step, p events.Payload) string {
		name := p.(*events.NamespaceDeleted).Name
		if s.t.kind != events.KindNamespace {
			return "namespace " + name + " deleted"
		}
		s.reset()
		return "deleted"
	})
	register("ServerRegistered", func(s *step, p events.Payload) string {
		return serverRegistered(s, p.(*events.ServerRegistered))
	})
	register("SnapshotRestored", func(_ *step, p events.Payload) string {
		return snapshotRestored(p.(*events.SnapshotRestored))
	})
	register("ServerRemoved", func(s *step, p events.Payload) string {
		id := p.(*events.ServerRemoved).ID
		if s.t.kind != events.KindServer {
			return "server " + id + " removed"
		}
		s.reset()
		return "removed from the raft configuration"
	})
}

func namespaceUpserted(s *step, p *events.NamespaceUpserted) string {
	ns := &p.Namespace
	if s.t.kind != events.KindNamespace {
		return "namespace " + ns.Name + " applied"
	}
	created := !s.known()
	// A namespace always exists once upserted: mark it so a namespace
	// with no description or meta is known too.
	s.set("Name", ns.Name)
	desc := s.set("Description", ns.Description)
	meta := s.setFamily("Meta[", "]", ns.Meta)
	var q string // 0, no limit, is shown as (none)
	if ns.VariablesQuota != 0 {
		q = strconv.FormatInt(ns.VariablesQuota, 10) + " bytes"
	}
	quota := s.set("VariablesQuota", q)
	if created {
		return "created" + paren(ns.Description)
	}
	parts := []string{trans("description", desc), trans("variables quota", quota)}
	for _, c := range meta {
		parts = append(parts, trans("meta "+c.Field[len("Meta["):len(c.Field)-1], c))
	}
	if line := join(parts...); line != "" {
		return "updated: " + line
	}
	return "applied again, no change"
}

func serverRegistered(s *step, p *events.ServerRegistered) string {
	if s.t.kind != events.KindServer {
		return "server " + p.ID + " joined"
	}
	created := !s.known()
	raft := s.set("RaftAddr", p.RaftAddr)
	http := s.set("HTTPAddr", p.HTTPAddr)
	if created {
		return "joined (raft " + p.RaftAddr + ", http " + p.HTTPAddr + ")"
	}
	if line := join(trans("raft", raft), trans("http", http)); line != "" {
		return "registered again: " + line
	}
	return "registered again, no change"
}

func snapshotRestored(p *events.SnapshotRestored) string {
	from := "cluster " + p.ClusterID
	if p.SavedBy != "" {
		from += ", saved by " + p.SavedBy
	}
	return "restored the state saved at index " + strconv.FormatUint(p.SnapshotIndex, 10) + " (" + from +
		"; " + strconv.FormatUint(p.Rows, 10) + " rows, SHA-256 " + p.Checksum + "), installed at index " +
		strconv.FormatUint(p.Index, 10)
}
