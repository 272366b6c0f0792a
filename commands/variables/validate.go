package variables

import (
	"encoding/json"
	"strings"
	"unicode"
	"unicode/utf8"

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

// ValidItemKey returns a *commands.ValidationError naming field when key
// may not name an item: empty, over MaxItemKeyLen bytes, not UTF-8, or
// holding a character that does not print (a control character, a null
// byte; the ASCII space is allowed).
func ValidItemKey(field, key string) error {
	switch {
	case key == "":
		return commands.Invalid(field, "item keys must not be empty")
	case len(key) > MaxItemKeyLen:
		return commands.Invalid(field, "item key of %d bytes exceeds %d", len(key), MaxItemKeyLen)
	case !utf8.ValidString(key):
		return commands.Invalid(field, "item key %q is not UTF-8", key)
	}
	for i, c := range key {
		if !unicode.IsPrint(c) {
			return commands.Invalid(field, "item key %q has %U at byte %d: keys must be printable", key, c, i)
		}
	}
	return nil
}

func pathByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
		c == '-' || c == '_' || c == '~' || c == '/'
}

// MaxItemKeyLen bounds an item's key, in bytes.
const MaxItemKeyLen = 256

// ValidItems returns a *commands.ValidationError naming "Items" when items
// cannot be stored: none, a key that ValidItemKey refuses, or more than
// MaxItemsBytes once encoded.
func ValidItems(items Items) error {
	if len(items) == 0 {
		return commands.Invalid("Items", "a variable needs at least one item")
	}
	for k := range items {
		if err := ValidItemKey("Items", k); err != nil {
			return err
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
