package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/gorilla/websocket"
)

// AllocFileInfo is one file of an allocation's directory, as
// GET /v1/client/fs/ls/{alloc} lists and /v1/client/fs/stat/{alloc}
// answers it: Nomad's api.AllocFileInfo.
type AllocFileInfo struct {
	Name        string
	IsDir       bool
	Size        int64
	FileMode    string
	ModTime     time.Time
	ContentType string
}

// MemoryStats is a task's memory use in bytes (Nomad's api.MemoryStats);
// Measured names the fields that were measured.
type MemoryStats struct {
	RSS            uint64
	Cache          uint64
	Swap           uint64
	Usage          uint64
	MaxUsage       uint64
	KernelUsage    uint64
	KernelMaxUsage uint64
	Measured       []string
}

// CpuStats is a task's CPU use (Nomad's api.CpuStats): SystemMode,
// UserMode and Percent are percentages of one core over the last
// sampling interval, TotalTicks the MHz consumed.
type CpuStats struct {
	SystemMode       float64
	UserMode         float64
	TotalTicks       float64
	ThrottledPeriods uint64
	ThrottledTime    uint64
	Percent          float64
	Measured         []string
}

// ResourceUsage is the memory and CPU use of a task or of a process.
type ResourceUsage struct {
	MemoryStats *MemoryStats
	CpuStats    *CpuStats
}

// TaskResourceUsage is one task's use, with each of its processes' by pid.
type TaskResourceUsage struct {
	ResourceUsage *ResourceUsage
	Timestamp     int64
	Pids          map[string]*ResourceUsage
}

// AllocResourceUsage answers GET /v1/client/allocation/{id}/stats:
// Nomad's api.AllocResourceUsage, the sum of the tasks' use and each
// task's. Timestamp is in Unix nanoseconds.
type AllocResourceUsage struct {
	ResourceUsage *ResourceUsage
	Tasks         map[string]*TaskResourceUsage
	Timestamp     int64
}

// HostMemoryStats is the host's memory in bytes.
type HostMemoryStats struct {
	Total     uint64
	Available uint64
	Used      uint64
	Free      uint64
}

// HostCPUStats is one core's use in percent over the last sampling
// interval (since boot for the first sample).
type HostCPUStats struct {
	CPU    string
	User   float64
	System float64
	Idle   float64
}

// HostDiskStats is one mounted filesystem's use.
type HostDiskStats struct {
	Device            string
	Mountpoint        string
	Size              uint64
	Used              uint64
	Available         uint64
	UsedPercent       float64
	InodesUsedPercent float64
}

// HostStats answers GET /v1/client/stats: Nomad's api.HostStats.
// Uptime is in seconds, Timestamp in Unix nanoseconds.
type HostStats struct {
	Memory           *HostMemoryStats
	CPU              []*HostCPUStats
	DiskStats        []*HostDiskStats
	AllocDirStats    *HostDiskStats
	Uptime           uint64
	CPUTicksConsumed float64
	Timestamp        int64
}

// AllocRestartRequest is the body of PUT /v1/client/allocation/{id}/restart:
// TaskName restarts that task; AllTasks every task, dead ones included;
// neither restarts every running task.
type AllocRestartRequest struct {
	TaskName string
	AllTasks bool
}

// AllocSignalRequest is the body of PUT /v1/client/allocation/{id}/signal:
// Signal ("SIGHUP", …; default SIGKILL as Nomad's) goes to Task, or to
// every running task when Task is empty.
type AllocSignalRequest struct {
	Task   string
	Signal string
}

// GenericResponse is the answer of the client's lifecycle calls: the
// index is 0 (nothing is written to the cluster's log).
type GenericResponse struct {
	Index uint64
}

// ExecIO is a chunk of a stream of an exec session, or its end (Close).
type ExecIO struct {
	Data  []byte `json:"data,omitempty"`
	Close bool   `json:"close,omitempty"`
}

// TerminalSize is the size of the caller's terminal.
type TerminalSize struct {
	Height int `json:"height,omitempty"`
	Width  int `json:"width,omitempty"`
}

// ExecInput is a frame the caller sends on the exec websocket: stdin
// bytes (or its end), a terminal resize, or neither (a heartbeat).
type ExecInput struct {
	Stdin   *ExecIO       `json:"stdin,omitempty"`
	TTYSize *TerminalSize `json:"tty_size,omitempty"`
}

// ExecExitResult is the command's exit status.
type ExecExitResult struct {
	ExitCode int `json:"exit_code"`
}

// ExecOutput is a frame the node sends on the exec websocket: stdout or
// stderr bytes, or the command's exit (Exited with Result), the last
// frame.
type ExecOutput struct {
	Stdout *ExecIO         `json:"stdout,omitempty"`
	Stderr *ExecIO         `json:"stderr,omitempty"`
	Exited bool            `json:"exited,omitempty"`
	Result *ExecExitResult `json:"result,omitempty"`
}

// ExecRequest is one command to run in an allocation's task:
// GET /v1/client/allocation/{AllocID}/exec?task=&command=&tty=.
type ExecRequest struct {
	AllocID string
	Task    string
	Command []string
	TTY     bool
	// Stdin is sent to the command until it ends; nil sends nothing and
	// closes the command's stdin at once. A read of Stdin blocked when the
	// command exits is left to return on its own (a terminal's read cannot
	// be interrupted); what it returns is dropped.
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	// Resize carries terminal sizes to send; optional.
	Resize <-chan TerminalSize
}

// execHeartbeat is how often an exec session sends an empty frame.
const execHeartbeat = 10 * time.Second

// Exec runs req's command in its allocation's task over the exec
// websocket (through the first server that accepts it, which proxies it
// to the allocation's node) and returns the command's exit code.
func (c *Client) Exec(ctx context.Context, req ExecRequest) (int, error) {
	cmd, err := json.Marshal(req.Command)
	if err != nil {
		return -1, fmt.Errorf("exec: encode command: %w", err)
	}
	params := url.Values{"task": {req.Task}, "command": {string(cmd)}, "tty": {fmt.Sprint(req.TTY)}}
	path := Pathf("/v1/client/allocation/%s/exec", req.AllocID)
	conn, err := c.dialWebsocket(ctx, path, params)
	if err != nil {
		return -1, err
	}
	defer conn.Close()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()

	var sendMu sync.Mutex
	send := func(in ExecInput) error {
		sendMu.Lock()
		defer sendMu.Unlock()
		return conn.WriteJSON(in)
	}
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()                         // runs before wg.Wait: the heartbeat ends
	go execSendStdin(ctx, req.Stdin, send) // not joined: see ExecRequest.Stdin
	wg.Go(func() {
		t := time.NewTicker(execHeartbeat)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				_ = send(ExecInput{})
			case size, ok := <-req.Resize:
				if !ok {
					req.Resize = nil
					continue
				}
				_ = send(ExecInput{TTYSize: &size})
			}
		}
	})
	for {
		var out ExecOutput
		if err := conn.ReadJSON(&out); err != nil {
			if ctx.Err() != nil {
				return -1, fmt.Errorf("exec: %w", context.Cause(ctx))
			}
			if ce, ok := errors.AsType[*websocket.CloseError](err); ok && ce.Text != "" {
				return -1, fmt.Errorf("exec: %s", ce.Text)
			}
			return -1, fmt.Errorf("exec: connection ended before the command's exit: %w", err)
		}
		switch {
		case out.Stdout != nil && req.Stdout != nil:
			if _, err := req.Stdout.Write(out.Stdout.Data); err != nil {
				return -1, fmt.Errorf("exec: write stdout: %w", err)
			}
		case out.Stderr != nil && req.Stderr != nil:
			if _, err := req.Stderr.Write(out.Stderr.Data); err != nil {
				return -1, fmt.Errorf("exec: write stderr: %w", err)
			}
		case out.Exited && out.Result != nil:
			sendMu.Lock()
			_ = conn.WriteMessage(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, ""))
			sendMu.Unlock()
			return out.Result.ExitCode, nil
		}
	}
}

// execSendStdin copies stdin to the session, then sends its end.
func execSendStdin(ctx context.Context, stdin io.Reader, send func(ExecInput) error) {
	if stdin != nil {
		buf := make([]byte, 4096)
		for ctx.Err() == nil {
			n, err := stdin.Read(buf)
			if n > 0 {
				if send(ExecInput{Stdin: &ExecIO{Data: append([]byte(nil), buf[:n]...)}}) != nil {
					return
				}
			}
			if err != nil {
				break
			}
		}
	}
	if ctx.Err() == nil {
		_ = send(ExecInput{Stdin: &ExecIO{Close: true}})
	}
}

// dialWebsocket opens a websocket to path on the servers in turn, with
// the client's token, namespace and headers; a refusal of the upgrade is
// returned as an *Error carrying the server's error body.
func (c *Client) dialWebsocket(ctx context.Context, path string, params url.Values) (*websocket.Conn, error) {
	req := &Request{Method: http.MethodGet, Path: path, Params: params}
	q := c.query(req)
	h := http.Header{}
	h.Set("User-Agent", c.opts.userAgent)
	if c.opts.token != "" {
		h.Set("X-Nomad-Token", c.opts.token)
	}
	for k, vs := range c.opts.header {
		h[k] = vs
	}
	d := websocket.Dialer{HandshakeTimeout: 30 * time.Second}
	if t, ok := c.opts.http.Transport.(*http.Transport); ok && t != nil {
		d.NetDialContext, d.TLSClientConfig, d.Proxy = t.DialContext, t.TLSClientConfig, t.Proxy
	}
	var errs []error
	for _, base := range c.Servers() {
		u := strings.Replace(strings.Replace(base, "https://", "wss://", 1), "http://", "ws://", 1) + path
		if len(q) > 0 {
			u += "?" + q.Encode()
		}
		conn, resp, err := d.DialContext(ctx, u, h)
		if err == nil {
			return conn, nil
		}
		if resp != nil {
			defer resp.Body.Close()
			e := decodeError(http.MethodGet, path, resp)
			if resp.StatusCode < 500 {
				return nil, e
			}
			err = e
		}
		errs = append(errs, err)
		if ctx.Err() != nil {
			break
		}
	}
	return nil, fmt.Errorf("%w: %w", ErrNoServers, errors.Join(errs...))
}
