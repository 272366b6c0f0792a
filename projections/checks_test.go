package projections_test

import (
	"errors"
	"testing"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/fsm"
	"github.com/ordoplane/ordo/projections/namespaces"
	pt "github.com/ordoplane/ordo/projections/projectionstest"
)

// checkTestOp is decided by a check that holds only while namespace
// "open" exists: the check reads the state at apply, not at decide.
const checkTestOp events.PreconditionOp = "test-open-exists"

func init() {
	projections.RegisterCheck(checkTestOp, func(v projections.View, p events.Precondition) string {
		if _, err := v.Get(namespaces.Table, "open"); err != nil {
			return "namespace open is gone"
		}
		return ""
	})
}

// TestRegisteredCheck: a registered operation decides its preconditions at
// apply (a rejection records nothing), and an unregistered one is refused.
func TestRegisteredCheck(t *testing.T) {
	store := pt.OpenStore(t)
	f := pt.NewFSM(t, store, namespaces.Projection{})
	pt.ApplyOne(t, f, 1, pt.Entry(t, "c1", &events.NamespaceUpserted{Namespace: events.Namespace{Name: "open"}}))

	e := pt.Entry(t, "c2", &events.NamespaceUpserted{Namespace: events.Namespace{Name: "a"}})
	e.Preconditions = []events.Precondition{{Table: "t", Key: "k", Op: checkTestOp}}
	if res := pt.ApplyOne(t, f, 2, e); res.Err != nil {
		t.Fatalf("check holds, got %v", res.Err)
	}
	pt.ApplyOne(t, f, 3, pt.Entry(t, "c3", &events.NamespaceDeleted{Name: "open"}))
	e = pt.Entry(t, "c4", &events.NamespaceUpserted{Namespace: events.Namespace{Name: "b"}})
	e.Preconditions = []events.Precondition{{Table: "t", Key: "k", Op: checkTestOp}}
	res := pt.ApplyOne(t, f, 4, e)
	var re *fsm.RejectedError
	if !errors.As(res.Err, &re) || re.Reason != "namespace open is gone" {
		t.Fatalf("check fails, got %v", res.Err)
	}
	if _, err := namespaces.Get(projections.NewView(store), "b"); !errors.Is(err, projections.ErrNotFound) {
		t.Fatalf("a rejected entry applied: %v", err)
	}
	e = pt.Entry(t, "c5", &events.NamespaceUpserted{Namespace: events.Namespace{Name: "c"}})
	e.Preconditions = []events.Precondition{{Table: "t", Key: "k", Op: "nobody-registered-this"}}
	if res := pt.ApplyOne(t, f, 5, e); res.Err == nil {
		t.Fatal("an unknown operation was accepted")
	}
}

func TestRegisterCheckRefusesBuiltins(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("registering a built-in operation did not panic")
		}
	}()
	projections.RegisterCheck(events.Exists, func(projections.View, events.Precondition) string { return "" })
}
