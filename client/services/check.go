package services

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/ordoplane/ordo/client/allocrunner"
	"github.com/ordoplane/ordo/client/driver"
	"github.com/ordoplane/ordo/events"
)

// The defaults of a check's timing.
const (
	DefaultCheckInterval = 10 * time.Second
	DefaultCheckTimeout  = 5 * time.Second
)

// maxOutput bounds the output a check result keeps.
const maxOutput = 4 << 10

// Result is the outcome of running a check once.
type Result struct {
	// Status is passing, warning or critical.
	Status string
	Output string
}

// Execer runs a script check beside its task: the allocation's runner.
type Execer interface {
	// Exec runs req in task through the task's driver;
	// allocrunner.ErrExecUnsupported when the driver cannot.
	Exec(ctx context.Context, task string, req driver.ExecRequest) (int, error)
	// TaskExecEnv returns task's environment and working directory.
	TaskExecEnv(task string) (map[string]string, string, error)
}

// RunCheck runs c once, bounded by its timeout: http and tcp against
// its address and port, script in task through x.
func RunCheck(ctx context.Context, c *Check, hc *http.Client, x Execer) Result {
	timeout := c.Timeout
	if timeout <= 0 {
		timeout = DefaultCheckTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	switch c.Type {
	case events.CheckTypeHTTP:
		return runHTTP(ctx, c, hc)
	case events.CheckTypeTCP:
		return runTCP(ctx, c)
	case events.CheckTypeScript:
		return runScript(ctx, c, x)
	}
	return Result{Status: events.CheckCritical, Output: fmt.Sprintf("unknown check type %q", c.Type)}
}

// HTTPStatus is the status of an http check's answer, as Nomad's: 2xx
// passing, 429 (Too Many Requests) warning, anything else critical.
func HTTPStatus(code int) string {
	switch {
	case code >= 200 && code < 300:
		return events.CheckPassing
	case code == http.StatusTooManyRequests:
		return events.CheckWarning
	}
	return events.CheckCritical
}

// ScriptStatus is the status of a script check's exit code, as Nomad's:
// 0 passing, 1 warning, anything else critical.
func ScriptStatus(code int) string {
	switch code {
	case 0:
		return events.CheckPassing
	case 1:
		return events.CheckWarning
	}
	return events.CheckCritical
}

func runHTTP(ctx context.Context, c *Check, hc *http.Client) Result {
	proto := c.Protocol
	if proto == "" {
		proto = "http"
	}
	path := c.Path
	if path == "" {
		path = "/"
	} else if !strings.HasPrefix(path, "/") {
		path = "/" + path
	}
	url := proto + "://" + net.JoinHostPort(c.Address, strconv.Itoa(c.Port)) + path
	method := c.Method
	if method == "" {
		method = http.MethodGet
	}
	var body io.Reader
	if c.Body != "" {
		body = strings.NewReader(c.Body)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, body)
	if err != nil {
		return Result{Status: events.CheckCritical, Output: err.Error()}
	}
	for k, vs := range c.Header {
		if strings.EqualFold(k, "Host") && len(vs) > 0 {
			req.Host = vs[0]
			continue
		}
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	resp, err := hc.Do(req)
	if err != nil {
		return Result{Status: events.CheckCritical, Output: err.Error()}
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(io.LimitReader(resp.Body, maxOutput))
	return Result{Status: HTTPStatus(resp.StatusCode),
		Output: fmt.Sprintf("HTTP %s %s: %s\n%s", method, url, resp.Status, out)}
}

func runTCP(ctx context.Context, c *Check) Result {
	addr := net.JoinHostPort(c.Address, strconv.Itoa(c.Port))
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return Result{Status: events.CheckCritical, Output: err.Error()}
	}
	conn.Close()
	return Result{Status: events.CheckPassing, Output: "TCP connect " + addr + ": Success"}
}

// limitedBuffer keeps the first maxOutput bytes written to it.
type limitedBuffer struct{ bytes.Buffer }

func (b *limitedBuffer) Write(p []byte) (int, error) {
	if room := maxOutput - b.Len(); room > 0 {
		b.Buffer.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

// runScript runs the command in the check's task: through the task's
// driver when it can exec, else as a process of the client with the
// task's environment and directory.
func runScript(ctx context.Context, c *Check, x Execer) Result {
	if x == nil {
		return Result{Status: events.CheckCritical, Output: "no task to run the script in"}
	}
	var out limitedBuffer
	argv := append([]string{c.Command}, c.Args...)
	code, err := x.Exec(ctx, c.TaskName, driver.ExecRequest{Command: argv, Stdout: &out, Stderr: &out})
	if errors.Is(err, allocrunner.ErrExecUnsupported) {
		code, err = execHost(ctx, c, x, &out)
	}
	switch {
	case ctx.Err() != nil:
		return Result{Status: events.CheckCritical, Output: "script check timed out"}
	case err != nil:
		return Result{Status: events.CheckCritical, Output: err.Error()}
	}
	return Result{Status: ScriptStatus(code), Output: out.String()}
}

// execHost runs a script check's command as a process of the client, in
// the task's environment and directory.
func execHost(ctx context.Context, c *Check, x Execer, out io.Writer) (int, error) {
	env, dir, err := x.TaskExecEnv(c.TaskName)
	if err != nil {
		return -1, err
	}
	cmd := exec.CommandContext(ctx, c.Command, c.Args...)
	cmd.Dir, cmd.Stdout, cmd.Stderr = dir, out, out
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	if err := cmd.Run(); err != nil {
		if ee, ok := errors.AsType[*exec.ExitError](err); ok {
			return ee.ExitCode(), nil
		}
		return -1, err
	}
	return 0, nil
}
