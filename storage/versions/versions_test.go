package versions

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/ordoplane/ordo/storage/kv"
)

// keep is what the tests version: keys under "t/" and "z"; others ("x/")
// are written to the source and must never show.
var keep = [][]byte{[]byte("z"), []byte("t/")}

// model is the source's state after each index, as a map.
type model map[uint64]map[string]string

// source drives a kv.Store as the FSM does: batches of entries, each
// entry a few writes, the batch's repr and marks recorded.
type source struct {
	t     *testing.T
	store *kv.Store
	state map[string]string
	model model
	index uint64
	rng   *rand.Rand
}

func newSource(t *testing.T) *source {
	t.Helper()
	st, err := kv.Open(t.TempDir(), kv.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return &source{t: t, store: st, state: map[string]string{}, model: model{}, rng: rand.New(rand.NewPCG(1, 2))}
}

// key returns one of a few dozen keys, some holding 0x00 bytes, some
// prefixes of others, some outside the kept prefixes.
func (s *source) key() string {
	n := s.rng.IntN(40)
	switch n % 4 {
	case 0:
		return fmt.Sprintf("t/a\x00%d", n)
	case 1:
		return fmt.Sprintf("t/a%d", n)
	case 2:
		return fmt.Sprintf("x/%d", n)
	}
	return fmt.Sprintf("z%d\x00\x00", n%7)
}

// batch applies entries entries of a few writes each in one batch and
// returns its record.
func (s *source) batch(entries int) Record {
	s.t.Helper()
	b := s.store.Batch()
	rec := Record{From: s.index, Tag: "v1"}
	for range entries {
		s.index++
		for range 1 + s.rng.IntN(4) {
			k := s.key()
			if s.rng.IntN(3) == 0 {
				if err := b.Delete([]byte(k)); err != nil {
					s.t.Fatal(err)
				}
				delete(s.state, k)
				continue
			}
			v := fmt.Sprintf("v%d-%d", s.index, s.rng.IntN(1000))
			if err := b.Set([]byte(k), []byte(v)); err != nil {
				s.t.Fatal(err)
			}
			s.state[k] = v
		}
		rec.Marks = append(rec.Marks, Mark{Index: s.index, Ops: b.Count()})
		s.model[s.index] = kept(s.state)
	}
	// The batch's own trailing write, attributed to its last index.
	if err := b.Set([]byte("t/applied"), kv.Uint64Value(s.index)); err != nil {
		s.t.Fatal(err)
	}
	s.state["t/applied"] = string(kv.Uint64Value(s.index))
	s.model[s.index] = kept(s.state)
	rec.To, rec.Repr = s.index, b.Repr()
	if err := b.Commit(); err != nil {
		s.t.Fatal(err)
	}
	return rec
}

// kept copies the kept keys of state.
func kept(state map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range state {
		if under([]byte(k), keep) {
			out[k] = v
		}
	}
	return out
}

func openStore(t *testing.T) *Store {
	t.Helper()
	s, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// check reads the store at index and compares every key, a forward and a
// reverse scan and a bounded scan with the model.
func check(t *testing.T, s *Store, m model, index uint64) {
	t.Helper()
	r, err := s.At(index, "v1")
	if err != nil {
		t.Fatalf("at %d: %v", index, err)
	}
	want := m[index]
	for _, k := range slices.Sorted(maps.Keys(want)) {
		got, err := r.Get([]byte(k))
		if err != nil || string(got) != want[k] {
			t.Fatalf("at %d: Get(%q) = %q, %v; want %q", index, k, got, err, want[k])
		}
	}
	if _, err := r.Get([]byte("t/never")); !errors.Is(err, kv.ErrNotFound) {
		t.Fatalf("at %d: Get of an absent key: %v", index, err)
	}
	for _, rng := range [][2][]byte{{nil, nil}, {[]byte("t/a"), []byte("t/a\x00\xff")}, {[]byte("t/a1"), []byte("z3")}} {
		var wantKeys []string
		for k := range want {
			if bytes.Compare([]byte(k), rng[0]) >= 0 && (rng[1] == nil || bytes.Compare([]byte(k), rng[1]) < 0) {
				wantKeys = append(wantKeys, k)
			}
		}
		slices.Sort(wantKeys)
		for _, reverse := range []bool{false, true} {
			var got []string
			err := r.Scan(rng[0], rng[1], reverse, func(k, v []byte) error {
				if want[string(k)] != string(v) {
					return fmt.Errorf("scan: %q = %q, want %q", k, v, want[string(k)])
				}
				got = append(got, string(k))
				return nil
			})
			if err != nil {
				t.Fatalf("at %d: %v", index, err)
			}
			if reverse {
				slices.Reverse(got)
			}
			if !slices.Equal(got, wantKeys) {
				t.Fatalf("at %d: scan [%q, %q) reverse=%v = %q, want %q", index, rng[0], rng[1], reverse, got, wantKeys)
			}
		}
	}
}

// TestReadsAtEveryIndex: the store answers a read at any index of its
// span (mid-batch ones included) with the source's rows at that index.
func TestReadsAtEveryIndex(t *testing.T) {
	src := newSource(t)
	s := openStore(t)
	src.batch(3) // before the seed
	snap := src.store.Snapshot()
	if _, err := s.Seed(snap, src.index, "v1", keep); err != nil {
		t.Fatal(err)
	}
	snap.Close()
	from := src.index
	for range 60 {
		if err := s.Append(src.batch(1+src.rng.IntN(5)), keep); err != nil {
			t.Fatal(err)
		}
	}
	for i := from; i <= src.index; i++ {
		check(t, s, src.model, i)
	}
	if _, err := s.At(from-1, "v1"); !errors.Is(err, ErrNotCovered) {
		t.Fatalf("read before the span: %v", err)
	}
	if _, err := s.At(src.index, "v2"); !errors.Is(err, ErrNotCovered) {
		t.Fatalf("read of another tag: %v", err)
	}
}

// TestGapAndReseed: a batch that does not follow the span is refused;
// a seed after the gap writes the difference (deletions included), the
// old span still reads as before, and the new one reads right.
func TestGapAndReseed(t *testing.T) {
	src := newSource(t)
	s := openStore(t)
	if _, err := s.Seed(src.store.Snapshot(), 0, "v1", keep); err != nil {
		t.Fatal(err)
	}
	for range 20 {
		if err := s.Append(src.batch(3), keep); err != nil {
			t.Fatal(err)
		}
	}
	oldEnd := src.index
	for range 10 {
		src.batch(4) // lost
	}
	if err := s.Append(src.batch(2), keep); !errors.Is(err, ErrGap) {
		t.Fatalf("append after a gap: %v", err)
	}
	snap := src.store.Snapshot()
	st, err := s.Seed(snap, src.index, "v1", keep)
	snap.Close()
	if err != nil {
		t.Fatal(err)
	}
	if st.Written == 0 || st.Written >= st.Scanned+20 {
		t.Fatalf("seed stats %+v", st)
	}
	newFrom := src.index
	for range 20 {
		if err := s.Append(src.batch(2), keep); err != nil {
			t.Fatal(err)
		}
	}
	for i := uint64(1); i <= oldEnd; i++ {
		check(t, s, src.model, i)
	}
	for i := oldEnd + 1; i < newFrom; i++ {
		if s.Covers(i, "v1") {
			t.Fatalf("index %d in the gap is covered", i)
		}
	}
	for i := newFrom; i <= src.index; i++ {
		check(t, s, src.model, i)
	}
}

// TestReopenAndRetag: spans survive a reopen; a seed at the newest index
// under a new tag (a projection rebuild's switch) cuts the old span short
// of it, so the old tag no longer answers there.
func TestReopenAndRetag(t *testing.T) {
	src := newSource(t)
	dir := t.TempDir()
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Seed(src.store.Snapshot(), 0, "v1", keep); err != nil {
		t.Fatal(err)
	}
	for range 10 {
		if err := s.Append(src.batch(2), keep); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()
	if s, err = Open(dir); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if to, tag := s.Last(); to != src.index || tag != "v1" {
		t.Fatalf("reopened at %d %q, want %d v1", to, tag, src.index)
	}
	check(t, s, src.model, src.index-3)
	if _, err := s.Seed(src.store.Snapshot(), src.index, "v2", keep); err != nil {
		t.Fatal(err)
	}
	if s.Covers(src.index, "v1") || !s.Covers(src.index-1, "v1") || !s.Covers(src.index, "v2") {
		t.Fatalf("spans after a retag: %+v", s.Spans())
	}
}

// TestUnsupportedWrite: a range deletion cannot be versioned.
func TestUnsupportedWrite(t *testing.T) {
	src := newSource(t)
	s := openStore(t)
	if _, err := s.Seed(src.store.Snapshot(), 0, "v1", keep); err != nil {
		t.Fatal(err)
	}
	wb := src.store.WriteBatch()
	if err := wb.DeleteRange([]byte("t/"), []byte("t0")); err != nil {
		t.Fatal(err)
	}
	err := s.Append(Record{From: 0, To: 1, Repr: wb.Repr(), Tag: "v1"}, keep)
	if !errors.Is(err, ErrUnsupported) {
		t.Fatalf("append of a range deletion: %v", err)
	}
	wb.Close()
}

// FuzzParseKey: any key parses without panic, and one that parses is the
// encoding of what it parsed to; every encoded key parses back.
func FuzzParseKey(f *testing.F) {
	f.Add([]byte("t/a\x00b"), uint64(7), []byte("vt/a\x00\xffb\x00\x01\xff\xff\xff\xff\xff\xff\xff\xf8"))
	f.Add([]byte{}, uint64(0), []byte("v\x00\x01"))
	f.Fuzz(func(t *testing.T, key []byte, index uint64, raw []byte) {
		k, i, err := parseKey(versionKey(key, index))
		if err != nil || !bytes.Equal(k, key) || i != index {
			t.Fatalf("round trip of %q@%d = %q@%d, %v", key, index, k, i, err)
		}
		if k, i, err := parseKey(raw); err == nil && !bytes.Equal(versionKey(k, i), raw) {
			t.Fatalf("%q parsed to %q@%d, which encodes otherwise", raw, k, i)
		}
	})
}

// TestPrune: a prune below an index removes the versions no read from it
// on needs; reads from it on are unchanged, reads below are refused.
func TestPrune(t *testing.T) {
	src := newSource(t)
	s := openStore(t)
	if _, err := s.Seed(src.store.Snapshot(), 0, "v1", keep); err != nil {
		t.Fatal(err)
	}
	for range 40 {
		if err := s.Append(src.batch(3), keep); err != nil {
			t.Fatal(err)
		}
	}
	below := src.index / 2
	st, err := s.Prune(below)
	if err != nil {
		t.Fatal(err)
	}
	if st.Removed == 0 || st.Kept == 0 {
		t.Fatalf("prune stats %+v", st)
	}
	for i := below; i <= src.index; i++ {
		check(t, s, src.model, i)
	}
	if s.Covers(below-1, "v1") || !s.Covers(below, "v1") {
		t.Fatalf("spans after the prune: %+v", s.Spans())
	}
	again, err := s.Prune(below)
	if err != nil || again.Removed != 0 {
		t.Fatalf("a second prune at the same index: %+v, %v", again, err)
	}
}

// BenchmarkAppend measures Append of batches of 64 entries of 4 writes
// each over 10,000 keys, as a scheduling load commits them.
func BenchmarkAppend(b *testing.B) {
	st, err := kv.Open(b.TempDir(), kv.DefaultConfig())
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	s, err := Open(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Seed(st.Snapshot(), 0, "v1", keep); err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	value := bytes.Repeat([]byte("x"), 200)
	var index uint64
	writes := 0
	for b.Loop() {
		b.StopTimer()
		batch := st.Batch()
		rec := Record{From: index, Tag: "v1"}
		for range 64 {
			index++
			for range 4 {
				if err := batch.Set([]byte(fmt.Sprintf("t/allocs\x00%08d", rng.IntN(10_000))), value); err != nil {
					b.Fatal(err)
				}
			}
			rec.Marks = append(rec.Marks, Mark{Index: index, Ops: batch.Count()})
		}
		rec.To, rec.Repr = index, batch.Repr()
		batch.Close()
		b.StartTimer()
		if err := s.Append(rec, keep); err != nil {
			b.Fatal(err)
		}
		writes += 256
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(writes), "ns/write")
}
