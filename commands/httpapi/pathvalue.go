package httpapi

import (
	"net/http"

	"github.com/ordoplane/ordo/commands"
)

// pathValue reconciles a body field with the path value it names: an empty
// field takes the path's value, and another value is refused as field's
// error.
func pathValue(r *http.Request, name, field string, body *string) error {
	v := r.PathValue(name)
	if *body == "" {
		*body = v
	}
	if *body != v {
		return commands.Invalid(field, "%q does not match the %s in the path, %q", *body, name, v)
	}
	return nil
}
