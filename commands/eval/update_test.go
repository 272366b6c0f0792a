package eval

import (
	"errors"
	"testing"
	"time"

	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
)

func TestUpdate(t *testing.T) {
	var ve *commands.ValidationError
	if err := (Update{}).Validate(); !errors.As(err, &ve) || ve.Field != "Evals" {
		t.Fatalf("empty update: %v", err)
	}
	bad := Update{Evals: []events.Evaluation{{ID: "e", JobID: "j", Namespace: "default", Status: "nope"}}}
	if err := bad.Validate(); !errors.As(err, &ve) {
		t.Fatalf("unknown status: %v", err)
	}
	u := Update{
		Evals:  []events.Evaluation{{ID: "b", JobID: "j", Namespace: "default", Status: events.EvalStatusPending}},
		Expect: map[string]uint64{"b": 9, "a": 4},
	}
	if err := u.Validate(); err != nil {
		t.Fatal(err)
	}
	d, err := u.Decide(projections.View{}, time.Time{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Preconditions) != 2 || d.Preconditions[0].Key != "a" || d.Preconditions[1].Index != 9 || len(d.Events) != 1 {
		t.Fatalf("decision %+v", d)
	}
}
