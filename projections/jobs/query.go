package jobs

import (
	"errors"
	"strings"

	"github.com/ordoplane/ordo/projections"
)

// AllNamespaces is the namespace argument that lists every namespace.
const AllNamespaces = "*"

// Get returns job id in namespace ns with its status, or
// projections.ErrNotFound.
func Get(v projections.View, ns, id string) (*Job, error) {
	r, err := v.Get(Table, Key(ns, id))
	if err != nil {
		return nil, err
	}
	j, err := fromRow(r)
	if err != nil {
		return nil, err
	}
	if err := withStable(v, j); err != nil {
		return nil, err
	}
	return j, withStatus(v, j)
}

// withStatus sets j's status from its summary.
func withStatus(v projections.View, j *Job) error {
	s, _, err := loadSummary(v, j.Namespace, j.ID)
	switch {
	case errors.Is(err, projections.ErrNotFound):
		j.Status = deriveStatus(&j.Job, &summaryRow{})
	case err != nil:
		return err
	default:
		j.Status = deriveStatus(&j.Job, s)
	}
	return nil
}

// List returns the jobs of namespace ns (every namespace for
// AllNamespaces) whose id starts with prefix, by namespace then id, each
// with its summary.
func List(v projections.View, ns, prefix string) ([]*Stub, error) {
	var out []*Stub
	err := Scan(v, Query{Namespace: ns, Prefix: prefix}, func(s *Stub) error {
		out = append(out, s)
		return nil
	})
	return out, err
}

// Query selects jobs for Scan.
type Query struct {
	// Namespace keeps the jobs of one namespace; AllNamespaces keeps all.
	Namespace string
	// Prefix keeps the jobs whose id starts with it.
	Prefix string
	// From is the Key(namespace, id) to start at, inclusive; "" for the
	// first (the last when Reverse is set).
	From string
	// Reverse lists in descending namespace and id order.
	Reverse bool
}

// Scan calls fn with the stub of each job q selects, with its summary, by
// namespace then id (descending when q.Reverse is set), the order of
// Nomad's job list; fn may return an error to stop, which Scan returns.
func Scan(v projections.View, q Query, fn func(*Stub) error) error {
	scan := Key(q.Namespace, q.Prefix)
	if q.Namespace == AllNamespaces {
		scan = ""
	}
	return v.ScanFrom(Table, scan, q.From, q.Reverse, func(k string, r projections.Row) error {
		if q.Namespace == AllNamespaces {
			if _, id := splitKey(k); !strings.HasPrefix(id, q.Prefix) {
				return nil
			}
		}
		j, err := fromRow(r)
		if err != nil {
			return err
		}
		s, err := GetSummary(v, j.Namespace, j.ID)
		if errors.Is(err, projections.ErrNotFound) {
			s = nil
		} else if err != nil {
			return err
		}
		if err := withStatus(v, j); err != nil {
			return err
		}
		return fn(j.Stub(s))
	})
}

// Versions returns every stored version of job id in ns, newest first, or
// projections.ErrNotFound when the job does not exist. Each version's
// ModifyIndex and JobModifyIndex are the index it was written at.
func Versions(v projections.View, ns, id string) ([]*Job, error) {
	cur, err := Get(v, ns, id)
	if err != nil {
		return nil, err
	}
	var out []*Job
	err = v.Scan(VersionsTable, Key(ns, id)+"\x00", true, func(_ string, r projections.Row) error {
		j, err := fromRow(r)
		if err != nil {
			return err
		}
		j.CreateIndex = cur.CreateIndex
		j.Status = cur.Status
		out = append(out, j)
		return nil
	})
	return out, err
}

// GetSummary returns the summary of job id in ns, or
// projections.ErrNotFound.
func GetSummary(v projections.View, ns, id string) (*Summary, error) {
	s, r, err := loadSummary(v, ns, id)
	if err != nil {
		return nil, err
	}
	out := &Summary{JobID: id, Namespace: ns, Summary: s.Groups.asMap(), Children: s.Children,
		CreateIndex: r.CreateIndex, ModifyIndex: r.ModifyIndex}
	if out.Summary == nil {
		out.Summary = map[string]TaskGroupSummary{}
	}
	return out, nil
}
