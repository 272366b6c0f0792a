package rebuild

import (
	"errors"
	"fmt"
	"testing"

	"github.com/ordoplane/ordo/projections/internal/layout"
	"github.com/ordoplane/ordo/storage/kv"
)

// TestRowArena: a key reads back its last row put, a deletion as known and
// absent; a key never put, or put past a reset, is not known.
func TestRowArena(t *testing.T) {
	a := newRowArena(&memBudget{limit: rowArenaBudget})
	a.put([]byte("t/a\x00k1"), []byte("v1"))
	a.put([]byte("t/a\x00k2"), []byte("v2"))
	a.put([]byte("t/a\x00k1"), []byte("v1b"))
	a.put([]byte("t/a\x00k3"), nil)
	a.put([]byte("t/a\x00k4"), []byte{})
	for k, want := range map[string]string{"k1": "v1b", "k2": "v2", "k4": ""} {
		v, ok := a.get([]byte("t/a\x00" + k))
		if !ok || v == nil || string(v) != want {
			t.Errorf("%s = %q, %v; want %q", k, v, ok, want)
		}
	}
	if v, ok := a.get([]byte("t/a\x00k3")); !ok || v != nil {
		t.Errorf("a deleted row = %q, %v; want known and absent", v, ok)
	}
	if _, ok := a.get([]byte("t/a\x00k5")); ok {
		t.Error("a key never put is known")
	}
	a.reset()
	if _, ok := a.get([]byte("t/a\x00k1")); ok || a.held != 0 || a.budget.used.Load() != 0 {
		t.Errorf("after a reset: known %v, holding %d, budget %d", ok, a.held, a.budget.used.Load())
	}
}

// TestRowArenaBudget: an arena that takes the rebuild's arenas past their
// budget forgets its rows and goes on; rows past a chunk are not kept.
func TestRowArenaBudget(t *testing.T) {
	budget := &memBudget{limit: 2 * rowArenaChunk}
	a, b := newRowArena(budget), newRowArena(budget)
	b.put([]byte("t/b\x00k"), []byte("b"))
	a.put([]byte("t/a\x00first"), []byte("a"))
	big := make([]byte, rowArenaChunk/2)
	for i := range 4 { // past a's share: a resets, b keeps its row
		a.put([]byte(fmt.Sprint("t/a\x00big", i)), big)
	}
	if _, ok := a.get([]byte("t/a\x00first")); ok {
		t.Error("an arena past the budget kept its first row")
	}
	if _, ok := a.get([]byte("t/a\x00big3")); !ok {
		t.Error("the row put after the reset is not kept")
	}
	if v, ok := b.get([]byte("t/b\x00k")); !ok || string(v) != "b" {
		t.Errorf("the other arena's row = %q, %v", v, ok)
	}
	if used := budget.used.Load(); used > budget.limit+rowArenaChunk || used != a.held+b.held {
		t.Errorf("budget %d, arenas hold %d and %d", used, a.held, b.held)
	}
	a.put([]byte("t/a\x00big3"), make([]byte, rowArenaChunk))
	if _, ok := a.get([]byte("t/a\x00big3")); ok {
		t.Error("a row larger than a chunk is answered from the arena (its older row)")
	}
}

// TestArenaAnswersAgedRows: a row committed and aged out of a writer's
// cache is read back from its arena, not the store (changed behind the
// writer's back here, to tell them apart); a deletion too.
func TestArenaAnswersAgedRows(t *testing.T) {
	store, w := agingWriter(t)
	w.arena, w.arenaTables = newRowArena(&memBudget{limit: rowArenaBudget}), map[string]bool{"tb": true}
	if _, err := w.Get(layout.RowKey("tb", "gone")); !errors.Is(err, kv.ErrNotFound) { // the table is read first
		t.Fatal(err)
	}
	for _, k := range []string{"k", "gone"} {
		if err := w.Set(layout.RowKey("tb", k), []byte("written")); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.commit(); err != nil {
		t.Fatal(err)
	}
	if err := w.Delete(layout.RowKey("tb", "gone")); err != nil {
		t.Fatal(err)
	}
	for i := range 3 { // commits of other rows age the cache
		if err := w.commit(); err != nil {
			t.Fatal(err)
		}
		if err := w.Set(layout.RowKey("tb", fmt.Sprint("other", i)), []byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	behind := store.WriteBatch()
	for _, k := range []string{"k", "gone"} {
		if err := behind.Set(layout.RowKey("tb", k), []byte("behind")); err != nil {
			t.Fatal(err)
		}
	}
	if err := behind.Commit(false); err != nil {
		t.Fatal(err)
	}
	if v, err := w.Get(layout.RowKey("tb", "k")); err != nil || string(v) != "written" {
		t.Errorf("an aged row read %q, %v; want its arena's", v, err)
	}
	if v, err := w.Get(layout.RowKey("tb", "gone")); !errors.Is(err, kv.ErrNotFound) {
		t.Errorf("an aged deletion read %q, %v; want not found", v, err)
	}
}

// TestArenaTakesTablesReadFromStore: a writer keeps a table's rows in its
// arena once it has read arenaAfterReads of them from the store, the rows
// it commits from then on, not those of a table it has not.
func TestArenaTakesTablesReadFromStore(t *testing.T) {
	_, w := agingWriter(t)
	w.arena = newRowArena(&memBudget{limit: rowArenaBudget})
	age := func() {
		t.Helper()
		for i := range 3 {
			if err := w.commit(); err != nil {
				t.Fatal(err)
			}
			if err := w.Set(layout.RowKey("other", fmt.Sprint(i)), []byte("x")); err != nil {
				t.Fatal(err)
			}
		}
	}
	for i := range arenaAfterReads {
		if err := w.Set(layout.RowKey("tb", fmt.Sprint(i)), []byte("v")); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Set(layout.RowKey("cold", "k"), []byte("v")); err != nil {
		t.Fatal(err)
	}
	age()
	if _, ok := w.arena.get(layout.RowKey("tb", "0")); ok {
		t.Fatal("a table nothing read back is in the arena")
	}
	for i := range arenaAfterReads {
		if _, err := w.Get(layout.RowKey("tb", fmt.Sprint(i))); err != nil {
			t.Fatal(err)
		}
	}
	if !w.arenaTables["tb"] || w.arenaTables["cold"] {
		t.Fatalf("arena tables %v after %d reads of tb from the store", w.arenaTables, arenaAfterReads)
	}
	if err := w.Set(layout.RowKey("tb", "new"), []byte("v")); err != nil {
		t.Fatal(err)
	}
	if err := w.Set(layout.RowKey("cold", "new"), []byte("v")); err != nil {
		t.Fatal(err)
	}
	age()
	if _, ok := w.arena.get(layout.RowKey("tb", "new")); !ok {
		t.Error("a row of a table read from the store, committed since, is not in the arena")
	}
	if _, ok := w.arena.get(layout.RowKey("cold", "new")); ok {
		t.Error("a row of a table not read from the store is in the arena")
	}
}

// TestArenaReadOutlivesReset: a row a writer read from its arena stays
// intact in the writer's cache after the arena resets and returns its
// memory (unmapped, it would fault the test; reused, it would read
// another row's bytes).
func TestArenaReadOutlivesReset(t *testing.T) {
	_, w := agingWriter(t)
	w.arena, w.arenaTables = newRowArena(&memBudget{limit: rowArenaBudget}), map[string]bool{"tb": true}
	if _, err := w.Get(layout.RowKey("tb", "k")); !errors.Is(err, kv.ErrNotFound) { // the table is read first
		t.Fatal(err)
	}
	if err := w.Set(layout.RowKey("tb", "k"), []byte("written")); err != nil {
		t.Fatal(err)
	}
	for i := range 3 { // commits of other rows age k out of the cache
		if err := w.commit(); err != nil {
			t.Fatal(err)
		}
		if err := w.Set(layout.RowKey("tb", fmt.Sprint("other", i)), []byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	v, err := w.Get(layout.RowKey("tb", "k"))
	if err != nil || string(v) != "written" {
		t.Fatalf("an aged row read %q, %v; want its arena's", v, err)
	}
	w.arena.reset()
	w.arena.put(layout.RowKey("tb", "overwrite"), []byte("XXXXXXXXXXXXXXXXXXXXXXXX"))
	if string(v) != "written" {
		t.Errorf("the row read before the reset now reads %q", v)
	}
	if again, err := w.Get(layout.RowKey("tb", "k")); err != nil || string(again) != "written" {
		t.Errorf("the cached row after the reset: %q, %v", again, err)
	}
}

// TestArenaSkipsTablesRarelyReadBack: a table whose rows the writer reads
// back from the store arenaAfterReads times, but once for many more than
// arenaReadShare rows it committed (an allocation read at a batch's edge),
// stays out of the arena; one read about as often as written joins it.
func TestArenaSkipsTablesRarelyReadBack(t *testing.T) {
	_, w := agingWriter(t)
	w.arena = newRowArena(&memBudget{limit: rowArenaBudget})
	rows := arenaAfterReads * arenaReadShare * 4
	for i := range rows {
		if err := w.Set(layout.RowKey("rare", fmt.Sprint(i)), []byte("v")); err != nil {
			t.Fatal(err)
		}
		if i < arenaAfterReads {
			if err := w.Set(layout.RowKey("often", fmt.Sprint(i)), []byte("v")); err != nil {
				t.Fatal(err)
			}
		}
	}
	for i := range 3 { // commits of other rows age the cache
		if err := w.commit(); err != nil {
			t.Fatal(err)
		}
		if err := w.Set(layout.RowKey("other", fmt.Sprint(i)), []byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	for i := range arenaAfterReads {
		for _, tb := range []string{"rare", "often"} {
			if _, err := w.Get(layout.RowKey(tb, fmt.Sprint(i))); err != nil {
				t.Fatal(err)
			}
		}
	}
	if w.tableRows["rare"] != rows {
		t.Fatalf("rows counted of the rare table: %d, want %d", w.tableRows["rare"], rows)
	}
	if w.arenaTables["rare"] || !w.arenaTables["often"] {
		t.Errorf("arena tables %v after %d reads each of %d and %d rows", w.arenaTables, arenaAfterReads, rows, arenaAfterReads)
	}
}
