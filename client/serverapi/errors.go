package serverapi

import (
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/ordoplane/ordo/api"
)

// ErrNodeNotFound is wrapped by the error of a heartbeat or alloc update
// for a node the servers do not know: register again.
var ErrNodeNotFound = errors.New("serverapi: node is not registered")

// AllocIndex returns i and the servers' reason when err holds the 400 of
// an alloc update refusing the update at index i of the request
// ("Allocs[i].ID"), as for an allocation the servers do not have (or that
// is not on the node).
func AllocIndex(err error) (i int, reason string, ok bool) {
	e, ok := errors.AsType[*api.Error](err)
	if !ok || e.Status != http.StatusBadRequest {
		return 0, "", false
	}
	rest, ok := strings.CutPrefix(e.Field, "Allocs[")
	if !ok {
		return 0, "", false
	}
	num, tail, ok := strings.Cut(rest, "]")
	if !ok || tail != ".ID" {
		return 0, "", false
	}
	i, err = strconv.Atoi(num)
	return i, e.Reason, err == nil && i >= 0
}
