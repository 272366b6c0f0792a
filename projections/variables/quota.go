package variables

import (
	"errors"
	"fmt"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/namespaces"
)

// QuotaOp is the precondition operation that decides at apply whether a
// variable write fits its namespace's VariablesQuota (N13).
const QuotaOp events.PreconditionOp = "variables-quota"

// QuotaPrecondition is the precondition a write of size bytes at path in
// namespace ns carries.
func QuotaPrecondition(ns, path string, size int64) events.Precondition {
	return events.Precondition{Table: Table, Key: Key(ns, path), Op: QuotaOp, Index: uint64(size)}
}

func init() {
	projections.RegisterCheck(QuotaOp, func(v projections.View, p events.Precondition) string {
		ns, path := SplitKey(p.Key)
		if err := CheckQuota(v, ns, path, int64(p.Index)); err != nil {
			return err.Error()
		}
		return ""
	})
}

// QuotaError is a write that would take a namespace past its variables
// quota.
type QuotaError struct {
	Namespace string
	// Quota is the namespace's VariablesQuota, Used what its variables
	// store now, Would what they would store after the write (bytes).
	Quota, Used, Would int64
}

func (e *QuotaError) Error() string {
	return fmt.Sprintf("namespace %q variables quota exceeded: the write would store %d bytes, over the quota of %d (%d used)",
		e.Namespace, e.Would, e.Quota, e.Used)
}

// CheckQuota returns a *QuotaError when writing size encrypted bytes at
// path in namespace ns would take the namespace past its VariablesQuota.
// A write that does not grow the namespace's usage is always allowed, so
// a lowered quota never blocks shrinking or deleting. It reads only v and
// is what the apply-time check runs, so decide and apply agree.
func CheckQuota(v projections.View, ns, path string, size int64) error {
	nsRow, err := namespaces.Get(v, ns)
	if errors.Is(err, projections.ErrNotFound) {
		return nil // the namespace precondition reports it
	} else if err != nil {
		return err
	}
	if nsRow.VariablesQuota <= 0 {
		return nil
	}
	var old int64
	if cur, err := Get(v, ns, path); err == nil {
		old = cur.Size()
	} else if !errors.Is(err, projections.ErrNotFound) {
		return err
	}
	u, err := UsageOf(v, ns)
	if err != nil {
		return err
	}
	would := u.Bytes - old + size
	if size > old && would > nsRow.VariablesQuota {
		return &QuotaError{Namespace: ns, Quota: nsRow.VariablesQuota, Used: u.Bytes, Would: would}
	}
	return nil
}
