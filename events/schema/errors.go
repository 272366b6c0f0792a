package schema

import "errors"

// ErrUnknownVersion is returned for a version a type never had: 0 where a
// version is required, or one above the type's current version.
var ErrUnknownVersion = errors.New("ordo: unknown event version")

// ErrUnsupported is returned for a Go type encoding/json cannot encode
// (channels, functions, complex numbers, maps with other than string,
// integer or text-marshalling keys).
var ErrUnsupported = errors.New("ordo: type has no JSON encoding")
