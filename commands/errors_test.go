package commands_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/fsm"
)

func TestStatus(t *testing.T) {
	pre := events.Precondition{Table: "namespaces", Key: "payments", Op: events.Exists}
	for _, tc := range []struct {
		name string
		err  error
		want int
	}{
		{"validation", commands.Invalid("Name", "bad"), http.StatusBadRequest},
		{"validation literal", &commands.ValidationError{Field: "wait", Reason: "bad"}, http.StatusBadRequest},
		{"not found", &commands.NotFoundError{Kind: "namespace", ID: "x"}, http.StatusNotFound},
		{"projection not found", projections.ErrNotFound, http.StatusNotFound},
		{"conflict", &commands.ConflictError{Precondition: pre, Reason: "does not exist"}, http.StatusConflict},
		{"conflict without precondition", &commands.ConflictError{Reason: "in use"}, http.StatusConflict},
		{"rejected at apply", &fsm.RejectedError{Precondition: pre, Reason: "does not exist"}, http.StatusConflict},
		{"too large", &commands.TooLargeError{Limit: 10}, http.StatusRequestEntityTooLarge},
		{"no leader", commands.ErrNoLeader, http.StatusServiceUnavailable},
		{"other", errors.New("disk on fire"), http.StatusInternalServerError},
		{"context canceled", context.Canceled, http.StatusInternalServerError},
		{"nil", nil, http.StatusInternalServerError},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := commands.Status(tc.err); got != tc.want {
				t.Fatalf("Status(%v) = %d, want %d", tc.err, got, tc.want)
			}
			if tc.err == nil {
				return
			}
			// The pipeline prefixes errors with the command name; the
			// status must survive wrapping, once or twice.
			wrapped := fmt.Errorf("namespace.apply: %w", fmt.Errorf("decide: %w", tc.err))
			if got := commands.Status(wrapped); got != tc.want {
				t.Fatalf("Status(wrapped %v) = %d, want %d", tc.err, got, tc.want)
			}
		})
	}
}

func TestErrorMessages(t *testing.T) {
	pre := events.Precondition{Table: "namespaces", Key: "payments", Op: events.Exists}
	for _, tc := range []struct {
		err  error
		want []string
	}{
		{commands.Invalid("Name", "%q is bad", "x_y"), []string{"Name", `"x_y" is bad`}},
		{&commands.NotFoundError{Kind: "namespace", ID: "payments"}, []string{"namespace", `"payments"`, "not found"}},
		{&commands.ConflictError{Precondition: pre, Reason: "does not exist"}, []string{"namespaces/payments", "exists", "does not exist"}},
		{&commands.ConflictError{Reason: "in use"}, []string{"conflict", "in use"}},
		{&commands.TooLargeError{Limit: 1 << 20}, []string{"1048576"}},
	} {
		msg := tc.err.Error()
		for _, w := range tc.want {
			if !strings.Contains(msg, w) {
				t.Errorf("%T.Error() = %q, want it to contain %q", tc.err, msg, w)
			}
		}
	}
	var ve *commands.ValidationError
	if !errors.As(commands.Invalid("Meta", "keys must not be empty"), &ve) || ve.Field != "Meta" || ve.Reason != "keys must not be empty" {
		t.Fatalf("Invalid built %+v", ve)
	}
}
