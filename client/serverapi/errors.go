package serverapi

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
)

var (
	// ErrNoServers is wrapped by the error of a call no server answered.
	ErrNoServers = errors.New("serverapi: no server answered")
	// ErrNodeNotFound is wrapped by the error of a heartbeat or alloc
	// update for a node the servers do not know: register again.
	ErrNodeNotFound = errors.New("serverapi: node is not registered")
)

// HTTPError is a 4xx answer of a server, with the fields of its error body.
type HTTPError struct {
	Method, Path string
	Status       int
	// Message is the server's error text.
	Message string
	// Field and Reason name the invalid input of a 400.
	Field, Reason string
}

// Error implements error.
func (e *HTTPError) Error() string {
	return fmt.Sprintf("serverapi: %s %s: %d %s", e.Method, e.Path, e.Status, e.Message)
}

// NotFound reports whether the server answered 404.
func (e *HTTPError) NotFound() bool { return e.Status == http.StatusNotFound }

// AllocIndex returns i when the error names the alloc update at index i
// of the request ("Allocs[i].ID"), as a 400 for an allocation the servers
// do not have (or that is not on the node) does.
func (e *HTTPError) AllocIndex() (int, bool) {
	if e.Status != http.StatusBadRequest {
		return 0, false
	}
	rest, ok := strings.CutPrefix(e.Field, "Allocs[")
	if !ok {
		return 0, false
	}
	num, tail, ok := strings.Cut(rest, "]")
	if !ok || tail != ".ID" {
		return 0, false
	}
	i, err := strconv.Atoi(num)
	return i, err == nil && i >= 0
}
