// Package dockertest starts a Docker daemon of a test's own — its own
// socket, data root and exec root, never a system daemon — and loads a
// small local image into it, for the docker driver's tests and the end to
// end tests that run docker jobs.
//
// # Usage
//
// One daemon serves a whole test package, started in TestMain:
//
//	var daemon *dockertest.Daemon
//
//	func TestMain(m *testing.M) { os.Exit(dockertest.Main(m, &daemon)) }
//
// Main fails the package (exit status 1, the reason on stderr) when the
// daemon cannot start: docker tests fail, they never skip. Tests then use
// daemon.Endpoint and the image daemon.Image, a root filesystem holding
// Debian's busybox-static as /bin/busybox with links for sh, echo, sleep,
// cat, httpd, kill, true, env, ls, id and wc, imported through the Engine
// API's image create from a tar (what `docker import` does).
//
// # Concurrency
//
// A Daemon is safe for concurrent use once started; Start and Stop are
// called once each, by TestMain.
//
// # Invariants
//
//   - The daemon runs with --bridge=none and --iptables=false, so it
//     changes neither the host's interfaces nor its firewall.
//   - Stop stops the daemon it started (by its pid) and nothing else; a
//     test process that dies without Stop takes its daemon with it
//     (Linux's parent-death signal).
package dockertest

import (
	"archive/tar"
	"bytes"
	"context"
	"debug/elf"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// ImageName is the name:tag of the busybox image Start loads.
const ImageName = "ordo-busybox:test"

// busyboxPaths are where Debian's busybox-static may be.
var busyboxPaths = []string{"/bin/busybox", "/usr/bin/busybox"}

// busyboxLinks are the commands the image has as links to busybox.
var busyboxLinks = []string{"sh", "echo", "sleep", "cat", "httpd", "kill", "true", "env", "ls", "id", "wc", "head", "dd", "tail"}

// startPatience bounds the daemon's start-up and each API call of setup.
const startPatience = 60 * time.Second

// Daemon is a dockerd this package started.
type Daemon struct {
	// Endpoint is the daemon's API socket, "unix:///…/docker.sock".
	Endpoint string
	// Image is the local busybox image, ImageName.
	Image string
	// Dir holds the daemon's socket, data root, exec root and log.
	Dir string

	cmd  *exec.Cmd
	done chan struct{}
	http *http.Client
}

// Main starts a daemon, sets *d, runs the package's tests and stops the
// daemon; it returns the exit status for os.Exit. A daemon that cannot
// start fails the package.
func Main(m *testing.M, d **Daemon) int {
	dm, err := Start()
	if err != nil {
		fmt.Fprintf(os.Stderr, "FAIL: dockertest: %v\n", err)
		return 1
	}
	*d = dm
	code := m.Run()
	if err := dm.Stop(); err != nil {
		fmt.Fprintf(os.Stderr, "dockertest: %v\n", err)
		if code == 0 {
			code = 1
		}
	}
	return code
}

// Start starts a dockerd in a new temporary directory and loads the
// busybox image into it.
func Start() (*Daemon, error) {
	bin, err := exec.LookPath("dockerd")
	if err != nil {
		return nil, fmt.Errorf("dockerd is not installed (Debian: apt-get install docker.io): %w", err)
	}
	busybox := ""
	for _, p := range busyboxPaths {
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
			busybox = p
			break
		}
	}
	if busybox == "" {
		return nil, errors.New("busybox is not installed (Debian: apt-get install busybox-static)")
	}
	if err := static(busybox); err != nil {
		return nil, err
	}
	// A short path: the daemon's containerd socket lives under the exec
	// root, and unix socket paths are limited to 108 bytes.
	dir, err := os.MkdirTemp("", "ordo-dockerd-")
	if err != nil {
		return nil, err
	}
	sock := filepath.Join(dir, "docker.sock")
	logf, err := os.Create(filepath.Join(dir, "dockerd.log"))
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	defer logf.Close()
	cmd := exec.Command(bin, "--data-root", filepath.Join(dir, "data"), "--exec-root", filepath.Join(dir, "exec"),
		"-H", "unix://"+sock, "--pidfile", filepath.Join(dir, "dockerd.pid"),
		"--bridge=none", "--iptables=false", "--ip-masq=false")
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = sysProcAttr() // dockertest_linux.go
	if err := cmd.Start(); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("start dockerd: %w", err)
	}
	d := &Daemon{Endpoint: "unix://" + sock, Image: ImageName, Dir: dir, cmd: cmd, done: make(chan struct{}),
		http: &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var dl net.Dialer
			return dl.DialContext(ctx, "unix", sock)
		}}}}
	go func() { _ = cmd.Wait(); close(d.done) }()
	if err := d.waitReady(); err != nil {
		d.Stop()
		return nil, err
	}
	if err := d.loadImage(busybox); err != nil {
		d.Stop()
		return nil, err
	}
	return d, nil
}

// waitReady polls the daemon's /_ping until it answers, the daemon exits
// or startPatience passes.
func (d *Daemon) waitReady() error {
	deadline := time.Now().Add(startPatience)
	for {
		resp, err := d.http.Get("http://docker/_ping")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-d.done:
			return fmt.Errorf("dockerd exited at start-up: %s", d.logTail())
		default:
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("dockerd did not answer within %v: %v; %s", startPatience, err, d.logTail())
		}
		time.Sleep(50 * time.Millisecond) // polling a condition with a deadline
	}
}

// logTail returns the end of the daemon's log, for errors.
func (d *Daemon) logTail() string {
	b, _ := os.ReadFile(filepath.Join(d.Dir, "dockerd.log"))
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return "dockerd log: " + string(b)
}

// loadImage imports a root filesystem with busybox as ImageName.
func (d *Daemon) loadImage(busybox string) error {
	rootfs, err := RootFS(busybox)
	if err != nil {
		return err
	}
	repo, tag, _ := strings.Cut(ImageName, ":")
	ctx, cancel := context.WithTimeout(context.Background(), startPatience)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost,
		"http://docker/v1.41/images/create?fromSrc=-&repo="+repo+"&tag="+tag, bytes.NewReader(rootfs))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/x-tar")
	resp, err := d.http.Do(req)
	if err != nil {
		return fmt.Errorf("import image: %w", err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("import image: %s: %s", resp.Status, body)
	}
	// The progress stream reports failures in-band.
	dec := json.NewDecoder(bytes.NewReader(body))
	for {
		var msg struct {
			Error string `json:"error"`
		}
		if err := dec.Decode(&msg); err != nil {
			break
		}
		if msg.Error != "" {
			return fmt.Errorf("import image: %s", msg.Error)
		}
	}
	return nil
}

// RootFS returns a tar of a root filesystem holding the static busybox
// binary at /bin/busybox, its command links, and empty /tmp, /etc, /proc,
// /sys and /dev.
func RootFS(busybox string) ([]byte, error) {
	bin, err := os.ReadFile(busybox)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, dir := range []string{"bin/", "tmp/", "etc/", "proc/", "sys/", "dev/", "www/"} {
		mode := int64(0o755)
		if dir == "tmp/" {
			mode = 0o1777
		}
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: dir, Mode: mode}); err != nil {
			return nil, err
		}
	}
	if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: "bin/busybox", Mode: 0o755, Size: int64(len(bin))}); err != nil {
		return nil, err
	}
	if _, err := tw.Write(bin); err != nil {
		return nil, err
	}
	for _, l := range busyboxLinks {
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeSymlink, Name: "bin/" + l, Linkname: "busybox", Mode: 0o777}); err != nil {
			return nil, err
		}
	}
	passwd := []byte("root:x:0:0:root:/:/bin/sh\nnobody:x:65534:65534:nobody:/:/bin/false\n")
	if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: "etc/passwd", Mode: 0o644, Size: int64(len(passwd))}); err != nil {
		return nil, err
	}
	if _, err := tw.Write(passwd); err != nil {
		return nil, err
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Stop removes the daemon's containers, shuts it down (SIGTERM, then
// SIGKILL after 20 s) and removes its directory.
func (d *Daemon) Stop() error {
	d.removeContainers()
	_ = d.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-d.done:
	case <-time.After(20 * time.Second):
		_ = d.cmd.Process.Kill()
		<-d.done
	}
	// The daemon unmounts its layers on a clean shutdown but leaves its
	// network namespace mounted under the exec root.
	unmountUnder(d.Dir)
	if err := os.RemoveAll(d.Dir); err != nil {
		return fmt.Errorf("remove %s: %w", d.Dir, err)
	}
	return nil
}

// removeContainers force-removes every container of the daemon, so that
// shutting it down does not wait on their stop timeouts.
func (d *Daemon) removeContainers() {
	ctx, cancel := context.WithTimeout(context.Background(), startPatience)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://docker/v1.41/containers/json?all=true", nil)
	resp, err := d.http.Do(req)
	if err != nil {
		return
	}
	var list []struct{ ID string }
	_ = json.NewDecoder(resp.Body).Decode(&list)
	resp.Body.Close()
	for _, c := range list {
		req, _ := http.NewRequestWithContext(ctx, http.MethodDelete, "http://docker/v1.41/containers/"+c.ID+"?force=true&v=true", nil)
		if resp, err := d.http.Do(req); err == nil {
			resp.Body.Close()
		}
	}
}

// Containers returns the ids of the daemon's containers, running or not,
// that carry the label key=value.
func (d *Daemon) Containers(tb testing.TB, key, value string) []string {
	tb.Helper()
	filters, _ := json.Marshal(map[string][]string{"label": {key + "=" + value}})
	resp, err := d.http.Get("http://docker/v1.41/containers/json?all=true&filters=" + url.QueryEscape(string(filters)))
	if err != nil {
		tb.Fatalf("list containers: %v", err)
	}
	defer resp.Body.Close()
	var list []struct{ ID string }
	if err := json.NewDecoder(resp.Body).Decode(&list); err != nil {
		tb.Fatalf("list containers: %v", err)
	}
	ids := make([]string, 0, len(list))
	for _, c := range list {
		ids = append(ids, c.ID)
	}
	return ids
}

// Inspect returns the daemon's inspection of container id, decoded into
// a generic map; nil when it does not exist.
func (d *Daemon) Inspect(tb testing.TB, id string) map[string]any {
	tb.Helper()
	resp, err := d.http.Get("http://docker/v1.41/containers/" + id + "/json")
	if err != nil {
		tb.Fatalf("inspect %s: %v", id, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusNotFound {
		return nil
	}
	var out map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		tb.Fatalf("inspect %s: %v", id, err)
	}
	return out
}

// Kill sends SIGKILL to container id behind the driver's back.
func (d *Daemon) Kill(tb testing.TB, id string) {
	tb.Helper()
	resp, err := d.http.Post("http://docker/v1.41/containers/"+id+"/kill?signal=SIGKILL", "", nil)
	if err != nil {
		tb.Fatalf("kill %s: %v", id, err)
	}
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		tb.Fatalf("kill %s: %s", id, resp.Status)
	}
}

// static reports a binary that needs a dynamic loader, which the image
// does not have.
func static(path string) error {
	f, err := elf.Open(path)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return fmt.Errorf("%s is dynamically linked: install busybox-static (Debian: apt-get install busybox-static)", path)
		}
	}
	return nil
}

// Tag gives the busybox image a second name, name:tag, and returns it: an
// image of a test's own, which the test may see removed.
func (d *Daemon) Tag(tb testing.TB, name string) string {
	tb.Helper()
	repo, tag, _ := strings.Cut(name, ":")
	resp, err := d.http.Post("http://docker/v1.41/images/"+d.Image+"/tag?"+url.Values{"repo": {repo}, "tag": {tag}}.Encode(), "", nil)
	if err != nil {
		tb.Fatalf("tag %s: %v", name, err)
	}
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		tb.Fatalf("tag %s: %s", name, resp.Status)
	}
	return name
}

// HasImage reports whether the daemon has the image name.
func (d *Daemon) HasImage(tb testing.TB, name string) bool {
	tb.Helper()
	resp, err := d.http.Get("http://docker/v1.41/images/" + name + "/json")
	if err != nil {
		tb.Fatalf("inspect image %s: %v", name, err)
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// CreateStart creates and starts a container of image running cmd
// straight through the Engine API, as a baseline for the driver's start
// latency, and returns how long the two calls took. The container is
// killed afterwards; Stop removes it.
func (d *Daemon) CreateStart(tb testing.TB, image string, cmd ...string) time.Duration {
	tb.Helper()
	id, took, err := d.Run(image, cmd...)
	if err != nil {
		tb.Fatal(err)
	}
	d.Kill(tb, id)
	return took
}

// Run creates and starts a container of image running cmd as the driver
// starts a task (host network, an init process) and returns its id and
// how long the daemon took for the two calls; the container keeps
// running. For programs without a testing.TB (tools/bench).
func (d *Daemon) Run(image string, cmd ...string) (id string, took time.Duration, err error) {
	body, _ := json.Marshal(map[string]any{"Image": image, "Cmd": cmd, "HostConfig": map[string]any{"NetworkMode": "host", "Init": true}})
	begin := time.Now()
	resp, err := d.http.Post("http://docker/v1.41/containers/create", "application/json", bytes.NewReader(body))
	if err != nil {
		return "", 0, fmt.Errorf("create: %w", err)
	}
	var out struct {
		ID string `json:"Id"`
	}
	err = json.NewDecoder(resp.Body).Decode(&out)
	resp.Body.Close()
	if err != nil || out.ID == "" {
		return "", 0, fmt.Errorf("create: %s %v", resp.Status, err)
	}
	resp, err = d.http.Post("http://docker/v1.41/containers/"+out.ID+"/start", "", nil)
	if err != nil {
		return out.ID, 0, fmt.Errorf("start: %w", err)
	}
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return out.ID, 0, fmt.Errorf("start: %s", resp.Status)
	}
	return out.ID, time.Since(begin), nil
}

// Remove force-removes container id, running or not.
func (d *Daemon) Remove(id string) error {
	req, _ := http.NewRequest(http.MethodDelete, "http://docker/v1.41/containers/"+id+"?force=true&v=true", nil)
	resp, err := d.http.Do(req)
	if err != nil {
		return fmt.Errorf("remove %s: %w", id, err)
	}
	resp.Body.Close()
	if resp.StatusCode/100 != 2 && resp.StatusCode != http.StatusNotFound {
		return fmt.Errorf("remove %s: %s", id, resp.Status)
	}
	return nil
}
