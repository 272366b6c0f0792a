package variables

import (
	"encoding/json"
	"strings"

	"github.com/ordoplane/ordo/commands"
)

// Limits on variables, as Nomad's.
const (
	// MaxPathLen bounds a path, in bytes.
	MaxPathLen = 128
	// MaxItemsBytes bounds a variable's items encoded as JSON, in bytes.
	MaxItemsBytes = 64 << 10
	// MaxDataBytes bounds a sealed variable: MaxItemsBytes and the room an
	// encrypter needs for its nonce and tag.
	MaxDataBytes = MaxItemsBytes + 1024
)

// ValidPath returns a *commands.ValidationError naming field when path is
// not a variable path: 1 to MaxPathLen bytes of letters, digits, '-', '_',
// '~' and '/', no empty segment (no leading, trailing or doubled slash),
// and under the reserved top-level "nomad" only "nomad/jobs" and
// "nomad/job-templates" and what is below them.
func ValidPath(field, path string) error {
	switch {
	case path == "":
		return commands.Invalid(field, "a variable path is required")
	case len(path) > MaxPathLen:
		return commands.Invalid(field, "%d bytes exceeds %d", len(path), MaxPathLen)
	}
	for i := 0; i < len(path); i++ {
		if c := path[i]; !pathByte(c) {
			return commands.Invalid(field, "%q has %q at byte %d: paths may hold only letters, digits, '-', '_', '~' and '/'", path, c, i)
		}
	}
	segs := strings.Split(path, "/")
	for _, s := range segs {
		if s == "" {
			return commands.Invalid(field, "%q has an empty segment: no leading, trailing or doubled '/'", path)
		}
	}
	if segs[0] == "nomad" && (len(segs) == 1 || segs[1] != "jobs" && segs[1] != "job-templates") {
		return commands.Invalid(field, "%q: \"nomad\" is a reserved top-level path; variables may be written at or below \"nomad/jobs\" and \"nomad/job-templates\"", path)
	}
	return nil
}

func pathByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
		c == '-' || c == '_' || c == '~' || c == '/'
}

// ValidItems returns a *commands.ValidationError naming "Items" when items
// cannot be stored: none, an empty key, or more than MaxItemsBytes once
// encoded.
func ValidItems(items Items) error {
	if len(items) == 0 {
		return commands.Invalid("Items", "a variable needs at least one item")
	}
	for k := range items {
		if k == "" {
			return commands.Invalid("Items", "item keys must not be empty")
		}
	}
	b, err := json.Marshal(items)
	if err != nil {
		return commands.Invalid("Items", "%v", err)
	}
	size := len(b)
	clear(b)
	if size > MaxItemsBytes {
		return commands.Invalid("Items", "%d bytes encoded exceeds %d", size, MaxItemsBytes)
	}
	return nil
}
