package rebuild

import (
	"fmt"
	"reflect"
	"slices"
	"testing"

	"github.com/ordoplane/ordo/projections"
)

// TestTableRuns: the tables are shared out in order, each once, into at
// most the runs asked for, the large tables apart.
func TestTableRuns(t *testing.T) {
	store, w := freshStore(t, 1<<20)
	big := make([]byte, 64<<10)
	for i := range big {
		big[i] = byte(i * 7919 >> 3) // does not compress away
	}
	for _, tb := range []string{"a", "d"} {
		for i := range 16 {
			if err := PutRow(w, tb, fmt.Sprint(i), projections.Row{Value: big}); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, tb := range []string{"b", "c"} {
		if err := PutRow(w, tb, "x", projections.Row{Value: []byte("small")}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.commit(); err != nil {
		t.Fatal(err)
	}
	if err := store.FlushMemtable(); err != nil {
		t.Fatal(err)
	}
	tables := []string{"a", "b", "c", "d", "e"}
	for _, n := range []int{1, 2, 8} {
		runs, err := tableRuns(store, tables, n, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(slices.Concat(runs...), tables) || len(runs) > n || slices.ContainsFunc(runs, func(r []string) bool { return len(r) == 0 }) {
			t.Fatalf("%d runs: %v", n, runs)
		}
		if n == 2 && (len(runs) != 2 || !slices.Contains(runs[0], "a") || !slices.Contains(runs[1], "d")) {
			t.Errorf("2 runs: %v, want a and d apart", runs)
		}
	}
}

// TestScanRuns: runs of tables split where they go from tables read only
// by scans to others and back, each piece in order, and a run of one
// kind is left whole; a scan-only run's file has no filters, the others do.
func TestScanRuns(t *testing.T) {
	projections.ScanOnly("zz_idx1") // tables of no projection
	projections.ScanOnly("zz_idx2")
	got := scanRuns([][]string{{"a", "b"}, {"c", "zz_idx1", "zz_idx2", "zz_row"}, {"zz_idx1"}})
	want := [][]string{{"a", "b"}, {"c"}, {"zz_idx1", "zz_idx2"}, {"zz_row"}, {"zz_idx1"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("runs %q, want %q", got, want)
	}
	// The table files of scan-only tables are written without filters,
	// the others with.
	src, w := freshStore(t, 1<<20)
	for _, tb := range []string{"c", "zz_idx1", "zz_row"} {
		if err := PutRow(w, tb, "x", projections.Row{Value: []byte("v")}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.commit(); err != nil {
		t.Fatal(err)
	}
	dst, _ := freshStore(t, 1<<20)
	files, err := tableFiles(src, dst, []string{"c", "zz_idx1", "zz_row"}, false, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer discardFiles(files)
	var filtered []bool
	for _, f := range files[:len(files)-1] { // the last holds the table indexes
		filtered = append(filtered, f.Filtered())
	}
	if want := []bool{true, false, true}; !slices.Equal(filtered, want) {
		t.Errorf("files filtered %v, want %v", filtered, want)
	}
}
