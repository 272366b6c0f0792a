package nsguard

import (
	"fmt"
	"strings"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/csi"
	"github.com/ordoplane/ordo/projections/jobs"
	"github.com/ordoplane/ordo/projections/namespaces"
	"github.com/ordoplane/ordo/projections/variables"
)

// EmptyOp is the precondition operation that holds when a namespace holds
// nothing that blocks its deletion.
const EmptyOp events.PreconditionOp = "namespace-empty"

// EmptyPrecondition is the precondition a delete of namespace ns carries.
func EmptyPrecondition(ns string) events.Precondition {
	return events.Precondition{Table: namespaces.Table, Key: ns, Op: EmptyOp}
}

func init() {
	projections.RegisterCheck(EmptyOp, func(v projections.View, p events.Precondition) string {
		h, err := Remaining(v, p.Key)
		if err != nil {
			return err.Error()
		}
		if !h.Empty() {
			return h.Error()
		}
		return ""
	})
}

// maxNamed bounds how many job ids a Holdings message names.
const maxNamed = 5

// Holdings is what a namespace still holds that blocks its deletion.
type Holdings struct {
	Namespace string
	// Jobs counts the jobs that are not dead; JobIDs names the first few.
	Jobs   int
	JobIDs []string
	// Variables counts the namespace's variables.
	Variables int64
	// Volumes counts its CSI volumes.
	Volumes int
}

// Empty reports whether nothing blocks the delete.
func (h *Holdings) Empty() bool { return h.Jobs == 0 && h.Variables == 0 && h.Volumes == 0 }

// Error says what remains, as in `namespace "team-a" still holds 2 jobs
// that are not dead (web, api) and 3 variables`.
func (h *Holdings) Error() string {
	var parts []string
	if h.Jobs > 0 {
		names := strings.Join(h.JobIDs, ", ")
		if h.Jobs > len(h.JobIDs) {
			names += ", …"
		}
		parts = append(parts, fmt.Sprintf("%s that %s not dead (%s)", plural(int64(h.Jobs), "job"), isAre(h.Jobs), names))
	}
	if h.Variables > 0 {
		parts = append(parts, plural(h.Variables, "variable"))
	}
	if h.Volumes > 0 {
		parts = append(parts, plural(int64(h.Volumes), "volume"))
	}
	var list string
	switch len(parts) {
	case 0:
		return fmt.Sprintf("namespace %q holds nothing", h.Namespace)
	case 1:
		list = parts[0]
	default:
		list = strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1]
	}
	return fmt.Sprintf("namespace %q still holds %s", h.Namespace, list)
}

func plural(n int64, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

func isAre(n int) string {
	if n == 1 {
		return "is"
	}
	return "are"
}

// Remaining returns what namespace ns holds that blocks its deletion.
func Remaining(v projections.View, ns string) (*Holdings, error) {
	h := &Holdings{Namespace: ns}
	err := jobs.Scan(v, jobs.Query{Namespace: ns}, func(j *jobs.Stub) error {
		if j.Status == jobs.StatusDead {
			return nil
		}
		h.Jobs++
		if len(h.JobIDs) < maxNamed {
			h.JobIDs = append(h.JobIDs, j.ID)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("jobs of namespace %q: %w", ns, err)
	}
	u, err := variables.UsageOf(v, ns)
	if err != nil {
		return nil, fmt.Errorf("variables of namespace %q: %w", ns, err)
	}
	h.Variables = u.Count
	if h.Volumes, err = volumesIn(v, ns); err != nil {
		return nil, fmt.Errorf("volumes of namespace %q: %w", ns, err)
	}
	return h, nil
}

// volumesIn counts namespace ns's CSI volumes (N9).
func volumesIn(v projections.View, ns string) (int, error) { return csi.CountVolumes(v, ns) }
