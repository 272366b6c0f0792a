package slab

import "golang.org/x/sys/unix"

// mapRegion maps n bytes of anonymous memory, with transparent huge pages
// asked for (a hint: a kernel in the "madvise" mode grants them, in the
// "never" mode ignores it); it falls back to a Go slice if mapping fails.
func mapRegion(n int) ([]byte, bool) {
	b, err := unix.Mmap(-1, 0, n, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		return make([]byte, n), false
	}
	_ = unix.Madvise(b, unix.MADV_HUGEPAGE) // a hint; without it, 4 KiB pages
	return b, true
}

// unmapRegion returns a region mapRegion mapped. Munmap fails only for a
// slice it did not map, which a Slab never passes.
func unmapRegion(b []byte) {
	if err := unix.Munmap(b); err != nil {
		panic("slab: unmap a region: " + err.Error())
	}
}
