package rebuild

import (
	"errors"
	"fmt"
	"math"
	"runtime/debug"
	"testing"

	"github.com/ordoplane/ordo/projections/internal/layout"
	"github.com/ordoplane/ordo/storage/kv"
)

// mergedRows returns what a merge of logs yields in [lower, upper), as
// key=value strings ("key=-" for a deletion).
func mergedRows(logs []*rowLog, lower, upper string) []string {
	var out []string
	m := mergeRows(logs, []byte(lower), []byte(upper))
	for m.next() {
		v := "-"
		if m.value != nil {
			v = string(m.value)
		}
		out = append(out, string(m.key)+"="+v)
	}
	return out
}

// TestRowLogKeepsNewestWrite: across runs and within one, the merge yields
// each key once, in order, with its last write (a deletion included), and
// only the keys of the range asked for.
func TestRowLogKeepsNewestWrite(t *testing.T) {
	l := newRowLog(&memBudget{limit: rowLogBudget})
	l.add([]byte("t/a\x00k2"), []byte("v1"))
	l.add([]byte("t/a\x00k1"), []byte("v1"))
	l.add([]byte("t/a\x00k2"), []byte("v2")) // newer, same run
	l.add([]byte("t/b\x00k1"), []byte("b1"))
	l.cut()
	l.add([]byte("t/a\x00k1"), nil) // deleted in a later run
	l.add([]byte("t/a\x00k3"), []byte("v3"))
	l.cut()
	l.add([]byte("t/a\x00k3"), []byte("v4"))
	l.cut()
	if len(l.runs) != 3 {
		t.Fatalf("%d runs, want 3", len(l.runs))
	}
	got := fmt.Sprint(mergedRows([]*rowLog{l}, "t/a\x00", "t/a\x01"))
	want := fmt.Sprint([]string{"t/a\x00k1=-", "t/a\x00k2=v2", "t/a\x00k3=v4"})
	if got != want {
		t.Errorf("merge of t/a = %q, want %q", got, want)
	}
	if got := mergedRows([]*rowLog{l}, "t/b\x00", "t/b\x01"); len(got) != 1 || got[0] != "t/b\x00k1=b1" {
		t.Errorf("merge of t/b = %q", got)
	}
	if got := mergedRows([]*rowLog{l}, "t/c\x00", "t/c\x01"); len(got) != 0 {
		t.Errorf("merge of an empty range = %q", got)
	}
	if l.tables["a"] == 0 || l.tables["b"] == 0 || l.tables["c"] != 0 {
		t.Errorf("bytes per table %v", l.tables)
	}
}

// TestRowLogBudget: a cut reports the logs sharing a budget over it, and
// what a log releases leaves the budget.
func TestRowLogBudget(t *testing.T) {
	budget := &memBudget{limit: 100}
	a, b := newRowLog(budget), newRowLog(budget)
	a.add([]byte("t/a\x00k"), make([]byte, 40))
	if a.cut() {
		t.Fatal("under the budget, reported over it")
	}
	b.add([]byte("t/b\x00k"), make([]byte, 60))
	if !b.cut() {
		t.Fatalf("logs holding %d bytes of a budget of 100 not reported over it", budget.used.Load())
	}
	b.release()
	if budget.used.Load() != a.held || a.held == 0 {
		t.Errorf("budget holds %d, a log %d", budget.used.Load(), a.held)
	}
}

// TestRowLogMemoryOutsideHeap: a log's runs are held in its slab, not
// Go's heap, and released with it.
func TestRowLogMemoryOutsideHeap(t *testing.T) {
	l := newRowLog(&memBudget{limit: rowLogBudget})
	for i := range 4096 {
		l.add(fmt.Appendf(nil, "t/a\x00k%06d", i), make([]byte, 1000))
	}
	l.cut()
	if l.mem.Held() < l.held || l.held < 4096*1000 {
		t.Fatalf("the log holds %d bytes, its slab %d", l.held, l.mem.Held())
	}
	if v := l.runs[0].value(4095); len(v) != 1000 {
		t.Fatalf("the last row's value is %d bytes", len(v))
	}
	l.release()
	if l.mem.Held() != 0 || l.budget.used.Load() != 0 {
		t.Errorf("after release: slab %d, budget %d", l.mem.Held(), l.budget.used.Load())
	}
}

// loggingWriter is freshStore with a row log.
func loggingWriter(t *testing.T) (*kv.Store, *freshWriter) {
	t.Helper()
	store, w := freshStore(t, 1<<20)
	w.log = newRowLog(&memBudget{limit: rowLogBudget})
	return store, w
}

// TestLoggedRowsStayOutOfTheStore: rows of a table nothing read go to the
// log, not the store, commit after commit; a table read first does not.
func TestLoggedRowsStayOutOfTheStore(t *testing.T) {
	store, w := loggingWriter(t)
	if _, err := w.Get(layout.RowKey("read", "x")); !errors.Is(err, kv.ErrNotFound) {
		t.Fatal(err)
	}
	for i := range 3 {
		if err := w.Set(layout.RowKey("idx", fmt.Sprint(i)), []byte("v")); err != nil {
			t.Fatal(err)
		}
		if err := w.Set(layout.RowKey("read", fmt.Sprint(i)), []byte("r")); err != nil {
			t.Fatal(err)
		}
		if err := w.commit(); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := store.Get(layout.RowKey("idx", "0")); !errors.Is(err, kv.ErrNotFound) {
		t.Errorf("a logged row reached the store: %v", err)
	}
	if _, err := store.Get(layout.RowKey("read", "0")); err != nil {
		t.Errorf("a row of a table read first: %v", err)
	}
	if len(w.log.runs) != 3 || len(mergedRows([]*rowLog{w.log}, "t/idx\x00", "t/idx\x01")) != 3 {
		t.Errorf("the log holds %d runs, rows %q", len(w.log.runs), mergedRows([]*rowLog{w.log}, "t/", "t0"))
	}
}

// TestLoggedTableReadSpills: the first read of a logged table, or a scan,
// writes what the log holds into the store first, so it reads what was
// written; the rows written after go through the cache.
func TestLoggedTableReadSpills(t *testing.T) {
	for _, read := range []string{"get", "scan"} {
		t.Run(read, func(t *testing.T) {
			store, w := loggingWriter(t)
			for i := range 3 {
				if err := w.Set(layout.RowKey("idx", fmt.Sprint(i)), []byte(fmt.Sprint("v", i))); err != nil {
					t.Fatal(err)
				}
				if i == 1 {
					if err := w.commit(); err != nil { // one run, then the stage
						t.Fatal(err)
					}
				}
			}
			if err := w.Delete(layout.RowKey("idx", "0")); err != nil {
				t.Fatal(err)
			}
			var got []string
			switch read {
			case "get":
				if _, err := w.Get(layout.RowKey("idx", "0")); !errors.Is(err, kv.ErrNotFound) {
					t.Errorf("read of a deleted logged row: %v", err)
				}
				for _, k := range []string{"1", "2"} {
					v, err := w.Get(layout.RowKey("idx", k))
					if err != nil {
						t.Fatalf("read of logged row %s: %v", k, err)
					}
					got = append(got, string(v))
				}
			case "scan":
				if err := w.Scan(layout.TablePrefix("idx"), kv.PrefixEnd(layout.TablePrefix("idx")), false, func(_, v []byte) error {
					got = append(got, string(v))
					return nil
				}); err != nil {
					t.Fatal(err)
				}
			}
			if fmt.Sprint(got) != "[v1 v2]" {
				t.Errorf("read %q, want [v1 v2]", got)
			}
			if !w.log.empty() || w.log.held != 0 || w.log.budget.used.Load() != 0 {
				t.Errorf("the log still holds rows after the spill: %d runs, %d staged", len(w.log.runs), len(w.log.stage))
			}
			if _, err := store.Get(layout.RowKey("idx", "2")); err != nil {
				t.Errorf("spilled row not in the store: %v", err)
			}
		})
	}
}

// TestCopyTableMergesLog: a table's file holds the store's rows and the
// log's, the log's over the store's at a key, and no row the log deleted.
func TestCopyTableMergesLog(t *testing.T) {
	store, w := loggingWriter(t)
	for _, k := range []string{"a", "c", "e"} {
		if err := w.Set(layout.RowKey("idx", k), []byte("old")); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Scan(layout.TablePrefix("idx"), kv.PrefixEnd(layout.TablePrefix("idx")), false, func(_, _ []byte) error { return nil }); err != nil {
		t.Fatal(err) // spills a, c, e into the store
	}
	for k, v := range map[string][]byte{"b": []byte("new"), "c": []byte("new"), "e": nil, "f": []byte("new")} {
		if v == nil {
			err := w.Delete(layout.RowKey("idx", k))
			if err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := w.Set(layout.RowKey("idx", k), v); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.commit(); err != nil {
		t.Fatal(err)
	}
	dst, err := kv.Open(t.TempDir(), kv.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	defer dst.Close()
	f, err := tableFile(store, dst, []string{"idx"}, false, []*rowLog{w.log})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := dst.Replace([]*kv.TableFile{f}, dst.WriteBatch()); err != nil {
		t.Fatal(err)
	}
	var got []string
	if err := dst.Scan(layout.TablePrefix("idx"), kv.PrefixEnd(layout.TablePrefix("idx")), false, func(k, v []byte) error {
		got = append(got, string(k[len(layout.TablePrefix("idx")):])+"="+string(v))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if want := "[a=old b=new c=new f=new]"; fmt.Sprint(got) != want {
		t.Errorf("table file rows %q, want %s", got, want)
	}
}

// TestFrozenLogSpillKeepsNewerWrites: once frozen (its rows in an online
// rebuild's table files), a log takes no more rows, and a read of its
// table writes its rows into the store except at the keys written since,
// which the store holds newer (a row or a deletion).
func TestFrozenLogSpillKeepsNewerWrites(t *testing.T) {
	store, w := loggingWriter(t)
	for _, k := range []string{"a", "b", "c"} {
		if err := w.Set(layout.RowKey("idx", k), []byte("logged")); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.commit(); err != nil {
		t.Fatal(err)
	}
	since := map[string]bool{}
	w.log.freeze(func(k []byte) bool { return since[string(k)] })
	since[string(layout.RowKey("idx", "b"))] = true
	if err := w.Set(layout.RowKey("idx", "b"), []byte("newer")); err != nil {
		t.Fatal(err)
	}
	since[string(layout.RowKey("idx", "c"))] = true
	if err := w.Delete(layout.RowKey("idx", "c")); err != nil {
		t.Fatal(err)
	}
	if err := w.commit(); err != nil {
		t.Fatal(err)
	}
	if len(w.log.runs) != 1 || len(w.log.stage) != 0 {
		t.Fatalf("a frozen log took rows: %d runs, %d staged", len(w.log.runs), len(w.log.stage))
	}
	if v, err := store.Get(layout.RowKey("idx", "b")); err != nil || string(v) != "newer" {
		t.Fatalf("a write after the freeze is not in the store: %q, %v", v, err)
	}
	want := map[string]string{"a": "logged", "b": "newer", "c": ""}
	for _, k := range []string{"a", "b", "c"} {
		v, err := w.Get(layout.RowKey("idx", k))
		if errors.Is(err, kv.ErrNotFound) {
			v, err = nil, nil
		}
		if err != nil || string(v) != want[k] {
			t.Errorf("read of %s after the spill: %q, %v; want %q", k, v, err, want[k])
		}
	}
}

// TestRebuildBudget: a rebuild's budgets are their default, or a share of
// the process's soft memory limit when that is less.
func TestRebuildBudget(t *testing.T) {
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1))
	debug.SetMemoryLimit(math.MaxInt64)
	if b := rebuildBudget(1<<30, 8); b.limit != 1<<30 {
		t.Errorf("no soft limit: budget %d, want 1 GiB", b.limit)
	}
	debug.SetMemoryLimit(2 << 30)
	if b := rebuildBudget(1<<30, 8); b.limit != 256<<20 {
		t.Errorf("a 2 GiB soft limit: budget %d, want 256 MiB", b.limit)
	}
	debug.SetMemoryLimit(64 << 30)
	if b := rebuildBudget(1<<30, 8); b.limit != 1<<30 {
		t.Errorf("a 64 GiB soft limit: budget %d, want 1 GiB", b.limit)
	}
}
