package httpapi

import (
	"net/http"
	"strings"

	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/commands/namespace"
	"github.com/ordoplane/ordo/commands/variables"
)

// MaxCommandIDLen bounds an Idempotency-Key (or X-Ordo-Command-Id), in
// bytes: the key is stored with the command's events.
const MaxCommandIDLen = 128

// commandIDHeaders name a write's command identity (request in server.go).
var commandIDHeaders = []string{"Idempotency-Key", "X-Ordo-Command-Id"}

// checkParams refuses, before any route runs, what no route accepts: a
// path that is not clean (a doubled '/', a '.' or '..' segment: net/http
// would redirect it to another resource), a namespace parameter that
// names no possible namespace, and a write's command identity that is
// too long or not printable ASCII. Each is a *commands.ValidationError
// naming the field.
func checkParams(r *http.Request) error {
	if err := checkPath(r); err != nil {
		return err
	}
	if ns := r.URL.Query().Get("namespace"); ns != "" && ns != "*" {
		if err := namespace.ValidName("namespace", ns); err != nil {
			return err
		}
	}
	switch r.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		return nil
	}
	for _, h := range commandIDHeaders {
		if err := ValidCommandID(h, r.Header.Get(h)); err != nil {
			return err
		}
	}
	return nil
}

// ValidCommandID returns a *commands.ValidationError naming field when id
// (a write's Idempotency-Key) is over MaxCommandIDLen bytes or holds a
// byte that is not printable ASCII (a control character, anything past
// '~'); "" (none) is valid.
func ValidCommandID(field, id string) error {
	if len(id) > MaxCommandIDLen {
		return commands.Invalid(field, "%d bytes exceeds %d", len(id), MaxCommandIDLen)
	}
	for i := 0; i < len(id); i++ {
		if c := id[i]; c < ' ' || c > '~' {
			return commands.Invalid(field, "byte %d is %q: keys are printable ASCII", i, c)
		}
	}
	return nil
}

// checkPath refuses a request path with an empty, '.' or '..' segment
// past its first '/'. A variable path is checked as variables do, so the
// reason is theirs.
func checkPath(r *http.Request) error {
	p := r.URL.EscapedPath()
	if !strings.Contains(p, "//") && !strings.Contains(p, "/./") && !strings.Contains(p, "/../") &&
		!strings.HasSuffix(p, "/.") && !strings.HasSuffix(p, "/..") {
		return nil
	}
	if rest, ok := strings.CutPrefix(r.URL.Path, "/v1/var/"); ok {
		if err := variables.ValidPath("path", rest); err != nil {
			return err
		}
	}
	return commands.Invalid("path", "%q has an empty, '.' or '..' segment", r.URL.Path)
}
