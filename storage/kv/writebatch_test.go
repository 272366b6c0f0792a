package kv_test

import (
	"reflect"
	"strings"
	"testing"
)

// TestWriteBatchMovesARange replaces a key range with another in one
// batch, as a projection rebuild's switch does: a snapshot taken before
// sees only the old keys, the store after only the new ones.
func TestWriteBatchMovesARange(t *testing.T) {
	s := open(t)
	set(t, s, "a/1", "old1", "a/2", "old2", "a/3", "old3", "b/1", "keep", "sh/a/1", "new1", "sh/a/4", "new4")
	before := s.Snapshot()
	defer before.Close()

	w := s.WriteBatch()
	if err := w.DeleteRange([]byte("a/"), []byte("a0")); err != nil {
		t.Fatal(err)
	}
	for _, kv := range scanAll(t, s, []byte("sh/"), []byte("sh0"), false) {
		k, v, _ := strings.Cut(kv, "=")
		if err := w.Set([]byte(k[len("sh/"):]), []byte(v)); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.DeleteRange([]byte("sh/"), []byte("sh0")); err != nil {
		t.Fatal(err)
	}
	if w.Len() == 0 {
		t.Fatal("Len of a written batch is 0")
	}
	if err := w.Commit(true); err != nil {
		t.Fatal(err)
	}
	if got, want := scanAll(t, s, nil, nil, false), []string{"a/1=new1", "a/4=new4", "b/1=keep"}; !reflect.DeepEqual(got, want) {
		t.Errorf("after the move: %v, want %v", got, want)
	}
	if got, want := scanAll(t, before, []byte("a/"), []byte("a0"), false), []string{"a/1=old1", "a/2=old2", "a/3=old3"}; !reflect.DeepEqual(got, want) {
		t.Errorf("snapshot before the move: %v, want %v", got, want)
	}

	if err := s.DeleteRange([]byte("a/"), []byte("a0"), false); err != nil {
		t.Fatal(err)
	}
	if got, want := scanAll(t, s, nil, nil, false), []string{"b/1=keep"}; !reflect.DeepEqual(got, want) {
		t.Errorf("after DeleteRange: %v, want %v", got, want)
	}

	// A closed batch writes nothing.
	w = s.WriteBatch()
	w.Set([]byte("z"), []byte("1"))
	w.Close()
	if _, err := s.Get([]byte("z")); err == nil {
		t.Error("a closed batch's write is visible")
	}
}

// TestWriteBatchCloseAfterCommit: a Close after Commit (a deferred one)
// leaves alone the Pebble batch that Commit returned to the pool and that
// the next write batch may be using.
func TestWriteBatchCloseAfterCommit(t *testing.T) {
	s := open(t)
	first := s.WriteBatch()
	if err := first.Set([]byte("k1"), []byte("v1")); err != nil {
		t.Fatal(err)
	}
	if err := first.Commit(false); err != nil {
		t.Fatal(err)
	}
	next := s.WriteBatch()
	if err := next.Set([]byte("k2"), []byte("v2")); err != nil {
		t.Fatal(err)
	}
	first.Close()
	if err := next.Commit(false); err != nil {
		t.Fatal(err)
	}
	if v, err := s.Get([]byte("k2")); err != nil || string(v) != "v2" {
		t.Fatalf("the next batch's write: %q, %v", v, err)
	}
}
