package commands

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
)

// DefaultBodyLimit bounds a request body unless a handler says otherwise.
const DefaultBodyLimit = 1 << 20

// DecodeJSON decodes one JSON value from r into dst, reading at most limit
// bytes. Malformed JSON and wrong types become a *ValidationError naming the
// field; a larger body a *TooLargeError.
func DecodeJSON(r io.Reader, limit int64, dst any) error {
	body, err := io.ReadAll(io.LimitReader(r, limit+1))
	if errors.Is(err, os.ErrDeadlineExceeded) { // the server's body deadline (httplimit)
		return Invalid("body", "not received in time: %v", err)
	}
	if err != nil {
		return fmt.Errorf("read body: %w", err)
	}
	if int64(len(body)) > limit {
		return &TooLargeError{Limit: limit}
	}
	if len(body) == 0 {
		return Invalid("body", "empty; expected a JSON object")
	}
	if err := json.Unmarshal(body, dst); err != nil {
		var te *json.UnmarshalTypeError
		var se *json.SyntaxError
		switch {
		case errors.As(err, &te):
			field := te.Field
			if field == "" {
				field = "body"
			}
			return Invalid(field, "expected %s, got JSON %s", te.Type, te.Value)
		case errors.As(err, &se):
			return Invalid("body", "malformed JSON at byte %d: %v", se.Offset, se)
		}
		return Invalid("body", "%v", err)
	}
	return nil
}
