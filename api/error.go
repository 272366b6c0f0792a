package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// maxErrorBody bounds how much of an error answer is read.
const maxErrorBody = 64 << 10

// ErrNoServers is wrapped by the error of a call no server answered: each
// could not be reached or answered 5xx.
var ErrNoServers = errors.New("api: no server answered")

// ErrDecode is wrapped by the error of a 2xx answer whose body or
// X-Nomad-Index could not be decoded.
var ErrDecode = errors.New("api: cannot decode the answer")

// ErrorBody is the JSON shape of every error answer of the API.
type ErrorBody struct {
	// Error is the description of the error.
	Error string
	// Field and Reason name the invalid input of a 400.
	Field  string `json:",omitempty"`
	Reason string `json:",omitempty"`
	// Status is the HTTP status code.
	Status int
}

// Error is an answer other than 2xx: the fields of its ErrorBody, or the
// status and text when the body is not one.
type Error struct {
	// Method and Path are the request's.
	Method, Path string
	// Status is the HTTP status code.
	Status int
	// Message is the server's description of the error.
	Message string
	// Field and Reason name the invalid input of a 400.
	Field, Reason string
}

// Error implements error: the server's message.
func (e *Error) Error() string { return e.Message }

// NotFound reports whether the server answered 404.
func (e *Error) NotFound() bool { return e.Status == http.StatusNotFound }

// IsNotFound reports whether err holds an *Error answering 404.
func IsNotFound(err error) bool {
	e, ok := errors.AsType[*Error](err)
	return ok && e.NotFound()
}

// decodeError reads an error answer: an ErrorBody when there is one,
// else the status and the start of the body.
func decodeError(method, path string, resp *http.Response) *Error {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	e := &Error{Method: method, Path: path, Status: resp.StatusCode}
	var body ErrorBody
	if json.Unmarshal(b, &body) == nil && body.Error != "" {
		e.Message, e.Field, e.Reason = body.Error, body.Field, body.Reason
		if body.Status != 0 {
			e.Status = body.Status
		}
		return e
	}
	text := strings.TrimSpace(string(b))
	if text == "" {
		text = http.StatusText(resp.StatusCode)
	}
	e.Message = fmt.Sprintf("unexpected response %d: %s", resp.StatusCode, text)
	return e
}
