package allocs_test

import (
	"reflect"
	"testing"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/allocs"
	pt "github.com/ordoplane/ordo/projections/projectionstest"
)

// TestSigningKeyIndex is N5's index: allocations record the key that
// signed their identity, and the live ones are indexed and counted per key
// until they are terminal or deleted.
func TestSigningKeyIndex(t *testing.T) {
	store := pt.OpenStore(t)
	f := pt.NewFSM(t, store, allocs.Projection{})
	v := projections.NewView(store)
	signed := func(id, key string) events.Allocation {
		a := alloc(id, "n1", "web", "e1")
		a.SigningKeyID = key
		return a
	}
	check := func(key string, want []string) {
		t.Helper()
		got, err := allocs.LiveBySigningKey(v, key)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("LiveBySigningKey(%s) = %v, %v; want %v", key, got, err, want)
		}
		n, idx, err := allocs.LiveSignedBy(v, key)
		if err != nil || n != len(want) || (n == 0) != (idx == 0) {
			t.Fatalf("LiveSignedBy(%s) = %d @%d, %v; want %d", key, n, idx, err, len(want))
		}
	}
	pt.ApplyOne(t, f, 1, pt.Entry(t, "c1", &events.AllocsPlaced{EvalID: "e1", Allocs: []events.Allocation{
		signed("a", "k1"), signed("b", "k1"), signed("c", "k2"), signed("d", "")}}))
	check("k1", []string{"a", "b"})
	check("k2", []string{"c"})
	_, idx1, _ := allocs.LiveSignedBy(v, "k1")

	// A client reporting a running alloc changes nothing in the index.
	pt.ApplyOne(t, f, 2, pt.Entry(t, "c2", &events.AllocsClientUpdated{NodeID: "n1", Updates: []events.AllocClientUpdate{
		{ID: "a", ClientStatus: events.AllocClientRunning}}}))
	if _, idx, _ := allocs.LiveSignedBy(v, "k1"); idx != idx1 {
		t.Fatal("a running update moved the signing count")
	}
	// Terminal: complete on the client, or stopped by the servers.
	pt.ApplyOne(t, f, 3, pt.Entry(t, "c3", &events.AllocsClientUpdated{NodeID: "n1", Updates: []events.AllocClientUpdate{
		{ID: "a", ClientStatus: events.AllocClientComplete}}}))
	check("k1", []string{"b"})
	pt.ApplyOne(t, f, 4, pt.Entry(t, "c4", &events.AllocsDesiredUpdated{Updates: []events.AllocDesiredUpdate{
		{ID: "b", DesiredStatus: events.AllocDesiredStop}}}))
	check("k1", nil)
	// Deleting a live alloc removes it too.
	pt.ApplyOne(t, f, 5, pt.Entry(t, "c5", &events.AllocsDeleted{IDs: []string{"c", "a"}}))
	check("k2", nil)
}
