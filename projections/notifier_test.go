package projections_test

import (
	"testing"
	"time"

	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/namespaces"
	pt "github.com/ordoplane/ordo/projections/projectionstest"
	"github.com/ordoplane/ordo/projections/servers"
)

func TestNotifierTables(t *testing.T) {
	store := pt.OpenStore(t)
	f := pt.NewFSM(t, store)
	n := f.Notifier()
	nsWatch := n.Table(namespaces.Table)
	if n.Table(namespaces.Table) != nsWatch {
		t.Fatal("two watchers of one table before a change got different channels")
	}
	srvWatch := n.Table(servers.Table)
	idx, appliedCh := n.Applied()
	if idx != 0 {
		t.Fatalf("fresh notifier at %d", idx)
	}

	pt.ApplyOne(t, f, 1, pt.Entry(t, "c1", upsert("a")))
	if !closed(nsWatch) {
		t.Fatal("namespaces watcher not woken by a namespace change")
	}
	if closed(srvWatch) {
		t.Fatal("servers watcher woken by a namespace change")
	}
	if !closed(appliedCh) {
		t.Fatal("applied watcher not woken")
	}
	// A woken table gets a fresh channel for the next change.
	next := n.Table(namespaces.Table)
	if closed(next) {
		t.Fatal("the next namespaces channel is already closed")
	}
	idx, appliedCh = n.Applied()
	if idx != 1 || closed(appliedCh) {
		t.Fatalf("notifier at %d, channel closed %v", idx, closed(appliedCh))
	}

	pt.ApplyOne(t, f, 2, pt.Entry(t, "c2", register("s1")))
	if !closed(srvWatch) || closed(next) {
		t.Fatalf("after a server change: servers woken %v, namespaces woken %v", closed(srvWatch), closed(next))
	}
}

func TestNotifierUnit(t *testing.T) {
	n := projections.NewNotifier()
	idx, ch := n.Applied()
	if idx != 0 || closed(ch) {
		t.Fatalf("new notifier at %d, closed %v", idx, closed(ch))
	}
	if closed(n.Table("x")) {
		t.Fatal("a table channel of a new notifier is closed")
	}
}

// TestBlockingReader waits the way a blocking query does: a reader blocked
// on a table's channel sees the change once it is woken.
func TestBlockingReader(t *testing.T) {
	store := pt.OpenStore(t)
	f := pt.NewFSM(t, store)
	pt.ApplyOne(t, f, 1, pt.Entry(t, "c1", upsert("a")))

	type seen struct {
		index uint64
		names int
	}
	ready := make(chan struct{})
	got := make(chan seen, 1)
	minIndex := pt.TableIndex(t, store, namespaces.Table)
	go func() {
		v := projections.NewView(store)
		signal := ready
		for {
			ch := f.Notifier().Table(namespaces.Table)
			idx, err := v.TableIndex(namespaces.Table)
			if err != nil {
				t.Error(err)
				close(got)
				return
			}
			if idx > minIndex {
				list, err := namespaces.List(v, "")
				if err != nil {
					t.Error(err)
				}
				got <- seen{idx, len(list)}
				return
			}
			if signal != nil {
				close(signal) // blocked on ch from here on
				signal = nil
			}
			<-ch
		}
	}()
	<-ready
	// A change to another table must not satisfy the reader.
	pt.ApplyOne(t, f, 2, pt.Entry(t, "c2", register("s1")))
	pt.ApplyOne(t, f, 3, pt.Entry(t, "c3", upsert("b")))
	select {
	case s, ok := <-got:
		if !ok {
			t.Fatal("reader failed")
		}
		if s.index != 3 || s.names != 2 {
			t.Fatalf("reader saw index %d with %d namespaces, want 3 and 2", s.index, s.names)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("blocked reader not woken within 10s")
	}
}
