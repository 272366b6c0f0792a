package order

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// ErrBadToken is a page token that is not "<create index>.<id>".
var ErrBadToken = errors.New("ordo: malformed page token")

// Key returns the creation-order key of the entity id created at index:
// "<20-digit index>\x00<id>".
func Key(index uint64, id string) string {
	return fmt.Sprintf("%020d\x00%s", index, id)
}

// Split returns the create index and id of a key made by Key.
func Split(key string) (uint64, string, error) {
	i := strings.IndexByte(key, 0)
	if i != 20 {
		return 0, "", fmt.Errorf("%w: key %q", ErrBadToken, key)
	}
	n, err := strconv.ParseUint(key[:i], 10, 64)
	if err != nil {
		return 0, "", fmt.Errorf("%w: key %q", ErrBadToken, key)
	}
	return n, key[i+1:], nil
}

// Token returns the page token of the entity id created at index,
// "<index>.<id>", the shape of Nomad's create-index tokens.
func Token(index uint64, id string) string {
	return strconv.FormatUint(index, 10) + "." + id
}

// ParseToken returns the key a token names.
func ParseToken(token string) (string, error) {
	idx, id, ok := strings.Cut(token, ".")
	if !ok || id == "" || strings.IndexByte(id, 0) >= 0 {
		return "", fmt.Errorf("%w: %q", ErrBadToken, token)
	}
	n, err := strconv.ParseUint(idx, 10, 64)
	if err != nil {
		return "", fmt.Errorf("%w: %q", ErrBadToken, token)
	}
	return Key(n, id), nil
}
