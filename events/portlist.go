package events

import (
	"fmt"
	"strconv"
	"strings"
)

// PortRange is an inclusive range of host ports.
type PortRange struct{ Lo, Hi int }

// Contains reports whether p is in the range.
func (r PortRange) Contains(p int) bool { return p >= r.Lo && p <= r.Hi }

// ParsePortList parses a list of ports and ranges as Nomad's client
// configuration writes reserved ports ("22,80,8000-8100"; spaces are
// ignored, "" is none). Every port must be in 1-65535.
func ParsePortList(s string) ([]PortRange, error) {
	var out []PortRange
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(strings.TrimSpace(lo))
		if err != nil {
			return nil, fmt.Errorf("port %q is not a number", part)
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(strings.TrimSpace(hi)); err != nil {
				return nil, fmt.Errorf("port range %q is not two numbers", part)
			}
		}
		if a < 1 || b > 65535 || a > b {
			return nil, fmt.Errorf("port range %q is outside 1-65535 or reversed", part)
		}
		out = append(out, PortRange{a, b})
	}
	return out, nil
}

// PortInList reports whether p is in one of ranges.
func PortInList(ranges []PortRange, p int) bool {
	for _, r := range ranges {
		if r.Contains(p) {
			return true
		}
	}
	return false
}
