package fingerprint

import (
	"bufio"
	"io"
	"strconv"
	"strings"
)

// ParseOSRelease reads the text of /etc/os-release and returns its ID and
// VERSION_ID (either may be "").
func ParseOSRelease(r io.Reader) (id, version string) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		key, val, ok := strings.Cut(strings.TrimSpace(sc.Text()), "=")
		if !ok || strings.HasPrefix(key, "#") {
			continue
		}
		if uq, err := strconv.Unquote(val); err == nil {
			val = uq
		} else {
			val = strings.Trim(val, `'"`)
		}
		switch key {
		case "ID":
			id = val
		case "VERSION_ID":
			version = val
		}
	}
	return id, version
}
