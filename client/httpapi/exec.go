package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/gorilla/websocket"

	"github.com/ordoplane/ordo/api"
	"github.com/ordoplane/ordo/client/driver"
)

// execUpgrader upgrades exec requests; the handshake must finish within
// its timeout, after which the session has no deadline (net/http clears
// them when the connection is taken over; the caller sends a heartbeat
// every 10 s and the command may run for as long as it needs).
var execUpgrader = websocket.Upgrader{HandshakeTimeout: 10 * time.Second}

// exec is GET /v1/client/allocation/{alloc_id}/exec?task=&command=&tty=,
// Nomad's exec websocket: command (a JSON array) runs beside the task, in
// its environment and working directory; the caller sends api.ExecInput
// frames (stdin, its end, terminal sizes, heartbeats) and receives
// api.ExecOutput frames (stdout, stderr, then the exit code). An error
// after the upgrade ends the session with a close frame whose text says
// it. The command is killed when the caller goes away.
func (s *Server) exec(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	var command []string
	if err := json.Unmarshal([]byte(q.Get("command")), &command); err != nil || len(command) == 0 || command[0] == "" {
		writeError(w, invalid("command", "want a JSON array naming a program and its arguments, got %q", q.Get("command")))
		return
	}
	tty := false
	if v := q.Get("tty"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			writeError(w, invalid("tty", "%q is not true or false", v))
			return
		}
		tty = b
	}
	_, c, err := s.controls(r)
	if err != nil {
		writeError(w, err)
		return
	}
	conn, err := execUpgrader.Upgrade(w, r, nil)
	if err != nil {
		return // the upgrader answered the caller
	}
	defer conn.Close() // the upgrade left the connection without deadlines

	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	stdinR, stdinW := io.Pipe()
	resize := make(chan driver.TerminalSize, 1)
	var wg sync.WaitGroup
	wg.Go(func() {
		defer cancel() // the caller went away: the command is killed
		readExecInput(conn, stdinW, resize)
	})
	out := &execWriter{conn: conn, now: s.cfg.Clock.Now}
	code, err := c.Exec(ctx, q.Get("task"), driver.ExecRequest{Command: command, TTY: tty, Stdin: stdinR,
		Stdout: out.stream(true), Stderr: out.stream(false), Resize: resize})
	stdinR.Close()
	if err != nil {
		s.log.Debug("exec", "alloc_id", r.PathValue("alloc_id"), "task", q.Get("task"), "err", taskError("task", err))
		out.close(websocket.CloseInternalServerErr, taskError("task", err).Error())
	} else {
		out.send(api.ExecOutput{Exited: true, Result: &api.ExecExitResult{ExitCode: code}})
		out.close(websocket.CloseNormalClosure, "")
	}
	conn.Close() // ends the reader
	wg.Wait()
}

// readExecInput copies the caller's frames: stdin to stdin (closed at the
// caller's end of input or of the connection), sizes to resize.
func readExecInput(conn *websocket.Conn, stdin *io.PipeWriter, resize chan driver.TerminalSize) {
	defer stdin.Close()
	for {
		var in api.ExecInput
		if err := conn.ReadJSON(&in); err != nil {
			return
		}
		switch {
		case in.Stdin != nil:
			if len(in.Stdin.Data) > 0 {
				if _, err := stdin.Write(in.Stdin.Data); err != nil {
					continue // the command closed its stdin; keep reading for sizes
				}
			}
			if in.Stdin.Close {
				stdin.Close()
			}
		case in.TTYSize != nil:
			select {
			case <-resize: // the newest size wins
			default:
			}
			resize <- driver.TerminalSize{Height: in.TTYSize.Height, Width: in.TTYSize.Width}
		}
	}
}

// execWriter writes output frames to the session, one at a time.
type execWriter struct {
	mu   sync.Mutex
	conn *websocket.Conn
	// failed is set once a write failed: the caller is gone.
	failed bool
	// now is the server's clock, for write deadlines.
	now func() time.Time
}

func (e *execWriter) send(out api.ExecOutput) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.failed {
		return errors.New("exec: the caller went away")
	}
	_ = e.conn.SetWriteDeadline(e.now().Add(30 * time.Second))
	if err := e.conn.WriteJSON(out); err != nil {
		e.failed = true
		return fmt.Errorf("exec: write frame: %w", err)
	}
	return nil
}

func (e *execWriter) close(code int, text string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(text) > 120 {
		text = text[:120] // a close frame's text is at most 123 bytes
	}
	_ = e.conn.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(code, text), e.now().Add(5*time.Second))
}

// stream returns a writer of stdout (or stderr) frames.
func (e *execWriter) stream(stdout bool) io.Writer {
	return execStream{e, stdout}
}

type execStream struct {
	e      *execWriter
	stdout bool
}

func (s execStream) Write(p []byte) (int, error) {
	op := &api.ExecIO{Data: append([]byte(nil), p...)}
	out := api.ExecOutput{Stderr: op}
	if s.stdout {
		out = api.ExecOutput{Stdout: op}
	}
	if err := s.e.send(out); err != nil {
		return 0, err
	}
	return len(p), nil
}
