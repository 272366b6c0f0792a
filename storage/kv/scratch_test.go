package kv

import (
	"errors"
	"os"
	"testing"
)

// TestScratchStore: a scratch store starts empty, lives inside its
// store's directory, is deleted when closed, and one a stop left is
// deleted when its store opens, but not by an open refused because
// another process holds the store.
func TestScratchStore(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	mustSet(t, s, "k", "live")
	sc, err := s.OpenScratch()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sc.Get([]byte("k")); !errors.Is(err, ErrNotFound) {
		t.Fatalf("a new scratch store reads the live key: %v", err)
	}
	mustSet(t, sc, "k", "scratch")
	if v, err := s.Get([]byte("k")); err != nil || string(v) != "live" {
		t.Fatalf("the live store reads %q, %v", v, err)
	}
	dirs, err := ScratchStores(dir)
	if err != nil || len(dirs) != 1 || dirs[0] != sc.Dir() {
		t.Fatalf("scratch stores %v, %v; want [%s]", dirs, err, sc.Dir())
	}
	if err := sc.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(sc.Dir()); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a closed scratch store is still there: %v", err)
	}

	left, err := s.OpenScratch()
	if err != nil {
		t.Fatal(err)
	}
	if other, err := Open(dir, DefaultConfig()); err == nil {
		other.Close()
		t.Fatal("a second open of a store in use succeeded")
	}
	if dirs, _ := ScratchStores(dir); len(dirs) != 1 {
		t.Fatalf("the refused open removed the owner's scratch store: %v", dirs)
	}
	if err := left.db.Close(); err != nil { // as a stop leaves it: not removed
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = openTest(t, dir)
	if dirs, _ := ScratchStores(dir); len(dirs) != 0 {
		t.Errorf("a scratch store a stop left survived the open: %v", dirs)
	}
	if v, err := s.Get([]byte("k")); err != nil || string(v) != "live" {
		t.Errorf("the reopened store reads %q, %v", v, err)
	}
}
