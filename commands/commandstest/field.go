package commandstest

import (
	"errors"
	"testing"

	"github.com/ordoplane/ordo/commands"
)

// WantField fails t unless err is a *commands.ValidationError naming field
// with a reason.
func WantField(t testing.TB, err error, field string) {
	t.Helper()
	var ve *commands.ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("err = %v (%T), want *commands.ValidationError", err, err)
	}
	if ve.Field != field {
		t.Fatalf("Field = %q, want %q (%v)", ve.Field, field, err)
	}
	if ve.Reason == "" {
		t.Fatalf("empty Reason in %v", err)
	}
}
