package nodepools

import (
	"fmt"
	"strings"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/jobs"
	"github.com/ordoplane/ordo/projections/nodes"
)

// UnusedOp is the precondition operation that holds when no node and no
// job is in a node pool.
const UnusedOp events.PreconditionOp = "nodepool-unused"

// UnusedPrecondition is the precondition a delete of pool name carries.
func UnusedPrecondition(name string) events.Precondition {
	return events.Precondition{Table: Table, Key: name, Op: UnusedOp}
}

func init() {
	projections.RegisterCheck(UnusedOp, func(v projections.View, p events.Precondition) string {
		if err := InUse(v, p.Key); err != nil {
			return err.Error()
		}
		return ""
	})
}

// Of returns the pool a node or job names, "default" for none.
func Of(pool string) string {
	if pool == "" {
		return Default
	}
	return pool
}

// Nodes returns the nodes in pool name (every node for "all"), by id.
func Nodes(v projections.View, name string) ([]*nodes.Node, error) {
	var out []*nodes.Node
	err := nodes.Scan(v, nodes.Query{}, func(n *nodes.Node) error {
		if name == All || Of(n.NodePool) == name {
			out = append(out, n)
		}
		return nil
	})
	return out, err
}

// Jobs returns the jobs of namespace ns (jobs.AllNamespaces for every
// one) that run in pool name, by namespace then id.
func Jobs(v projections.View, ns, name string) ([]*jobs.Job, error) {
	var out []*jobs.Job
	err := jobs.Scan(v, jobs.Query{Namespace: ns}, func(s *jobs.Stub) error {
		j, err := jobs.Get(v, s.Namespace, s.ID)
		if err != nil {
			return err
		}
		if Of(j.NodePool) == name {
			out = append(out, j)
		}
		return nil
	})
	return out, err
}

// InUse returns an error naming what still uses pool name (nodes, jobs
// that are not purged), nil when nothing does.
func InUse(v projections.View, name string) error {
	ns, err := Nodes(v, name)
	if err != nil {
		return err
	}
	js, err := Jobs(v, jobs.AllNamespaces, name)
	if err != nil {
		return err
	}
	if len(ns) == 0 && len(js) == 0 {
		return nil
	}
	var what []string
	if len(ns) > 0 {
		what = append(what, fmt.Sprintf("%d node(s)", len(ns)))
	}
	if len(js) > 0 {
		what = append(what, fmt.Sprintf("%d job(s)", len(js)))
	}
	return fmt.Errorf("node pool %q has %s in it", name, strings.Join(what, " and "))
}
