package rebuild

import (
	"cmp"
	"slices"
	"strings"
)

// sortPending sorts rows by key, and rows of one key by seq: what
// slices.SortFunc does with that comparison, in about half the time on a
// replay's rows. A multikey (three-way radix) quicksort: the keys of a
// batch share long prefixes ("t/entity_events\x00alloc\x00alloc-…"), which
// a comparison sort compares again at every step, where this one looks at
// each key's byte at one depth at a time.
func sortPending(rows []pendingRow) { mkqs(rows, 0) }

// insertionRows is the size below which mkqs sorts by insertion.
const insertionRows = 12

// byteAt is key's byte at depth d, -1 past its end.
func byteAt(key string, d int) int {
	if d < len(key) {
		return int(key[d])
	}
	return -1
}

// mkqs sorts rows whose keys are equal before depth d.
func mkqs(rows []pendingRow, d int) {
	for len(rows) > insertionRows {
		// The median of three bytes at depth d is the pivot.
		a, b, c := byteAt(rows[0].key, d), byteAt(rows[len(rows)/2].key, d), byteAt(rows[len(rows)-1].key, d)
		pivot := max(min(a, b), min(max(a, b), c))
		// Three-way partition: [0, lt) below the pivot, [lt, gt) equal,
		// [gt, len) above.
		lt, i, gt := 0, 0, len(rows)
		for i < gt {
			switch c := byteAt(rows[i].key, d); {
			case c < pivot:
				rows[lt], rows[i] = rows[i], rows[lt]
				lt++
				i++
			case c > pivot:
				gt--
				rows[gt], rows[i] = rows[i], rows[gt]
			default:
				i++
			}
		}
		mkqs(rows[:lt], d)
		mkqs(rows[gt:], d)
		if pivot < 0 {
			// The keys in [lt, gt) end at d: they are equal.
			sortSeq(rows[lt:gt])
			return
		}
		all := lt == 0 && gt == len(rows)
		rows, d = rows[lt:gt], d+1
		if all {
			// Every key had the pivot's byte: they may share more, which
			// one pass finds cheaper than a partition per byte ("t/entity_events\x00…").
			d = commonPrefix(rows, d)
		}
	}
	for i := 1; i < len(rows); i++ {
		for j := i; j > 0 && lessFrom(&rows[j], &rows[j-1], d); j-- {
			rows[j], rows[j-1] = rows[j-1], rows[j]
		}
	}
}

// commonPrefix returns the length of the prefix every key of rows shares,
// all of them equal before depth d.
func commonPrefix(rows []pendingRow, d int) int {
	first := rows[0].key
	n := len(first)
	for i := 1; i < len(rows) && n > d; i++ {
		k := rows[i].key
		m := min(n, len(k))
		j := d
		for j < m && k[j] == first[j] {
			j++
		}
		n = j
	}
	return max(n, d)
}

// lessFrom orders a and b, whose keys are equal before depth d.
func lessFrom(a, b *pendingRow, d int) bool {
	if c := strings.Compare(a.key[min(d, len(a.key)):], b.key[min(d, len(b.key)):]); c != 0 {
		return c < 0
	}
	return a.seq < b.seq
}

// sortSeq sorts rows of one key by seq.
func sortSeq(rows []pendingRow) {
	slices.SortFunc(rows, func(a, b pendingRow) int { return cmp.Compare(a.seq, b.seq) })
}
