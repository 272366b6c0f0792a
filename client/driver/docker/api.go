package docker

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// apiVersion is the Engine API version the driver speaks: Docker 20.10's,
// which later daemons still serve.
const apiVersion = "v1.41"

// errNotFound is returned by the API calls when the daemon answers 404.
var errNotFound = errors.New("docker: no such object")

// api is a small typed client of the Docker Engine API over a unix
// socket (or tcp), the calls the driver makes and nothing more.
type api struct {
	// network and addr are what to dial: "unix" and a socket path, or
	// "tcp" and host:port.
	network, addr string
	http          *http.Client
}

// newAPI returns a client of the daemon at endpoint: unix:///path or
// tcp://host:port.
func newAPI(endpoint string) (*api, error) {
	u, err := url.Parse(endpoint)
	if err != nil {
		return nil, fmt.Errorf("docker: endpoint %q: %w", endpoint, err)
	}
	a := &api{}
	switch u.Scheme {
	case "unix":
		a.network, a.addr = "unix", u.Path
	case "tcp":
		a.network, a.addr = "tcp", u.Host
	default:
		return nil, fmt.Errorf("docker: endpoint %q: want unix:///path or tcp://host:port", endpoint)
	}
	if a.addr == "" {
		return nil, fmt.Errorf("docker: endpoint %q names no socket or address", endpoint)
	}
	// No kept-alive connections: a connection left idle across a daemon
	// restart fails the next call made on it (a kill, say), while dialing
	// a unix socket per call costs next to nothing.
	a.http = &http.Client{Transport: &http.Transport{DialContext: a.dial, DisableKeepAlives: true}}
	return a, nil
}

func (a *api) dial(ctx context.Context, _, _ string) (net.Conn, error) {
	var d net.Dialer
	return d.DialContext(ctx, a.network, a.addr)
}

// apiError is an answer of the daemon other than 2xx.
type apiError struct {
	Status  int
	Message string
}

func (e *apiError) Error() string { return fmt.Sprintf("docker: %d: %s", e.Status, e.Message) }

// do sends method path?query with body as JSON (nil: none) and returns
// the response for 2xx answers; other answers become errors (errNotFound
// for 404).
func (a *api) do(ctx context.Context, method, path string, query url.Values, body any) (*http.Response, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		rd = bytes.NewReader(b)
	}
	u := "http://docker/" + apiVersion + path
	if len(query) > 0 {
		u += "?" + query.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		return nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := a.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("docker: %s %s: %w", method, path, err)
	}
	if resp.StatusCode/100 == 2 {
		return resp, nil
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	var msg struct {
		Message string `json:"message"`
	}
	if json.Unmarshal(b, &msg) != nil || msg.Message == "" {
		msg.Message = strings.TrimSpace(string(b))
	}
	err = &apiError{Status: resp.StatusCode, Message: msg.Message}
	if resp.StatusCode == http.StatusNotFound {
		return nil, fmt.Errorf("%w: %w", errNotFound, err)
	}
	return nil, err
}

// call is do, decoding a JSON answer into out (nil: discarded).
func (a *api) call(ctx context.Context, method, path string, query url.Values, body, out any) error {
	resp, err := a.do(ctx, method, path, query, body)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if out == nil {
		_, _ = io.Copy(io.Discard, resp.Body)
		return nil
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return fmt.Errorf("docker: %s %s: decode: %w", method, path, err)
	}
	return nil
}

// versionInfo is the daemon's /version answer, the fields the driver uses.
type versionInfo struct {
	Version    string `json:"Version"`
	APIVersion string `json:"ApiVersion"`
}

func (a *api) version(ctx context.Context) (versionInfo, error) {
	var v versionInfo
	err := a.call(ctx, http.MethodGet, "/version", nil, nil, &v)
	return v, err
}

// imageExists reports whether the daemon has image locally.
func (a *api) imageExists(ctx context.Context, image string) (bool, error) {
	err := a.call(ctx, http.MethodGet, "/images/"+image+"/json", nil, nil, nil)
	if errors.Is(err, errNotFound) {
		return false, nil
	}
	return err == nil, err
}

// pull pulls image (name[:tag] or name@digest) from its registry; auth,
// when not empty, is the base64url JSON of the registry credentials.
func (a *api) pull(ctx context.Context, image, auth string) error {
	q := url.Values{"fromImage": {image}}
	if !strings.Contains(image, "@") && !hasTag(image) {
		q.Set("tag", "latest")
	}
	u := "http://docker/" + apiVersion + "/images/create?" + q.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, nil)
	if err != nil {
		return err
	}
	if auth != "" {
		req.Header.Set("X-Registry-Auth", auth)
	}
	resp, err := a.http.Do(req)
	if err != nil {
		return fmt.Errorf("docker: pull %s: %w", image, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		return fmt.Errorf("docker: pull %s: %s: %s", image, resp.Status, strings.TrimSpace(string(b)))
	}
	// The progress stream reports failures in-band.
	dec := json.NewDecoder(resp.Body)
	for {
		var msg struct {
			Error string `json:"error"`
		}
		if err := dec.Decode(&msg); errors.Is(err, io.EOF) {
			return nil
		} else if err != nil {
			return fmt.Errorf("docker: pull %s: %w", image, err)
		}
		if msg.Error != "" {
			return fmt.Errorf("docker: pull %s: %s", image, msg.Error)
		}
	}
}

// hasTag reports whether image names a tag after its last path element.
func hasTag(image string) bool {
	last := image[strings.LastIndex(image, "/")+1:]
	return strings.Contains(last, ":")
}

// containerSpec is the body of a container create: the container's
// config with its host config, as the Engine API takes it.
type containerSpec struct {
	Image      string            `json:"Image"`
	Cmd        []string          `json:"Cmd,omitempty"`
	Entrypoint []string          `json:"Entrypoint,omitempty"`
	Env        []string          `json:"Env,omitempty"`
	WorkingDir string            `json:"WorkingDir,omitempty"`
	Labels     map[string]string `json:"Labels,omitempty"`
	Hostname   string            `json:"Hostname,omitempty"`
	HostConfig hostConfig        `json:"HostConfig"`
}

// hostConfig is a container's HostConfig, the fields the driver sets.
type hostConfig struct {
	Binds          []string `json:"Binds,omitempty"`
	NetworkMode    string   `json:"NetworkMode,omitempty"`
	Privileged     bool     `json:"Privileged,omitempty"`
	Init           *bool    `json:"Init,omitempty"`
	ReadonlyRootfs bool     `json:"ReadonlyRootfs,omitempty"`
	CapAdd         []string `json:"CapAdd,omitempty"`
	CapDrop        []string `json:"CapDrop,omitempty"`
	SecurityOpt    []string `json:"SecurityOpt,omitempty"`
	ExtraHosts     []string `json:"ExtraHosts,omitempty"`
	DNS            []string `json:"Dns,omitempty"`
	DNSSearch      []string `json:"DnsSearch,omitempty"`
	DNSOptions     []string `json:"DnsOptions,omitempty"`
	ShmSize        int64    `json:"ShmSize,omitempty"`
	CPUShares      int64    `json:"CpuShares,omitempty"`
	Memory         int64    `json:"Memory,omitempty"`
	MemorySwap     int64    `json:"MemorySwap,omitempty"`
	// MemoryReservation is the soft limit the kernel reclaims towards
	// under memory pressure (the task's memory when memory_max is set).
	MemoryReservation int64          `json:"MemoryReservation,omitempty"`
	PidsLimit         *int64         `json:"PidsLimit,omitempty"`
	LogConfig         map[string]any `json:"LogConfig,omitempty"`
	Mounts            []mount        `json:"Mounts,omitempty"`
	Ulimits           []ulimit       `json:"Ulimits,omitempty"`
	Devices           []device       `json:"Devices,omitempty"`
}

// mount is one of a container's mounts (HostConfig.Mounts).
type mount struct {
	Type         string        `json:"Type"`
	Source       string        `json:"Source,omitempty"`
	Target       string        `json:"Target"`
	ReadOnly     bool          `json:"ReadOnly,omitempty"`
	BindOptions  *bindOptions  `json:"BindOptions,omitempty"`
	TmpfsOptions *tmpfsOptions `json:"TmpfsOptions,omitempty"`
}

type bindOptions struct {
	Propagation string `json:"Propagation,omitempty"`
}

type tmpfsOptions struct {
	SizeBytes int64 `json:"SizeBytes,omitempty"`
	Mode      int64 `json:"Mode,omitempty"`
}

// ulimit is one resource limit of a container's processes.
type ulimit struct {
	Name string `json:"Name"`
	Soft int64  `json:"Soft"`
	Hard int64  `json:"Hard"`
}

// device is a host device made available in a container.
type device struct {
	PathOnHost        string `json:"PathOnHost"`
	PathInContainer   string `json:"PathInContainer"`
	CgroupPermissions string `json:"CgroupPermissions"`
}

// create creates a container named name; it returns its id.
func (a *api) create(ctx context.Context, name string, spec containerSpec) (string, error) {
	var out struct {
		ID string `json:"Id"`
	}
	err := a.call(ctx, http.MethodPost, "/containers/create", url.Values{"name": {name}}, spec, &out)
	return out.ID, err
}

func (a *api) start(ctx context.Context, id string) error {
	return a.call(ctx, http.MethodPost, "/containers/"+id+"/start", nil, nil, nil)
}

// remove force-removes container id with its anonymous volumes; a
// container already gone, or being removed, is no error.
func (a *api) remove(ctx context.Context, id string) error {
	err := a.call(ctx, http.MethodDelete, "/containers/"+id, url.Values{"force": {"true"}, "v": {"true"}}, nil, nil)
	var ae *apiError
	if errors.Is(err, errNotFound) || errors.As(err, &ae) && ae.Status == http.StatusConflict && strings.Contains(ae.Message, "already in progress") {
		return nil
	}
	return err
}

// kill sends signal number sig to container id's main process.
func (a *api) kill(ctx context.Context, id string, sig int) error {
	return a.call(ctx, http.MethodPost, "/containers/"+id+"/kill", url.Values{"signal": {fmt.Sprint(sig)}}, nil, nil)
}

// wait blocks until container id is not running and returns its exit
// status.
func (a *api) wait(ctx context.Context, id string) (int, error) {
	var out struct {
		StatusCode int `json:"StatusCode"`
		Error      *struct {
			Message string `json:"Message"`
		} `json:"Error"`
	}
	if err := a.call(ctx, http.MethodPost, "/containers/"+id+"/wait", url.Values{"condition": {"not-running"}}, nil, &out); err != nil {
		return 0, err
	}
	if out.Error != nil && out.Error.Message != "" {
		return out.StatusCode, fmt.Errorf("docker: wait %s: %s", id, out.Error.Message)
	}
	return out.StatusCode, nil
}

// containerInfo is a container's inspection, the fields the driver reads.
type containerInfo struct {
	ID    string `json:"Id"`
	State struct {
		Running   bool   `json:"Running"`
		ExitCode  int    `json:"ExitCode"`
		OOMKilled bool   `json:"OOMKilled"`
		StartedAt string `json:"StartedAt"`
	} `json:"State"`
	Config struct {
		Image  string            `json:"Image"`
		Labels map[string]string `json:"Labels"`
	} `json:"Config"`
}

func (a *api) inspect(ctx context.Context, id string) (containerInfo, error) {
	var out containerInfo
	err := a.call(ctx, http.MethodGet, "/containers/"+id+"/json", nil, nil, &out)
	return out, err
}

// list returns the ids of the containers, running or not, that carry
// every label of labels.
func (a *api) list(ctx context.Context, labels map[string]string) ([]string, error) {
	var f []string
	for k, v := range labels {
		f = append(f, k+"="+v)
	}
	filters, _ := json.Marshal(map[string][]string{"label": f})
	var out []struct {
		ID string `json:"Id"`
	}
	if err := a.call(ctx, http.MethodGet, "/containers/json", url.Values{"all": {"true"}, "filters": {string(filters)}}, nil, &out); err != nil {
		return nil, err
	}
	ids := make([]string, len(out))
	for i, c := range out {
		ids[i] = c.ID
	}
	return ids, nil
}

// logs follows container id's stdout and stderr from since (a unix time
// in seconds, "" for the start) until the container stops or ctx ends,
// writing each stream to its writer; mark is given each message's
// timestamp, which the daemon prefixes and logs strips.
func (a *api) logs(ctx context.Context, id, since string, stdout, stderr io.Writer, mark func(time.Time)) error {
	q := url.Values{"follow": {"true"}, "stdout": {"true"}, "stderr": {"true"}, "timestamps": {"true"}}
	if since != "" {
		q.Set("since", since)
	}
	resp, err := a.do(ctx, http.MethodGet, "/containers/"+id+"/logs", q, nil)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	return frames(resp.Body, func(stream byte, p []byte) error {
		if i := bytes.IndexByte(p, ' '); i > 0 {
			if ts, err := time.Parse(time.RFC3339Nano, string(p[:i])); err == nil {
				mark(ts)
				p = p[i+1:]
			}
		}
		_, err := pick(stream, stdout, stderr).Write(p)
		return err
	})
}

// demux copies the Engine API's multiplexed stream from r to stdout and
// stderr until r ends.
func demux(r io.Reader, stdout, stderr io.Writer) error {
	return frames(r, func(stream byte, p []byte) error {
		_, err := pick(stream, stdout, stderr).Write(p)
		return err
	})
}

// pick returns the writer of stream 1 (stdout) or 2 (stderr).
func pick(stream byte, stdout, stderr io.Writer) io.Writer {
	switch stream {
	case 1:
		return stdout
	case 2:
		return stderr
	}
	return io.Discard
}

// maxFrame bounds the frames read whole; the daemon's log messages are at
// most 16 KiB, exec output frames at most 32 KiB.
const maxFrame = 1 << 20

// frames reads the Engine API's multiplexed stream (frames of an 8-byte
// header — the stream, 3 zero bytes, the payload's big-endian length —
// then the payload) from r until it ends, passing each frame's payload
// whole to f (a payload past maxFrame in pieces).
func frames(r io.Reader, f func(stream byte, p []byte) error) error {
	br := bufio.NewReaderSize(r, 32<<10)
	var hdr [8]byte
	buf := make([]byte, 32<<10)
	for {
		if _, err := io.ReadFull(br, hdr[:]); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		n := int(binary.BigEndian.Uint32(hdr[4:]))
		if n > len(buf) && n <= maxFrame {
			buf = make([]byte, n)
		}
		for n > 0 {
			m := min(n, len(buf))
			if _, err := io.ReadFull(br, buf[:m]); err != nil {
				return err
			}
			if err := f(hdr[0], buf[:m]); err != nil {
				return err
			}
			n -= m
		}
	}
}
