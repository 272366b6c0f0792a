package chaos

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"syscall"
)

// The registers are variables (GET/PUT /v1/var/<path>, ?cas=N) and jobs
// (GET /v1/job/<id>, PUT /v1/job/<id> with EnforceIndex/JobModifyIndex):
// a variable's value is its item "v" and its index its ModifyIndex; a
// job's value is its Meta "v" and its index its JobModifyIndex. The job is
// a parameterized batch job, so registering it creates no evaluation and
// no scheduling work.

// outcome is how an HTTP exchange ended, before the model reads it.
type outcome int

const (
	// answered: a status came back (the body is read).
	answered outcome = iota
	// notSent: the connection was refused, so the request never reached a
	// server (a stopped one): the operation certainly did nothing.
	notSent
	// lost: a timeout or a broken connection: a write may have happened.
	lost
)

// exchange sends one request and reads the answer.
func exchange(ctx context.Context, c *http.Client, method, addr, path string, body []byte) (outcome, int, []byte, error) {
	var r io.Reader
	if body != nil {
		r = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, "http://"+addr+path, r)
	if err != nil {
		return notSent, 0, nil, err
	}
	resp, err := c.Do(req)
	if err != nil {
		if errors.Is(err, syscall.ECONNREFUSED) {
			return notSent, 0, nil, err
		}
		return lost, 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return lost, resp.StatusCode, nil, err
	}
	return answered, resp.StatusCode, b, nil
}

// result is a register operation's answer as the model sees it, or why it
// is not in the history.
type result struct {
	out Output
	// skip: the operation has no place in the history (a read or a refused
	// connection that did nothing).
	skip bool
	// unexpected describes an answer no correct server gives (a 400 to a
	// well-formed request); it fails the run.
	unexpected string
	// status is the HTTP status (0: none), for the counts; detail the
	// answer of a failure, for the samples a run keeps.
	status int
	detail string
}

// register is one key of the workload.
type register interface {
	key() string
	read(ctx context.Context, c *http.Client, addr string) result
	// write writes value, unconditionally or (cas) only at index expect.
	write(ctx context.Context, c *http.Client, addr, value string, cas bool, expect uint64) result
}

// variable is a register held in a variable's item "v".
type variable struct{ path string }

func (v variable) key() string { return "var:" + v.path }

// variableJSON is the part of Nomad's Variable the harness reads.
type variableJSON struct {
	ModifyIndex uint64
	Items       map[string]string
}

func (v variable) read(ctx context.Context, c *http.Client, addr string) result {
	return readRegister(ctx, c, addr, "/v1/var/"+v.path, func(body []byte) (Output, error) {
		var got variableJSON
		err := json.Unmarshal(body, &got)
		return Output{Value: got.Items["v"], Index: got.ModifyIndex}, err
	})
}

// readRegister GETs path, a register's current value: 200 decodes it, 404
// is the register before any write.
func readRegister(ctx context.Context, c *http.Client, addr, path string, decode func(body []byte) (Output, error)) result {
	how, status, body, _ := exchange(ctx, c, http.MethodGet, addr, path, nil)
	if how != answered {
		return result{skip: true}
	}
	switch status {
	case http.StatusOK:
		out, err := decode(body)
		if err != nil {
			return result{unexpected: fmt.Sprintf("GET %s: %v: %s", path, err, body), status: status}
		}
		return result{out: out, status: status}
	case http.StatusNotFound:
		return result{out: Output{}, status: status}
	}
	return readFailure(status, "GET "+path, body)
}

// put PUTs b to path on addr. A write that was not sent, or whose answer
// was lost, comes back as the result to record; otherwise the status and
// body answered.
func put(ctx context.Context, c *http.Client, addr, path string, b []byte) (int, []byte, *result) {
	how, status, body, err := exchange(ctx, c, http.MethodPut, addr, path, b)
	switch how {
	case notSent:
		return status, body, &result{skip: true}
	case lost:
		return status, body, &result{out: Output{Unknown: true}, status: status, detail: fmt.Sprintf("PUT %s: %v", path, err)}
	}
	return status, body, nil
}

func (v variable) write(ctx context.Context, c *http.Client, addr, value string, cas bool, expect uint64) result {
	path := "/v1/var/" + v.path
	if cas {
		path += "?cas=" + strconv.FormatUint(expect, 10)
	}
	b, _ := json.Marshal(map[string]any{"Items": map[string]string{"v": value}})
	status, body, unsent := put(ctx, c, addr, path, b)
	if unsent != nil {
		return *unsent
	}
	switch {
	case status == http.StatusOK:
		var got variableJSON
		if err := json.Unmarshal(body, &got); err != nil || got.ModifyIndex == 0 {
			return result{unexpected: fmt.Sprintf("PUT %s: %v: %s", path, err, body), status: status}
		}
		return result{out: Output{Index: got.ModifyIndex}, status: status}
	case status == http.StatusConflict && cas:
		// 409 answers the current variable (an empty one when absent).
		var got variableJSON
		if err := json.Unmarshal(body, &got); err != nil {
			return result{unexpected: fmt.Sprintf("PUT %s: 409 %v: %s", path, err, body), status: status}
		}
		return result{out: Output{Conflict: true, Current: true, Value: got.Items["v"], Index: got.ModifyIndex}, status: status}
	}
	return writeFailure(status, "PUT "+path, body)
}

// job is a register held in a parameterized batch job's Meta "v".
type job struct{ id string }

func (j job) key() string { return "job:" + j.id }

func (j job) read(ctx context.Context, c *http.Client, addr string) result {
	return readRegister(ctx, c, addr, "/v1/job/"+url.PathEscape(j.id), func(body []byte) (Output, error) {
		var got struct {
			JobModifyIndex uint64
			Meta           map[string]string
		}
		err := json.Unmarshal(body, &got)
		return Output{Value: got.Meta["v"], Index: got.JobModifyIndex}, err
	})
}

func (j job) write(ctx context.Context, c *http.Client, addr, value string, cas bool, expect uint64) result {
	b, _ := json.Marshal(map[string]any{
		"Job": map[string]any{
			"ID": j.id, "Type": "batch", "Datacenters": []string{"dc1"},
			"ParameterizedJob": map[string]any{"Payload": "optional"},
			"Meta":             map[string]string{"v": value},
			"TaskGroups": []any{map[string]any{"Name": "g", "Count": 1,
				"Tasks": []any{map[string]any{"Name": "t", "Driver": "exec", "Config": map[string]any{"command": "/bin/true"}}}}},
		},
		"EnforceIndex": cas, "JobModifyIndex": expect,
	})
	path := "/v1/job/" + url.PathEscape(j.id)
	status, body, unsent := put(ctx, c, addr, path, b)
	if unsent != nil {
		return *unsent
	}
	switch {
	case status == http.StatusOK:
		var got struct{ JobModifyIndex uint64 }
		if err := json.Unmarshal(body, &got); err != nil || got.JobModifyIndex == 0 {
			return result{unexpected: fmt.Sprintf("PUT %s: %v: %s", path, err, body), status: status}
		}
		return result{out: Output{Index: got.JobModifyIndex}, status: status}
	case status == http.StatusConflict && cas:
		out := Output{Conflict: true}
		if out.Index, out.CurrentIndex = currentJobIndex(body); !out.CurrentIndex {
			// Still right, but every unknown write of the job stays open.
			return result{out: out, status: status, detail: "PUT " + path + ": a 409 naming no index: " + trim(body)}
		}
		return result{out: out, status: status}
	case status == http.StatusConflict:
		// A registration without EnforceIndex is decided again when
		// another change beats it, a few times; then it answers 409,
		// rejected at apply: it did nothing.
		return result{skip: true, status: status, detail: "PUT " + path + ": " + trim(body)}
	}
	return writeFailure(status, "PUT "+path, body)
}

// jobIndexMessages find the job's current index in the message of a
// job's 409: refused when decided ("enforcing job modify index 31: job
// exists with job modify index 35", "… job does not exist") or at apply
// ("… modify-index: modify index is 35, not 31").
var jobIndexMessages = []*regexp.Regexp{
	regexp.MustCompile(`job exists with job modify index (\d+)`),
	regexp.MustCompile(`modify index is (\d+), not \d+`),
	regexp.MustCompile(`enforcing job modify index \d+: job (does not exist)`),
}

// currentJobIndex returns the current index a job's 409 names, and false
// when it names none the harness knows how to read.
func currentJobIndex(body []byte) (uint64, bool) {
	for _, re := range jobIndexMessages {
		m := re.FindSubmatch(body)
		if m == nil {
			continue
		}
		if string(m[1]) == "does not exist" {
			return 0, true
		}
		n, err := strconv.ParseUint(string(m[1]), 10, 64)
		return n, err == nil
	}
	return 0, false
}

// readFailure is a read answered with an error status: a 5xx (no leader,
// a failed forward) leaves it out of the history; a 4xx is a bug.
func readFailure(status int, what string, body []byte) result {
	if status >= 500 {
		return result{skip: true, status: status, detail: what + ": " + trim(body)}
	}
	return result{unexpected: fmt.Sprintf("%s: %d %s", what, status, trim(body)), status: status}
}

// writeFailure is a write answered with an error status: a 5xx (no
// leader, leadership lost while committing) leaves its outcome unknown; a
// 4xx is a bug.
func writeFailure(status int, what string, body []byte) result {
	if status >= 500 {
		return result{out: Output{Unknown: true}, status: status, detail: what + ": " + trim(body)}
	}
	return result{unexpected: fmt.Sprintf("%s: %d %s", what, status, trim(body)), status: status}
}

func trim(b []byte) string {
	s := strings.TrimSpace(string(b))
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}

// putProbe writes the probe variable, outside the checked registers: it
// tells whether the cluster takes writes.
func putProbe(ctx context.Context, c *http.Client, addr, value string) (int, error) {
	b, _ := json.Marshal(map[string]any{"Items": map[string]string{"v": value}})
	how, status, body, err := exchange(ctx, c, http.MethodPut, addr, "/v1/var/chaos/probe", b)
	if how != answered {
		return 0, err
	}
	if status != http.StatusOK {
		return status, fmt.Errorf("probe write: %d %s", status, trim(body))
	}
	return status, nil
}
