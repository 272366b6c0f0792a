package commands

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/fsm"
)

// ErrNoLeader is returned when no leader is known to take a write.
var ErrNoLeader = errors.New("ordo: no cluster leader")

// ValidationError is invalid input; it maps to 400 and names the field.
type ValidationError struct {
	Field  string
	Reason string
}

func (e *ValidationError) Error() string { return fmt.Sprintf("invalid %s: %s", e.Field, e.Reason) }

// Invalid returns a *ValidationError.
func Invalid(field, format string, args ...any) error {
	return &ValidationError{Field: field, Reason: fmt.Sprintf(format, args...)}
}

// NotFoundError is a request about something that does not exist; 404.
type NotFoundError struct {
	Kind string
	ID   string
}

func (e *NotFoundError) Error() string { return fmt.Sprintf("%s %q not found", e.Kind, e.ID) }

// ConflictError is a precondition that failed at apply or a state that
// forbids the request; 409.
type ConflictError struct {
	Precondition events.Precondition
	Reason       string
}

func (e *ConflictError) Error() string {
	if e.Precondition.Table == "" {
		return "conflict: " + e.Reason
	}
	return fmt.Sprintf("conflict: %s/%s %s: %s", e.Precondition.Table, e.Precondition.Key, e.Precondition.Op, e.Reason)
}

// ForbiddenError refuses a caller whose token does not allow the request
// (403, as Nomad answers "Permission denied" and "ACL token not found").
type ForbiddenError struct{ Reason string }

func (e *ForbiddenError) Error() string { return e.Reason }

// TooLargeError is a request body over the limit; 413.
type TooLargeError struct{ Limit int64 }

func (e *TooLargeError) Error() string { return fmt.Sprintf("request body exceeds %d bytes", e.Limit) }

// Status returns the HTTP status for err.
func Status(err error) int {
	var (
		ve *ValidationError
		nf *NotFoundError
		ce *ConflictError
		tl *TooLargeError
		re *fsm.RejectedError
	)
	switch {
	case errors.As(err, &ve):
		return http.StatusBadRequest
	case errors.As(err, &nf), errors.Is(err, projections.ErrNotFound):
		return http.StatusNotFound
	case errors.As(err, &ce), errors.As(err, &re):
		return http.StatusConflict
	case errors.As(err, new(*ForbiddenError)):
		return http.StatusForbidden
	case errors.As(err, &tl):
		return http.StatusRequestEntityTooLarge
	case errors.Is(err, ErrNoLeader):
		return http.StatusServiceUnavailable
	}
	return http.StatusInternalServerError
}
