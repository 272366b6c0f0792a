package httpapi

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ordoplane/ordo/client/allocrunner"
)

// The log streams of a task.
const (
	StreamStdout = "stdout"
	StreamStderr = "stderr"
)

// OffsetHeader carries, on a logs answer, the offset from the start of
// the stream (over every file kept) at which the answer begins.
const OffsetHeader = "X-Ordo-Log-Offset"

// frameSize bounds the data of one frame (or one write of plain output).
const frameSize = 64 << 10

// StreamFrame is one frame of a logs answer, Nomad's api.StreamFrame:
// Data (base64 in JSON) read from File (relative to the allocation
// directory, alloc/logs/<task>.<type>[.<n>]), Offset the offset in File
// just after Data. A frame with nothing set is a heartbeat.
type StreamFrame struct {
	Offset    int64  `json:",omitempty"`
	Data      []byte `json:",omitempty"`
	File      string `json:",omitempty"`
	FileEvent string `json:",omitempty"`
}

// logsRequest is the parameters of a logs request.
type logsRequest struct {
	task, stream  string
	offset        int64
	fromEnd       bool
	follow, plain bool
}

// parseLogs reads the query of a logs request for alloc a.
func parseLogs(r *http.Request, a Alloc) (logsRequest, error) {
	q := r.URL.Query()
	lr := logsRequest{task: q.Get("task"), stream: q.Get("type")}
	tasks := a.Tasks()
	switch {
	case lr.task == "" && len(tasks) == 1:
		lr.task = tasks[0]
	case lr.task == "":
		return lr, invalid("task", "missing: the allocation runs tasks %s; name one", strings.Join(tasks, ", "))
	case !slices.Contains(tasks, lr.task):
		return lr, &apiError{Status: http.StatusNotFound,
			Message: fmt.Sprintf("task %q not found in allocation %s (its tasks: %s)", lr.task, r.PathValue("alloc_id"), strings.Join(tasks, ", "))}
	}
	switch lr.stream {
	case "":
		lr.stream = StreamStdout
	case StreamStdout, StreamStderr:
	default:
		return lr, invalid("type", "%q is not stdout or stderr", lr.stream)
	}
	switch o := q.Get("origin"); o {
	case "", "start":
	case "end":
		lr.fromEnd = true
	default:
		return lr, invalid("origin", "%q is not start or end", o)
	}
	if v := q.Get("offset"); v != "" {
		off, err := strconv.ParseInt(v, 10, 64)
		if err != nil || off < 0 {
			return lr, invalid("offset", "%q is not a number of bytes", v)
		}
		lr.offset = off
	}
	for name, dst := range map[string]*bool{"follow": &lr.follow, "plain": &lr.plain} {
		if v := q.Get(name); v != "" {
			b, err := strconv.ParseBool(v)
			if err != nil {
				return lr, invalid(name, "%q is not true or false", v)
			}
			*dst = b
		}
	}
	return lr, nil
}

// logs is GET /v1/client/fs/logs/{alloc_id}: a task's log stream, from
// its oldest rotated file to its current one, as JSON frames or (plain)
// raw bytes; following, it keeps sending what the task appends until the
// task is dead for good and all it wrote was sent, or the caller leaves.
func (s *Server) logs(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("alloc_id")
	a, ok := s.cfg.Allocs.Alloc(id)
	if !ok {
		writeError(w, &apiError{Status: http.StatusNotFound, Message: fmt.Sprintf("allocation %q not found on this client", id)})
		return
	}
	lr, err := parseLogs(r, a)
	if err != nil {
		writeError(w, err)
		return
	}
	rd, start, err := newLogReader(a.LogPath(lr.task, lr.stream), lr.offset, lr.fromEnd)
	if err != nil {
		writeError(w, fmt.Errorf("read logs of task %q: %w", lr.task, err))
		return
	}
	w.Header().Set(OffsetHeader, strconv.FormatInt(start, 10))
	var out sink = &frameSink{w: w, enc: json.NewEncoder(w)}
	if lr.plain {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		out = plainSink{w}
	} else {
		w.Header().Set("Content-Type", "application/json")
	}
	w.WriteHeader(http.StatusOK)
	flush := func() { _ = http.NewResponseController(w).Flush() }
	flush()
	if err := s.stream(r.Context(), id, a, lr, rd, out, flush); err != nil {
		s.log.Debug("logs stream ended", "alloc_id", id, "task", lr.task, "err", err)
	}
}

// sink is where a stream's data goes.
type sink interface {
	send(c chunk) error
	heartbeat() error
}

// plainSink writes raw bytes.
type plainSink struct{ w http.ResponseWriter }

func (p plainSink) send(c chunk) error {
	_, err := p.w.Write(c.data)
	return err
}

func (plainSink) heartbeat() error { return nil }

// frameSink writes JSON frames.
type frameSink struct {
	w   http.ResponseWriter
	enc *json.Encoder
}

func (f *frameSink) send(c chunk) error {
	return f.enc.Encode(StreamFrame{Offset: c.end, Data: c.data,
		File: filepath.Join(allocrunner.SharedDir, "logs", filepath.Base(c.file))})
}

func (f *frameSink) heartbeat() error { return f.enc.Encode(StreamFrame{}) }

// stream sends what rd reads to out; following, it reads again every
// PollInterval until the task is done and everything was sent, the
// allocation is gone, or ctx ends.
func (s *Server) stream(ctx context.Context, id string, a Alloc, lr logsRequest, rd *logReader, out sink, flush func()) error {
	buf := make([]byte, frameSize)
	var idle time.Duration
	for {
		// Whether the task is done is read before the files, so what it
		// wrote before it ended is read below.
		done := !lr.follow || a.TaskDone(lr.task)
		sent := false
		for {
			if err := ctx.Err(); err != nil {
				return err
			}
			c, err := rd.read(buf, !done)
			if err != nil {
				return err
			}
			if len(c.data) == 0 {
				break
			}
			if err := out.send(c); err != nil {
				return err
			}
			sent = true
		}
		if sent {
			flush()
			idle = 0
		}
		if done {
			return nil
		}
		if !sent {
			if idle += s.cfg.PollInterval; idle >= s.cfg.HeartbeatInterval {
				if err := out.heartbeat(); err != nil {
					return err
				}
				flush()
				idle = 0
			}
		}
		if err := s.pollWait(ctx); err != nil {
			return err
		}
		if _, ok := s.cfg.Allocs.Alloc(id); !ok {
			return fmt.Errorf("allocation %s is gone", id)
		}
	}
}

// pollWait waits PollInterval on the clock; ctx's error if it ends first.
func (s *Server) pollWait(ctx context.Context) error {
	t := s.cfg.Clock.NewTimer(s.cfg.PollInterval)
	defer t.Stop()
	select {
	case <-t.C():
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
