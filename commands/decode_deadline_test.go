package commands_test

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/ordoplane/ordo/commands"
)

// TestDecodeJSONBodyDeadline: a body cut off by the server's body
// deadline is a 400 naming the body, not a 500.
func TestDecodeJSONBodyDeadline(t *testing.T) {
	r := io.MultiReader(strings.NewReader(`{"Name":`), errReader{fmt.Errorf("read tcp: %w", os.ErrDeadlineExceeded)})
	var v struct{ Name string }
	err := commands.DecodeJSON(r, commands.DefaultBodyLimit, &v)
	var ve *commands.ValidationError
	if !errors.As(err, &ve) || ve.Field != "body" || commands.Status(err) != 400 {
		t.Fatalf("err = %v (status %d), want a 400 naming body", err, commands.Status(err))
	}
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }
