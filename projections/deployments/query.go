package deployments

import (
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/order"
)

// Get returns the deployment with exactly id, or projections.ErrNotFound.
func Get(v projections.View, id string) (*Deployment, error) {
	r, err := v.Get(Table, id)
	if err != nil {
		return nil, err
	}
	return fromRow(r)
}

// Resolve returns the deployment whose id is idOrPrefix or, failing that, the one
// deployment whose id starts with it: projections.ErrNotFound when none does, an
// *projections.AmbiguousError when several do.
func Resolve(v projections.View, idOrPrefix string) (*Deployment, error) {
	r, err := projections.Resolve(v, Table, "deployment", idOrPrefix)
	if err != nil {
		return nil, err
	}
	return fromRow(r)
}

// Query selects deployments for Scan.
type Query = order.Query

// Scan calls fn with each deployment q selects, in creation order; fn may
// return an error to stop, which Scan returns.
func Scan(v projections.View, q Query, fn func(*Deployment) error) error {
	return order.Scan(v, Table, ByCreateTable, q, fromRow, func(x *Deployment) string { return x.Namespace }, fn)
}

// ByJob returns the deployments of a job in creation order.
func ByJob(v projections.View, namespace, job string) ([]*Deployment, error) {
	return order.Collect(v, Table, ByJobTable, JobKey(namespace, job), fromRow)
}

// Latest returns the job's most recently created deployment, or
// projections.ErrNotFound.
func Latest(v projections.View, namespace, job string) (*Deployment, error) {
	list, err := ByJob(v, namespace, job)
	if err != nil {
		return nil, err
	}
	if len(list) == 0 {
		return nil, projections.ErrNotFound
	}
	return list[len(list)-1], nil
}
