package docker

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"sync"
	"syscall"

	"github.com/ordoplane/ordo/client/driver"
)

var _ driver.Execer = (*handle)(nil)

// Exec implements driver.Execer: req's command runs inside the task's
// container (docker exec), with the task's environment as the container
// sees it and the container's working directory (req.Dir, a host path,
// does not apply). When ctx ends the command's process is killed.
func (h *handle) Exec(ctx context.Context, req driver.ExecRequest) (int, error) {
	if len(req.Command) == 0 || req.Command[0] == "" {
		return -1, &driver.ConfigError{Key: "command", Reason: "is empty"}
	}
	select {
	case <-h.done:
		return -1, fmt.Errorf("docker: task %s has exited", h.t.id)
	default:
	}
	a := h.d.api
	var created struct {
		ID string `json:"Id"`
	}
	body := map[string]any{"AttachStdin": req.Stdin != nil, "AttachStdout": true, "AttachStderr": true,
		"Tty": req.TTY, "Cmd": req.Command, "Env": containerEnv(req.Env)}
	if err := a.call(ctx, http.MethodPost, "/containers/"+h.t.container+"/exec", nil, body, &created); err != nil {
		return -1, fmt.Errorf("docker: exec in task %s: %w", h.t.id, err)
	}
	conn, out, err := a.hijack(ctx, "/exec/"+created.ID+"/start", map[string]any{"Detach": false, "Tty": req.TTY})
	if err != nil {
		return -1, fmt.Errorf("docker: exec in task %s: %w", h.t.id, err)
	}
	defer conn.Close()
	stop := context.AfterFunc(ctx, func() {
		h.killExec(created.ID)
		conn.Close()
	})
	defer stop()
	var wg sync.WaitGroup
	if req.Stdin != nil {
		wg.Go(func() {
			_, _ = io.Copy(conn, req.Stdin)
			if cw, ok := conn.(interface{ CloseWrite() error }); ok {
				_ = cw.CloseWrite()
			}
		})
	}
	if req.TTY && req.Resize != nil {
		rctx, cancel := context.WithCancel(ctx)
		defer cancel()
		wg.Go(func() {
			for {
				select {
				case sz := <-req.Resize:
					q := url.Values{"h": {fmt.Sprint(sz.Height)}, "w": {fmt.Sprint(sz.Width)}}
					_ = a.call(rctx, http.MethodPost, "/exec/"+created.ID+"/resize", q, nil, nil)
				case <-rctx.Done():
					return
				}
			}
		})
	}
	stdout, stderr := orDiscard(req.Stdout), orDiscard(req.Stderr)
	if req.TTY {
		_, err = io.Copy(stdout, out)
	} else {
		err = demux(out, stdout, stderr)
	}
	if ctx.Err() != nil {
		return -1, fmt.Errorf("docker: exec in task %s: %w", h.t.id, ctx.Err())
	}
	if err != nil && !errors.Is(err, net.ErrClosed) {
		return -1, fmt.Errorf("docker: exec in task %s: %w", h.t.id, err)
	}
	if c, ok := req.Stdin.(io.Closer); ok {
		c.Close()
	}
	conn.Close()
	stop()
	wg.Wait()
	var info struct {
		Running  bool `json:"Running"`
		ExitCode int  `json:"ExitCode"`
	}
	if err := a.call(context.WithoutCancel(ctx), http.MethodGet, "/exec/"+created.ID+"/json", nil, nil, &info); err != nil {
		return -1, fmt.Errorf("docker: exec in task %s: %w", h.t.id, err)
	}
	return info.ExitCode, nil
}

// killExec kills an exec's process by its host pid (the Engine API has no
// call for it): the client runs on the daemon's host.
func (h *handle) killExec(id string) {
	ctx, cancel := context.WithTimeout(context.Background(), h.d.cfg.FingerprintTimeout)
	defer cancel()
	var info struct {
		Running bool `json:"Running"`
		Pid     int  `json:"Pid"`
	}
	if err := h.d.api.call(ctx, http.MethodGet, "/exec/"+id+"/json", nil, nil, &info); err == nil && info.Running && info.Pid > 0 {
		_ = syscall.Kill(info.Pid, syscall.SIGKILL)
	}
}

func orDiscard(w io.Writer) io.Writer {
	if w == nil {
		return io.Discard
	}
	return w
}

// hijack POSTs body to path asking the daemon to upgrade the connection
// to a raw stream, and returns the connection and the stream to read
// (the connection, after what the response's reader buffered).
func (a *api) hijack(ctx context.Context, path string, body any) (net.Conn, io.Reader, error) {
	b, err := json.Marshal(body)
	if err != nil {
		return nil, nil, err
	}
	conn, err := a.dial(ctx, "", "")
	if err != nil {
		return nil, nil, err
	}
	req, err := http.NewRequest(http.MethodPost, "http://docker/"+apiVersion+path, bytes.NewReader(b))
	if err != nil {
		conn.Close()
		return nil, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Connection", "Upgrade")
	req.Header.Set("Upgrade", "tcp")
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	if err := req.Write(conn); err != nil {
		conn.Close()
		return nil, nil, err
	}
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, req)
	if err != nil {
		conn.Close()
		return nil, nil, err
	}
	if resp.StatusCode != http.StatusSwitchingProtocols && resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		conn.Close()
		return nil, nil, &apiError{Status: resp.StatusCode, Message: string(bytes.TrimSpace(msg))}
	}
	return conn, br, nil
}
