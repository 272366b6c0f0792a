package events

import "strconv"

// AppendPosition appends an event's position (its entry's index and its
// sequence in the entry) as text that sorts as the position does: the
// index in 20 zero-padded digits, sep, the sequence in 10. The history's
// row keys and the Kafka mirror's ce_sequence are written so.
func AppendPosition(b []byte, index uint64, seq uint32, sep byte) []byte {
	b = appendPadded(b, index, 20)
	return appendPadded(append(b, sep), uint64(seq), 10)
}

// appendPadded appends n in decimal, zero-padded to width digits.
func appendPadded(b []byte, n uint64, width int) []byte {
	var digits [20]byte
	d := strconv.AppendUint(digits[:0], n, 10)
	for range width - len(d) {
		b = append(b, '0')
	}
	return append(b, d...)
}
