package slab_test

import (
	"runtime"
	"testing"
	"unsafe"

	"github.com/ordoplane/ordo/storage/slab"
)

// TestAllocDistinctZeroAligned: every Alloc is n zero bytes, 8-byte
// aligned, apart from every other; past Release the Slab holds nothing and
// serves again.
func TestAllocDistinctZeroAligned(t *testing.T) {
	var s slab.Slab
	sizes := []int{1, 7, 8, 13, 4 << 10, 3 << 20, 100, 70 << 20, 5}
	var got [][]byte
	for _, n := range sizes {
		b := s.Alloc(n)
		if len(b) != n || cap(b) != n {
			t.Fatalf("Alloc(%d): len %d cap %d", n, len(b), cap(b))
		}
		if uintptr(unsafe.Pointer(unsafe.SliceData(b)))%8 != 0 {
			t.Errorf("Alloc(%d) is not 8-byte aligned", n)
		}
		for _, c := range b {
			if c != 0 {
				t.Fatalf("Alloc(%d) is not zero", n)
			}
		}
		for i := range b {
			b[i] = byte(len(got) + 1)
		}
		got = append(got, b)
	}
	for i, b := range got {
		for _, c := range b {
			if c != byte(i+1) {
				t.Fatalf("allocation %d (%d bytes) was overwritten by a later one", i, len(b))
			}
		}
	}
	if s.Held() < int64(70<<20) {
		t.Errorf("Held %d after allocating more than 70 MiB", s.Held())
	}
	if slab.InUse() != s.Held() {
		t.Errorf("InUse %d, the only slab holds %d", slab.InUse(), s.Held())
	}
	s.Release()
	if s.Held() != 0 || slab.InUse() != 0 {
		t.Errorf("Held %d, InUse %d after Release", s.Held(), slab.InUse())
	}
	if b := s.Alloc(16); len(b) != 16 || b[0] != 0 {
		t.Errorf("Alloc after Release: %v", b)
	}
	s.Release()
	if s.Alloc(0) != nil {
		t.Error("Alloc(0) is not nil")
	}
}

// TestOutsideGoHeap: on Linux, what a Slab holds is not Go's heap, so the
// collector's goal does not grow with it.
func TestOutsideGoHeap(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("regions are mapped on Linux only")
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	var s slab.Slab
	defer s.Release()
	for range 64 {
		b := s.Alloc(1 << 20)
		b[len(b)-1] = 1
	}
	runtime.ReadMemStats(&after)
	if grown := int64(after.HeapAlloc) - int64(before.HeapAlloc); grown > 16<<20 {
		t.Errorf("Go's heap grew by %d bytes for 64 MiB held in a slab", grown)
	}
}
