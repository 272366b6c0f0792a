package rebuild

import (
	"errors"
	"fmt"
	"testing"

	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/internal/layout"
	"github.com/ordoplane/ordo/storage/kv"
)

// TestTxKeepsCreateIndex: Put keeps a row's create index whether or not
// the Tx read the row just before, and a row deleted in between is
// created anew.
func TestTxKeepsCreateIndex(t *testing.T) {
	_, w := freshStore(t, 1<<20)
	rowAt := func(key string) projections.Row {
		t.Helper()
		r, err := projections.NewView(w).Get("t", key)
		if err != nil {
			t.Fatalf("get %s: %v", key, err)
		}
		return r
	}
	tx := projections.NewTx(w, 3, 0)
	for _, k := range []string{"a", "b", "c", "d"} {
		if err := tx.Put("t", k, []byte(k)); err != nil {
			t.Fatal(err)
		}
	}
	tx.Reset(7, 0)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	get := func(key string) {
		t.Helper()
		_, err := tx.Get("t", key)
		must(err)
	}
	get("a") // read then written: kept
	must(tx.Put("t", "a", []byte("a2")))
	get("a") // written without a read, after another row was read: kept
	must(tx.Put("t", "b", []byte("b2")))
	get("c") // read, deleted without a read, written: created anew
	must(tx.DeleteKnown("t", "c"))
	must(tx.Put("t", "c", []byte("c2")))
	get("d") // read, replaced by an index row (created by this entry), written
	must(tx.PutIndex("t", "d"))
	must(tx.Put("t", "d", []byte("d2")))
	want := map[string][2]uint64{"a": {3, 7}, "b": {3, 7}, "c": {7, 7}, "d": {7, 7}}
	for k, ix := range want {
		if r := rowAt(k); r.CreateIndex != ix[0] || r.ModifyIndex != ix[1] {
			t.Errorf("row %s: create %d, modify %d; want %d, %d", k, r.CreateIndex, r.ModifyIndex, ix[0], ix[1])
		}
	}
	tx.Reset(9, 0)
	if ok, err := tx.Delete("t", "a"); !ok || err != nil {
		t.Fatalf("delete a: %v, %v", ok, err)
	}
	if ok, err := tx.Delete("t", "a"); ok || err != nil {
		t.Fatalf("delete a again: %v, %v; want false", ok, err)
	}
	if err := tx.Put("t", "a", []byte("a3")); err != nil {
		t.Fatal(err)
	}
	if r := rowAt("a"); r.CreateIndex != 9 {
		t.Errorf("row a deleted and written at 9: create %d", r.CreateIndex)
	}
}

// TestFreshWriterPending: a key rewritten before a flush reaches the
// store once with its last value, a delete wins over an earlier write,
// and a read does not drop a write waiting for the flush.
func TestFreshWriterPending(t *testing.T) {
	store, w := agingWriter(t)
	set := func(k, v string) {
		t.Helper()
		if err := w.Set([]byte(k), []byte(v)); err != nil {
			t.Fatal(err)
		}
	}
	set("k1", "v1")
	set("k2", "v2")
	set("k1", "v1b")
	set("k3", "v3")
	if err := w.Delete([]byte("k2")); err != nil {
		t.Fatal(err)
	}
	if v, err := w.Get([]byte("k3")); err != nil || string(v) != "v3" {
		t.Fatalf("k3 before the flush: %q, %v", v, err)
	}
	if err := w.commit(); err != nil {
		t.Fatal(err)
	}
	stored := func(k string) string {
		t.Helper()
		v, err := store.Get([]byte(k))
		if errors.Is(err, kv.ErrNotFound) {
			return "<absent>"
		}
		if err != nil {
			t.Fatal(err)
		}
		return string(v)
	}
	for k, want := range map[string]string{"k1": "v1b", "k2": "<absent>", "k3": "v3"} {
		if got := stored(k); got != want {
			t.Errorf("stored %s = %s, want %s", k, got, want)
		}
	}
	// From the previous generation, read then rewritten.
	if v, err := w.Get([]byte("k1")); err != nil || string(v) != "v1b" {
		t.Fatalf("k1 after the commit: %q, %v", v, err)
	}
	set("k1", "v1c")
	if _, err := w.Get([]byte("k2")); !errors.Is(err, kv.ErrNotFound) {
		t.Fatalf("k2 deleted: %v", err)
	}
	if err := w.commit(); err != nil {
		t.Fatal(err)
	}
	if got := stored("k1"); got != "v1c" {
		t.Errorf("stored k1 = %s, want v1c", got)
	}
}

// TestFreshWriterReusedGeneration: the map of a dropped generation,
// reused as the next current one, holds none of the rows it held: a key
// rewritten since reads its last value, not the one that generation kept.
func TestFreshWriterReusedGeneration(t *testing.T) {
	_, w := agingWriter(t)
	for _, v := range []string{"v1", "v2", "v3"} {
		if err := w.Set([]byte("k"), []byte(v)); err != nil {
			t.Fatal(err)
		}
		if err := w.commit(); err != nil {
			t.Fatal(err)
		}
		if got, err := w.Get([]byte("k")); err != nil || string(got) != v {
			t.Fatalf("k after writing %s: %q, %v", v, got, err)
		}
	}
}

// TestFreshWriterUnhashedTable: a fresh writer hashes the keys of a table
// only from a read that comes before any write; the keys of a table first
// written are found in the store once the cache has dropped them.
func TestFreshWriterUnhashedTable(t *testing.T) {
	_, w := agingWriter(t)
	read, written := layout.RowKey("read", "a"), layout.RowKey("written", "a")
	if _, err := w.Get(read); !errors.Is(err, kv.ErrNotFound) {
		t.Fatalf("get from an empty store: %v", err)
	}
	for _, k := range [][]byte{read, written, layout.RowKey("written", "b")} {
		if err := w.Set(k, []byte("v")); err != nil {
			t.Fatal(err)
		}
	}
	for range 2 { // the rows leave both generations of the cache
		if err := w.commit(); err != nil {
			t.Fatal(err)
		}
	}
	for _, k := range [][]byte{read, written, layout.RowKey("written", "b")} {
		if v, err := w.Get(k); err != nil || string(v) != "v" {
			t.Errorf("get %q: %q, %v", k, v, err)
		}
	}
	if _, err := w.Get(layout.RowKey("read", "b")); !errors.Is(err, kv.ErrNotFound) {
		t.Errorf("a key never written: %v", err)
	}
}

// TestFreshWriterWriteOnlyTable: the rows of a table nothing read yet,
// written past the cache, keep their order of writing per key (the last
// write wins, a delete included) in the store, and a first read of the
// table, before any commit, sees them; writes after it go through the
// cache.
func TestFreshWriterWriteOnlyTable(t *testing.T) {
	store, w := freshStore(t, 1<<20)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	for j := 99; j >= 0; j-- { // descending, each twice: a sort may reverse the run
		k := layout.RowKey("idx", fmt.Sprintf("x%02d", j))
		must(w.Set(k, []byte("first")))
		must(w.Set(k, []byte("second")))
	}
	must(w.commit())
	a, b, c := layout.RowKey("idx", "a"), layout.RowKey("idx", "b"), layout.RowKey("idx", "c")
	for i := range 40 { // many writes of each key, so a sort could swap them
		must(w.Set(a, []byte(fmt.Sprint("a", i))))
		must(w.Set(b, []byte(fmt.Sprint("b", i))))
		must(w.Set(c, []byte("c")))
	}
	must(w.Delete(c))
	must(w.commit())
	for k, want := range map[string]string{"a": "a39", "b": "b39", "x00": "second", "x50": "second", "x99": "second"} {
		if v, err := store.Get(layout.RowKey("idx", k)); err != nil || string(v) != want {
			t.Errorf("stored %s: %q, %v; want %q", k, v, err, want)
		}
	}
	if _, err := store.Get(c); !errors.Is(err, kv.ErrNotFound) {
		t.Errorf("a key deleted after its writes is stored: %v", err)
	}
	must(w.Set(a, []byte("a40")))
	must(w.Set(c, []byte("c2")))
	if v, err := w.Get(a); err != nil || string(v) != "a40" { // the first read, nothing committed
		t.Errorf("first read of a: %q, %v", v, err)
	}
	must(w.Set(b, []byte("b40")))
	if v, err := w.Get(b); err != nil || string(v) != "b40" {
		t.Errorf("read of b after the first read: %q, %v", v, err)
	}
	if len(w.pending) != 1 || w.cur[string(b)].v == nil {
		t.Errorf("a write after the first read is not cached: %d pending, %+v", len(w.pending), w.cur[string(b)])
	}
	if v, err := w.Get(c); err != nil || string(v) != "c2" {
		t.Errorf("read of c: %q, %v", v, err)
	}
}

// freshStore returns a writer into an empty store keeping limit bytes of
// rows per generation; both close when the test ends.
func freshStore(t *testing.T, limit int) (*kv.Store, *freshWriter) {
	t.Helper()
	store, err := kv.Open(t.TempDir(), kv.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	w := newFreshWriter(store, true, limit)
	t.Cleanup(func() {
		w.close()
		store.Close()
	})
	return store, w
}

// agingWriter is freshStore with a writer whose cache ages at every
// commit.
func agingWriter(t *testing.T) (*kv.Store, *freshWriter) {
	t.Helper()
	return freshStore(t, 1)
}

// TestGetAfterValueMiss: the Get that follows a value found uncached
// (projections.GetValue's) reads the row without looking for it again, and finds a
// row written in between.
func TestGetAfterValueMiss(t *testing.T) {
	store, w := freshStore(t, 1<<20)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	k := layout.RowKey("tb", "a")
	b := store.WriteBatch()
	must(b.Set(k, layout.EncodeRow(3, 4, []byte("stored"))))
	must(b.Commit(false))
	w.complete = false // the store holds rows the writer did not write
	if _, _, _, st := w.Value(k); st != layout.ValueUnknown || !w.missedOK {
		t.Fatalf("an uncached row: state %v, missed %v", st, w.missedOK)
	}
	if v, err := w.Get(k); err != nil || modifyOf(v) != 4 || string(v[layout.RowHeader:]) != "stored" {
		t.Fatalf("read after the miss: %q, %v", v, err)
	}
	if w.missedOK {
		t.Error("the miss outlived the Get it was for")
	}
	k2 := layout.RowKey("tb", "b")
	w.Value(k2)
	must(w.Set(k2, layout.EncodeRow(0, 0, []byte("written"))))
	if v, err := w.Get(k2); err != nil || string(v[layout.RowHeader:]) != "written" {
		t.Fatalf("a row written after its miss: %q, %v", v, err)
	}
}

// modifyOf returns the modify index of the row value b.
func modifyOf(b []byte) uint64 {
	_, m := layout.RowHead(b)
	return m
}
