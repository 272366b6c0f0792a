package logtee

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Request is a monitor request's parameters, Nomad's: log_level (trace,
// debug, info, warn or error, any case; default info), log_json and plain.
type Request struct {
	Level slog.Level
	JSON  bool
	// Plain answers the lines as text instead of JSON frames.
	Plain bool
}

// ParamError is a monitor parameter that cannot be read.
type ParamError struct {
	Field, Reason string
}

func (e *ParamError) Error() string { return fmt.Sprintf("invalid %s: %s", e.Field, e.Reason) }

// LevelTrace is Nomad's trace level: below debug, so it gets every record.
const LevelTrace = slog.LevelDebug - 4

// ParseLevel reads a level name as Nomad's monitor does: trace, debug,
// info, warn (or warning) or error, in any case.
func ParseLevel(s string) (slog.Level, bool) {
	switch strings.ToLower(s) {
	case "trace":
		return LevelTrace, true
	case "debug":
		return slog.LevelDebug, true
	case "", "info":
		return slog.LevelInfo, true
	case "warn", "warning":
		return slog.LevelWarn, true
	case "error", "err":
		return slog.LevelError, true
	}
	return 0, false
}

// ParseRequest reads q's log_level, log_json and plain.
func ParseRequest(q url.Values) (Request, error) {
	var req Request
	lvl, ok := ParseLevel(q.Get("log_level"))
	if !ok {
		return req, &ParamError{"log_level", fmt.Sprintf("%q is not trace, debug, info, warn or error", q.Get("log_level"))}
	}
	req.Level = lvl
	for name, dst := range map[string]*bool{"log_json": &req.JSON, "plain": &req.Plain} {
		if v := q.Get(name); v != "" {
			b, err := strconv.ParseBool(v)
			if err != nil {
				return req, &ParamError{name, fmt.Sprintf("%q is not true or false", v)}
			}
			*dst = b
		}
	}
	return req, nil
}

// frame is Nomad's api.StreamFrame as the monitor sends it: a line's
// bytes in Data (base64 in JSON); {} is a heartbeat.
type frame struct {
	Data []byte `json:",omitempty"`
}

// Serve answers a monitor request: 200 at once, then every line logged
// at or above req.Level as a JSON frame (or, plain, as text), a line
// saying how many were dropped when the reader fell behind, and {} after
// heartbeat without a line (none when plain), until the request's
// context ends or a write fails.
func (t *Tee) Serve(w http.ResponseWriter, r *http.Request, req Request, heartbeat time.Duration) {
	sub := t.Subscribe(Options{Level: req.Level, JSON: req.JSON})
	defer sub.Close()
	rc := http.NewResponseController(w)
	enc := json.NewEncoder(w)
	write := func(line []byte) error {
		if req.Plain {
			_, err := w.Write(line)
			return err
		}
		return enc.Encode(frame{Data: line})
	}
	if req.Plain {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	} else {
		w.Header().Set("Content-Type", "application/json")
	}
	w.WriteHeader(http.StatusOK)
	_ = rc.Flush()
	beat := time.NewTicker(heartbeat)
	defer beat.Stop()
	for {
		var err error
		select {
		case <-r.Context().Done():
			return
		case line := <-sub.Lines():
			err = write(line)
			// Lines are dropped only while the buffer is full: once it is
			// drained, the reader hears of them after the lines before.
			if err == nil && len(sub.Lines()) == 0 {
				err = writeDropped(sub, write)
			}
		case <-beat.C:
			if err = writeDropped(sub, write); err == nil && !req.Plain {
				err = enc.Encode(frame{}) // heartbeat
			}
		}
		if err != nil {
			return
		}
		_ = rc.Flush() // a writer that cannot flush sends when its buffer fills; a broken one fails the next write
	}
}

// writeDropped writes the line telling how many lines were dropped since
// it last did, if any were.
func writeDropped(sub *Subscription, write func([]byte) error) error {
	if n := sub.Dropped(); n > 0 {
		return write(sub.DroppedLine(n))
	}
	return nil
}
