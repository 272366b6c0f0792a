package plan

import (
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/evals"
)

func TestCommitValidate(t *testing.T) {
	ok := Commit{EvalID: "e", Placements: []events.Allocation{{ID: "a", NodeID: "n"}}, NodeIndexes: map[string]uint64{"n": 3}}
	if err := ok.Validate(); err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]Commit{
		"EvalID":      {},
		"Placements":  {EvalID: "e", Placements: []events.Allocation{{ID: "a"}}},
		"NodeIndexes": {EvalID: "e", Placements: []events.Allocation{{ID: "a", NodeID: "n"}}},
	} {
		var ve *commands.ValidationError
		if err := c.Validate(); !errors.As(err, &ve) || ve.Field != name {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestCommitDecideOrderAndPreconditions(t *testing.T) {
	c := Commit{
		EvalID:      "e",
		Placements:  []events.Allocation{{ID: "a1", NodeID: "n2"}, {ID: "a2", NodeID: "n1"}},
		Updates:     []events.AllocDesiredUpdate{{ID: "old", DesiredStatus: events.AllocDesiredStop}},
		Deployment:  &events.Deployment{ID: "d"},
		Evals:       []events.Evaluation{{ID: "e", Status: events.EvalStatusComplete}},
		NodeIndexes: map[string]uint64{"n2": 7, "n1": 5},
	}
	d, err := c.Decide(projections.View{}, time.Time{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var types []string
	for _, p := range d.Events {
		types = append(types, reflect.TypeOf(p).Elem().Name())
	}
	if want := []string{"AllocsPlaced", "AllocsDesiredUpdated", "DeploymentUpserted", "EvalsUpserted"}; !reflect.DeepEqual(types, want) {
		t.Fatalf("events %v, want %v", types, want)
	}
	// The eval must exist (a deleted eval's plan is refused), then the nodes.
	if len(d.Preconditions) != 3 || d.Preconditions[0] != (events.Precondition{Table: evals.Table, Key: "e", Op: events.Exists}) ||
		d.Preconditions[1].Key != "n1" || d.Preconditions[1].Index != 5 ||
		d.Preconditions[2].Key != "n2" || d.Preconditions[1].Op != events.ModifyIndex {
		t.Fatalf("preconditions %+v", d.Preconditions)
	}
	// An eval update alone (nothing placed) still commits, if the eval exists.
	d, _ = Commit{EvalID: "e", Evals: []events.Evaluation{{ID: "e"}}}.Decide(projections.View{}, time.Time{}, nil)
	if len(d.Events) != 1 || len(d.Preconditions) != 1 || d.Preconditions[0].Table != evals.Table {
		t.Fatalf("eval-only commit %+v", d)
	}
}

// TestCommitStampsPlacements: a placement carries the commit's time as its
// CreateTime (kept when it already has one, an in-place update) and its
// ModifyTime, in Unix nanoseconds, so lists show when it was created.
func TestCommitStampsPlacements(t *testing.T) {
	now := time.Unix(1_700_000_000, 5)
	c := Commit{EvalID: "e", NodeIndexes: map[string]uint64{"n": 1},
		Placements: []events.Allocation{{ID: "new", NodeID: "n"}, {ID: "kept", NodeID: "n", CreateTime: 42}}}
	d, err := c.Decide(projections.View{}, now, nil)
	if err != nil {
		t.Fatal(err)
	}
	placed := d.Events[0].(*events.AllocsPlaced).Allocs
	if placed[0].CreateTime != now.UnixNano() || placed[0].ModifyTime != now.UnixNano() {
		t.Errorf("new placement: CreateTime %d ModifyTime %d, want %d", placed[0].CreateTime, placed[0].ModifyTime, now.UnixNano())
	}
	if placed[1].CreateTime != 42 || placed[1].ModifyTime != now.UnixNano() {
		t.Errorf("in-place update: CreateTime %d ModifyTime %d, want 42 and %d", placed[1].CreateTime, placed[1].ModifyTime, now.UnixNano())
	}
	if c.Placements[0].CreateTime != 0 {
		t.Error("Decide changed the caller's placements")
	}
}
