//go:build !linux

package slab

// mapRegion returns a Go slice: only Linux maps regions.
func mapRegion(n int) ([]byte, bool) { return make([]byte, n), false }

// unmapRegion is never called off Linux (no region is mapped).
func unmapRegion([]byte) {}
