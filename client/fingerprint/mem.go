package fingerprint

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// ParseMemInfo reads the text of /proc/meminfo and returns MemTotal in bytes.
func ParseMemInfo(r io.Reader) (uint64, error) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		key, val, ok := strings.Cut(sc.Text(), ":")
		if !ok || strings.TrimSpace(key) != "MemTotal" {
			continue
		}
		fields := strings.Fields(val)
		if len(fields) == 0 {
			return 0, fmt.Errorf("meminfo: MemTotal has no value")
		}
		n, err := strconv.ParseUint(fields[0], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("meminfo: MemTotal %q: %w", fields[0], err)
		}
		unit := uint64(1)
		if len(fields) > 1 {
			switch strings.ToLower(fields[1]) {
			case "kb":
				unit = 1 << 10
			case "mb":
				unit = 1 << 20
			case "gb":
				unit = 1 << 30
			default:
				return 0, fmt.Errorf("meminfo: MemTotal unit %q", fields[1])
			}
		}
		return n * unit, nil
	}
	if err := sc.Err(); err != nil {
		return 0, fmt.Errorf("meminfo: %w", err)
	}
	return 0, fmt.Errorf("meminfo: no MemTotal")
}
