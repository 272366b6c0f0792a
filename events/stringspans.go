package events

import "strings"

// stringSpans gathers the strings of a decoded value, in the order read,
// to be made in one allocation (set). It holds a few on the stack.
type stringSpans struct {
	src   []byte // what the strings are read from
	arr   [24]span
	n     int
	more  []span
	total int
}

// span is a string to set: interned when set (a name of a registered
// type or a kind, never empty), else src[off:off+n] made a string.
type span struct {
	dst      *string
	off, n   uint32
	interned string
}

func (s *stringSpans) push(sp span) {
	if s.n < len(s.arr) {
		s.arr[s.n] = sp
		s.n++
		return
	}
	s.more = append(s.more, sp)
}

// add sets dst to b, a slice of src, in its turn.
func (s *stringSpans) add(dst *string, b []byte) {
	off := 0
	if len(b) > 0 {
		off = cap(s.src) - cap(b) // where b starts in src
	}
	s.push(span{dst: dst, off: uint32(off), n: uint32(len(b))})
	s.total += len(b)
}

// intern sets dst to interned, in its turn.
func (s *stringSpans) intern(dst *string, interned string) {
	s.push(span{dst: dst, interned: interned})
}

// set makes the strings gathered and sets each, in the order read.
func (s *stringSpans) set() {
	spans := append(s.arr[:s.n:s.n], s.more...)
	var all string
	if s.total > 0 {
		var sb strings.Builder
		sb.Grow(s.total)
		for _, sp := range spans {
			sb.Write(s.src[sp.off : sp.off+sp.n])
		}
		all = sb.String()
	}
	at := uint32(0)
	for _, sp := range spans {
		if sp.interned != "" {
			*sp.dst = sp.interned
			continue
		}
		*sp.dst = all[at : at+sp.n]
		at += sp.n
	}
}
