package kv

import (
	"fmt"
	"testing"
)

// A Loader commits its batches as they fill: what it was given is in the
// store batch after batch, the last part once Commit runs; Close drops
// what was not committed.
func TestLoader(t *testing.T) {
	s, err := Open(t.TempDir(), DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	l := s.Loader(1 << 10)
	value := make([]byte, 100)
	for i := range 100 {
		if err := l.Set([]byte(fmt.Sprintf("k%03d", i)), value); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Set([]byte("tail"), []byte("x")); err != nil { // too small to fill a batch alone
		t.Fatal(err)
	}
	count := func() int {
		n := 0
		if err := s.Scan(nil, nil, false, func(_, _ []byte) error { n++; return nil }); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := count(); n == 0 || n == 101 {
		t.Fatalf("%d keys in the store before Commit: want the full batches only", n)
	}
	if err := l.Commit(); err != nil {
		t.Fatal(err)
	}
	l.Close()
	if n := count(); n != 101 {
		t.Fatalf("%d keys after Commit, want 101", n)
	}
	d := s.Loader(0)
	if err := d.Set([]byte("dropped"), value); err != nil {
		t.Fatal(err)
	}
	d.Close()
	if _, err := s.Get([]byte("dropped")); err != ErrNotFound {
		t.Fatalf("a closed Loader's write reached the store: %v", err)
	}
}
