package slab

import "sync/atomic"

// firstRegion and maxRegion bound the size of a Slab's regions: the first
// is small, so a Slab that holds little maps little; each next one doubles,
// up to maxRegion.
const (
	firstRegion = 1 << 20
	maxRegion   = 64 << 20
)

// inUse is the bytes every Slab of the process holds.
var inUse atomic.Int64

// InUse returns the bytes every Slab of the process holds: what its
// memory metrics show of them (Go's runtime counts none of it).
func InUse() int64 { return inUse.Load() }

// Slab hands out bytes from regions mapped outside Go's heap (package
// doc). The zero value is ready to use.
type Slab struct {
	regions []region
	// rest is the unused end of the newest region.
	rest []byte
	next int
	held int64
}

// region is one mapping; mapped is false for a Go slice standing in for
// one (mapRegion failed or is not supported).
type region struct {
	b      []byte
	mapped bool
}

// Alloc returns n zero bytes (len and cap n), 8-byte aligned, valid until
// Release.
func (s *Slab) Alloc(n int) []byte {
	if n <= 0 {
		return nil
	}
	size := (n + 7) &^ 7
	if size > len(s.rest) {
		if s.next == 0 {
			s.next = firstRegion
		}
		r := max(s.next, size)
		if s.next < maxRegion {
			s.next *= 2
		}
		b, mapped := mapRegion(r)
		s.regions = append(s.regions, region{b: b, mapped: mapped})
		s.held += int64(len(b))
		inUse.Add(int64(len(b)))
		s.rest = b
	}
	b := s.rest[:n:n]
	s.rest = s.rest[size:]
	return b
}

// Held returns the bytes of the regions the Slab holds.
func (s *Slab) Held() int64 { return s.held }

// Release returns every region to the system: the slices Alloc returned
// must not be touched again. The Slab is empty and usable afterwards.
func (s *Slab) Release() {
	for _, r := range s.regions {
		if r.mapped {
			unmapRegion(r.b)
		}
	}
	inUse.Add(-s.held)
	clear(s.regions)
	*s = Slab{regions: s.regions[:0]}
}
