package rebuild

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// TestSortPending: rows sort by key, then seq, as a comparison sort puts
// them, over keys with long shared prefixes, prefixes of one another,
// repeated keys and empty ones.
func TestSortPending(t *testing.T) {
	rnd := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{0, 1, 2, 5, 13, 100, 1000, 20000} {
		rows := make([]pendingRow, n)
		for i := range rows {
			var k string
			switch rnd.IntN(5) {
			case 0:
				k = fmt.Sprintf("t/entity_events\x00alloc\x00alloc-%d-%d\x00%020d", rnd.IntN(50), rnd.IntN(4), rnd.IntN(100))
			case 1:
				k = fmt.Sprintf("t/allocs\x00alloc-%d", rnd.IntN(30))
			case 2:
				k = strings.Repeat("a", rnd.IntN(4)) // prefixes of one another, and ""
			case 3:
				k = fmt.Sprintf("t/allocs\x00alloc-%d\xff", rnd.IntN(3))
			default:
				k = "ti/allocs"
			}
			rows[i] = pendingRow{key: k, seq: uint32(i)}
		}
		want := slices.Clone(rows)
		slices.SortFunc(want, func(a, b pendingRow) int {
			if c := strings.Compare(a.key, b.key); c != 0 {
				return c
			}
			return cmp.Compare(a.seq, b.seq)
		})
		sortPending(rows)
		for i := range rows {
			if rows[i].key != want[i].key || rows[i].seq != want[i].seq {
				t.Fatalf("%d rows: row %d is %q/%d, want %q/%d", n, i, rows[i].key, rows[i].seq, want[i].key, want[i].seq)
			}
		}
	}
}

func FuzzSortPending(f *testing.F) {
	f.Add([]byte("b\x00a\x00ab\x00a\x00\x00ba"))
	f.Fuzz(func(t *testing.T, data []byte) {
		var rows []pendingRow
		for i, k := range strings.Split(string(data), "\x00") {
			rows = append(rows, pendingRow{key: k, seq: uint32(i)})
		}
		want := slices.Clone(rows)
		slices.SortStableFunc(want, func(a, b pendingRow) int { return strings.Compare(a.key, b.key) })
		sortPending(rows)
		for i := range rows {
			if rows[i].key != want[i].key || rows[i].seq != want[i].seq {
				t.Fatalf("row %d is %q/%d, want %q/%d", i, rows[i].key, rows[i].seq, want[i].key, want[i].seq)
			}
		}
	})
}

// historyStage returns the rows a history lane's stage holds at a cut,
// in the order written: the 12,800 entity keys of 3,072 entries of make
// bench's generated scheduling history (a job registered with its eval,
// four allocations placed on four nodes, each reported running).
func historyStage() []pendingRow {
	var rows []pendingRow
	index := uint64(1_000_000)
	add := func(kind, id string) {
		k := fmt.Sprintf("t/entity_events\x00%s\x00%s\x00%020d\x00%010d", kind, id, index, 0)
		rows = append(rows, pendingRow{key: k, seq: uint32(len(rows))})
	}
	for j := 100_000; j < 100_000+512; j++ {
		job, eval, ns := fmt.Sprintf("job-%d", j%20000), fmt.Sprintf("eval-%d", j), fmt.Sprintf("team-%d", j%50)
		index++
		add("job", ns+"/"+job)
		add("eval", eval)
		add("job", ns+"/"+job)
		index++
		for k := range 4 {
			add("alloc", fmt.Sprintf("alloc-%d-%d", j, k))
			add("node", fmt.Sprintf("node-%04d", (j*4+k)%500))
		}
		add("eval", eval)
		add("job", ns+"/"+job)
		for k := range 4 {
			index++
			add("alloc", fmt.Sprintf("alloc-%d-%d", j, k))
			add("node", fmt.Sprintf("node-%04d", (j*4+k)%500))
			add("job", ns+"/"+job)
		}
	}
	return rows
}

// BenchmarkSortPending sorts a history lane's stage at a cut; ns/row is
// the figure.
func BenchmarkSortPending(b *testing.B) {
	stage := historyStage()
	rows := make([]pendingRow, len(stage))
	b.ResetTimer()
	for range b.N {
		copy(rows, stage)
		sortPending(rows)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(stage)), "ns/row")
}
