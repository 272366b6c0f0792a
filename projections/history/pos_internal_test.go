package history

import (
	"fmt"
	"math"
	"math/rand"
	"testing"
)

// TestRowKeyFormat: a row key's position is the index in 20 zero-padded
// digits and the seq in 10, as the rows already stored have it.
func TestRowKeyFormat(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	cases := []Pos{{}, {Index: 1, Seq: 1}, {Index: math.MaxUint64, Seq: math.MaxUint32}, {Index: 12345678901234567890, Seq: 7}}
	for range 1000 {
		cases = append(cases, Pos{Index: r.Uint64() >> r.Intn(64), Seq: r.Uint32() >> r.Intn(32)})
	}
	for _, p := range cases {
		want := fmt.Sprintf("alloc\x00a-1\x00%020d\x00%010d", p.Index, p.Seq)
		if got := string(appendRowKey(nil, "alloc", "a-1", p.Index, p.Seq)); got != want {
			t.Fatalf("rowKey at %v: %q, want %q", p, got, want)
		}
		if back, err := parseSuffix(string(appendPos(nil, p))); err != nil || back != p {
			t.Fatalf("parseSuffix(appendPos(%v)) = %v, %v", p, back, err)
		}
	}
}
