package rebuild

import (
	"bytes"
	"errors"
	"slices"
	"testing"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/internal/layout"
	"github.com/ordoplane/ordo/storage/kv"
)

// testValue is a row value with fields msgpack leaves out when empty.
type testValue struct {
	Name  string            `msgpack:"n"`
	Count int               `msgpack:"c,omitempty"`
	Tags  map[string]string `msgpack:"t,omitempty"`
}

// testOther decodes the same rows into another type.
type testOther struct {
	Name string `msgpack:"n"`
}

var (
	testCodec  = projections.Codec[testValue]{Name: "test"}
	otherCodec = projections.Codec[testOther]{Name: "other"}
)

// TestValuesAsBytes: rows written and read as values through a replay's
// writer are the rows Put writes, in the store and to a byte reader, with
// their create and modify indexes, across commits and cache generations,
// and through a writer that keeps no values.
func TestValuesAsBytes(t *testing.T) {
	for _, tc := range []struct {
		name string
		w    func(t *testing.T) (*kv.Store, kv.Writer, func() error)
	}{
		{"fresh writer", func(t *testing.T) (*kv.Store, kv.Writer, func() error) {
			store, w := freshStore(t, 1<<20)
			return store, w, w.commit
		}},
		{"aging fresh writer", func(t *testing.T) (*kv.Store, kv.Writer, func() error) {
			store, w := agingWriter(t)
			return store, w, w.commit
		}},
		{"guarded fresh writer", func(t *testing.T) (*kv.Store, kv.Writer, func() error) {
			store, w := agingWriter(t)
			return store, &shadowWriter{w: w, owned: map[string]bool{"v": true}}, w.commit
		}},
		{"batch", func(t *testing.T) (*kv.Store, kv.Writer, func() error) {
			store, err := kv.Open(t.TempDir(), kv.DefaultConfig())
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { store.Close() })
			b := store.Batch()
			t.Cleanup(func() { b.Close() })
			return store, b, func() error { return nil }
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store, w, commit := tc.w(t)
			must := func(err error) {
				t.Helper()
				if err != nil {
					t.Fatal(err)
				}
			}
			// want holds what Put of the encoded values writes.
			wantStore, err := kv.Open(t.TempDir(), kv.DefaultConfig())
			must(err)
			defer wantStore.Close()
			want := wantStore.Batch()
			defer want.Close()
			step := func(index uint64, fn func(tx *projections.Tx, put func(key string, v *testValue))) {
				t.Helper()
				tx, wtx := projections.NewTx(w, index, 0), projections.NewTx(want, index, 0)
				fn(tx, func(key string, v *testValue) {
					t.Helper()
					b, err := events.Marshal(v)
					must(err)
					must(wtx.Put("v", key, b))
					must(projections.PutValue(tx, &testCodec, "v", key, v))
				})
				must(commit())
			}
			check := func(keys ...string) {
				t.Helper()
				for _, k := range keys {
					got, gerr := w.Get(layout.RowKey("v", k)) // as bytes
					exp, eerr := want.Get(layout.RowKey("v", k))
					if !bytes.Equal(got, exp) || !errors.Is(gerr, eerr) && (gerr != nil || eerr != nil) {
						t.Errorf("%s: %x, %v; want %x, %v", k, got, gerr, exp, eerr)
					}
				}
			}
			step(3, func(tx *projections.Tx, put func(string, *testValue)) {
				put("a", &testValue{Name: "a", Tags: map[string]string{}})
				put("b", &testValue{Name: "b", Count: 1})
			})
			step(5, func(tx *projections.Tx, put func(string, *testValue)) {
				a, r, err := projections.GetValue(tx, &testCodec, "v", "a")
				must(err)
				if a.Name != "a" || r.CreateIndex != 3 || r.ModifyIndex != 3 {
					t.Errorf("a: %+v %+v", a, r)
				}
				cp := *a
				cp.Count = 7
				put("a", &cp) // keeps the create index
				if _, err := tx.Delete("v", "b"); err != nil {
					t.Fatal(err)
				}
				if _, err := projections.NewTx(want, 5, 0).Delete("v", "b"); err != nil {
					t.Fatal(err)
				}
				if b, _, err := projections.LookupValue(tx, &testCodec, "v", "b"); err != nil || b != nil {
					t.Errorf("a deleted row reads %+v, %v", b, err)
				}
			})
			check("a", "b")
			step(8, func(tx *projections.Tx, put func(string, *testValue)) {
				o, _, err := projections.GetValue(tx, &otherCodec, "v", "a") // another type at the same key
				must(err)
				if o.Name != "a" {
					t.Errorf("other: %+v", o)
				}
				a, r, err := projections.GetValue(tx, &testCodec, "v", "a")
				must(err)
				if a.Count != 7 || r.CreateIndex != 3 || r.ModifyIndex != 5 {
					t.Errorf("a at 8: %+v %+v", a, r)
				}
				put("b", &testValue{Name: "b2"}) // created anew
				put("c", &testValue{Name: "c"})
				c, r, err := projections.GetValue(tx, &testCodec, "v", "c")
				must(err)
				if c.Name != "c" || r.CreateIndex != 8 {
					t.Errorf("c: %+v %+v", c, r)
				}
			})
			check("a", "b", "c")
			if fw, ok := w.(*freshWriter); ok {
				must(fw.commit())
			}
			must(want.Commit())
			if b, ok := w.(*kv.Batch); ok {
				must(b.Commit())
			}
			for _, k := range []string{"a", "b", "c"} {
				got, gerr := store.Get(layout.RowKey("v", k))
				exp, eerr := wantStore.Get(layout.RowKey("v", k))
				if !bytes.Equal(got, exp) || (gerr == nil) != (eerr == nil) {
					t.Errorf("stored %s: %x, %v; want %x, %v", k, got, gerr, exp, eerr)
				}
			}
		})
	}
}

// TestValueKeptAcrossEntries: a replay's writer hands back the value it
// was given or decoded, without decoding the row again, until the row is
// written as bytes.
func TestValueKeptAcrossEntries(t *testing.T) {
	_, w := freshStore(t, 1<<20)
	tx := projections.NewTx(w, 2, 0)
	v := &testValue{Name: "x"}
	if err := projections.PutValue(tx, &testCodec, "v", "x", v); err != nil {
		t.Fatal(err)
	}
	if err := w.commit(); err != nil {
		t.Fatal(err)
	}
	tx.Reset(3, 0)
	if got, _, err := projections.GetValue(tx, &testCodec, "v", "x"); err != nil || got != v {
		t.Errorf("got %p, %v; want the value put, %p", got, err, v)
	}
	b, _ := events.Marshal(&testValue{Name: "y"})
	if err := tx.Put("v", "x", b); err != nil {
		t.Fatal(err)
	}
	got, _, err := projections.GetValue(tx, &testCodec, "v", "x")
	if err != nil || got == v || got.Name != "y" {
		t.Errorf("after a Put of bytes: %+v, %v", got, err)
	}
	if again, _, _ := projections.GetValue(tx, &testCodec, "v", "x"); again != got {
		t.Errorf("the decoded value is not kept")
	}
}

// TestPutValueChanged: a value equal to the row's is not written and the
// table does not change (N15); a different one is, through a replay's
// writer and a batch alike.
func TestPutValueChanged(t *testing.T) {
	same := func(a, b *testValue) bool {
		return a.Name == b.Name && a.Count == b.Count && len(a.Tags) == len(b.Tags)
	}
	for _, fresh := range []bool{true, false} {
		var w kv.Writer
		if fresh {
			_, w = freshStore(t, 1<<20)
		} else {
			store, err := kv.Open(t.TempDir(), kv.DefaultConfig())
			if err != nil {
				t.Fatal(err)
			}
			defer store.Close()
			b := store.Batch()
			defer b.Close()
			w = b
		}
		must := func(err error) {
			t.Helper()
			if err != nil {
				t.Fatal(err)
			}
		}
		row := func() projections.Row {
			t.Helper()
			r, err := projections.NewView(w).Get("v", "k")
			must(err)
			return r
		}
		tx := projections.NewTx(w, 2, 0)
		must(projections.PutValueChanged(tx, &testCodec, "v", "k", &testValue{Name: "a"}, same))
		if got := changed(tx); len(got) != 1 {
			t.Fatalf("fresh %v: a new row changed %v", fresh, got)
		}
		tx.Reset(3, 0)
		must(projections.PutValueChanged(tx, &testCodec, "v", "k", &testValue{Name: "a", Tags: map[string]string{}}, same))
		if got, r := changed(tx), row(); len(got) != 0 || r.ModifyIndex != 2 {
			t.Errorf("fresh %v: an equal value: changed %v, row %+v", fresh, got, r)
		}
		must(projections.PutValueChanged(tx, &testCodec, "v", "k", &testValue{Name: "a", Count: 1}, same))
		if got := changed(tx); len(got) != 1 {
			t.Errorf("fresh %v: a changed value changed %v", fresh, got)
		}
		if r, err := tx.Get("v", "k"); err != nil || r.CreateIndex != 2 || r.ModifyIndex != 3 {
			t.Errorf("fresh %v: row %+v, %v", fresh, r, err)
		}
	}
}

// changed returns the tables tx has changed.
func changed(tx *projections.Tx) []string { return slices.Collect(tx.Changed()) }
