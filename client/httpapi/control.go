package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/ordoplane/ordo/api"
	"github.com/ordoplane/ordo/client/allocrunner"
	"github.com/ordoplane/ordo/client/driver"
)

// Controls are what an allocation offers beside its logs and status: its
// directory, restart, signal, exec and its tasks' processes. Runners'
// allocations have them; an Alloc without them answers 501 on those
// routes.
type Controls interface {
	// Dir returns the allocation's directory.
	Dir() string
	// Restart, Signal and Exec are allocrunner.Runner's.
	Restart(task string, all bool) error
	Signal(task, sig string) error
	Exec(ctx context.Context, task string, req driver.ExecRequest) (int, error)
	// TaskPIDs returns the main process of each running task that is a
	// process group of the host.
	TaskPIDs() map[string]int
}

// Collector collects terminal allocations on request: client.Client.
type Collector interface {
	// CollectAlloc removes terminal allocation id now.
	CollectAlloc(id string) error
	// CollectAll removes every terminal allocation and returns how many.
	CollectAll() int
}

var _ Controls = runnerAlloc{}

func (a runnerAlloc) Dir() string                         { return a.r.Dir().Dir }
func (a runnerAlloc) Restart(task string, all bool) error { return a.r.Restart(task, all) }
func (a runnerAlloc) Signal(task, sig string) error       { return a.r.Signal(task, sig) }
func (a runnerAlloc) TaskPIDs() map[string]int            { return a.r.TaskPIDs() }
func (a runnerAlloc) Exec(ctx context.Context, task string, req driver.ExecRequest) (int, error) {
	return a.r.Exec(ctx, task, req)
}

// controls returns the allocation of the path's alloc_id and its
// controls: 404 for an allocation this client does not hold, 501 when it
// has no controls.
func (s *Server) controls(r *http.Request) (Alloc, Controls, error) {
	id := r.PathValue("alloc_id")
	a, ok := s.cfg.Allocs.Alloc(id)
	if !ok {
		return nil, nil, &apiError{Status: http.StatusNotFound, Message: fmt.Sprintf("allocation %q not found on this client", id)}
	}
	c, ok := a.(Controls)
	if !ok {
		return nil, nil, &apiError{Status: http.StatusNotImplemented, Message: fmt.Sprintf("allocation %q offers no controls on this client", id)}
	}
	return a, c, nil
}

// taskError maps an allocrunner error about field's task to its answer:
// 404 for a task the allocation does not have, 400 naming field for one
// that is not running or cannot do what was asked.
func taskError(field string, err error) error {
	switch {
	case errors.Is(err, allocrunner.ErrNoSuchTask):
		return &apiError{Status: http.StatusNotFound, Message: err.Error(), Field: field, Reason: err.Error()}
	case errors.Is(err, allocrunner.ErrTaskNotRunning), errors.Is(err, allocrunner.ErrExecUnsupported):
		return invalid(field, "%v", err)
	case errors.As(err, new(*driver.ConfigError)):
		return invalid(field, "%v", err)
	}
	return err
}

// decodeBody decodes r's JSON body into v (an empty body leaves v zero).
func decodeBody(r *http.Request, v any) error {
	err := json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(v)
	if err != nil && !errors.Is(err, io.EOF) {
		return invalid("body", "%v", err)
	}
	return nil
}

// restart is PUT|POST /v1/client/allocation/{alloc_id}/restart with an
// api.AllocRestartRequest: the task (or every running one) restarts at
// once, recorded as a Restart Signaled event.
func (s *Server) restart(w http.ResponseWriter, r *http.Request) {
	var req api.AllocRestartRequest
	err := decodeBody(r, &req)
	var c Controls
	if err == nil {
		_, c, err = s.controls(r)
	}
	if err == nil {
		err = taskError("TaskName", c.Restart(req.TaskName, req.AllTasks))
	}
	s.answer(w, api.GenericResponse{}, err)
}

// signal is PUT|POST /v1/client/allocation/{alloc_id}/signal with an
// api.AllocSignalRequest; Signal defaults to SIGKILL, as Nomad's.
func (s *Server) signal(w http.ResponseWriter, r *http.Request) {
	var req api.AllocSignalRequest
	err := decodeBody(r, &req)
	var c Controls
	if err == nil {
		_, c, err = s.controls(r)
	}
	if req.Signal == "" {
		req.Signal = "SIGKILL"
	}
	if err == nil {
		if _, perr := driver.ParseSignal(req.Signal); perr != nil {
			err = invalid("Signal", "%v", perr)
		}
	}
	if err == nil {
		err = taskError("Task", c.Signal(req.Task, req.Signal))
	}
	s.answer(w, api.GenericResponse{}, err)
}

// allocGC is GET|PUT /v1/client/allocation/{alloc_id}/gc: the terminal
// allocation's directory and record are removed now.
func (s *Server) allocGC(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("alloc_id")
	if s.cfg.Collector == nil {
		s.answer(w, nil, &apiError{Status: http.StatusNotImplemented, Message: "this client collects no allocations on request"})
		return
	}
	if _, ok := s.cfg.Allocs.Alloc(id); !ok {
		s.answer(w, nil, &apiError{Status: http.StatusNotFound, Message: fmt.Sprintf("allocation %q not found on this client", id)})
		return
	}
	if err := s.cfg.Collector.CollectAlloc(id); err != nil {
		s.answer(w, nil, invalid("alloc_id", "%v", err))
		return
	}
	s.answer(w, struct{}{}, nil)
}

// clientGC is GET|PUT /v1/client/gc: every terminal allocation is
// collected now. The answer is empty, as Nomad's (its client decodes
// nothing from it).
func (s *Server) clientGC(w http.ResponseWriter, r *http.Request) {
	if s.cfg.Collector == nil {
		s.answer(w, nil, &apiError{Status: http.StatusNotImplemented, Message: "this client collects no allocations on request"})
		return
	}
	n := s.cfg.Collector.CollectAll()
	s.log.Info("allocations collected on request", "count", n)
	w.WriteHeader(http.StatusOK)
}

// answer writes v as JSON, or err.
func (s *Server) answer(w http.ResponseWriter, v any, err error) {
	if err != nil {
		writeError(w, err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	if err := json.NewEncoder(w).Encode(v); err != nil {
		s.log.Debug("write answer", "err", err)
	}
}
