package docker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ordoplane/ordo/client/driver"
	"github.com/ordoplane/ordo/clock"
)

// Name is the docker driver's name in a task's driver field.
const Name = "docker"

// DefaultEndpoint is the daemon's socket when Config.Endpoint is empty.
const DefaultEndpoint = "unix:///var/run/docker.sock"

// ErrClosed is returned by Start and Recover after Close.
var ErrClosed = errors.New("docker: driver is closed")

// Config configures a Driver: the client's plugin "docker" block.
type Config struct {
	// Endpoint is the daemon's API: unix:///path or tcp://host:port;
	// default DefaultEndpoint.
	Endpoint string
	// AllowPrivileged lets tasks set privileged = true; default false.
	AllowPrivileged bool
	// VolumesEnabled lets tasks mount host paths outside their
	// allocation directory; default false.
	VolumesEnabled bool
	// KeepContainers leaves a task's container in place once it has
	// exited (gc { container = false }); by default it is removed.
	KeepContainers bool
	// Owner names the client whose containers these are (the agent uses
	// its client data directory): containers get it as the LabelOwner
	// label, and Sweep removes only containers of this owner. Empty: no
	// owner label, and Sweep removes nothing, since other clients may
	// share the daemon.
	Owner string
	// ImageGC removes the images tasks used once no task has run them for
	// ImageDelay (gc { image, image_delay }); default off. Images in use
	// by any container are never removed.
	ImageGC bool
	// ImageDelay is how long an image stays unused before image GC
	// removes it; default 3m.
	ImageDelay time.Duration
	// ImageGCInterval is how often image GC looks; default 1m.
	ImageGCInterval time.Duration
	// FingerprintTimeout bounds the daemon's answer to a fingerprint;
	// default 2s.
	FingerprintTimeout time.Duration
	// RetryInterval is how long a task's waiter waits before asking an
	// unreachable daemon again; default 1s.
	RetryInterval time.Duration
	// Clock times kill timeouts and retries; default clock.System.
	Clock clock.Clock
	// Logger receives what goes wrong outside a call; default
	// slog.Default().
	Logger *slog.Logger
}

// DefaultConfig returns the defaults.
func DefaultConfig() Config {
	return Config{Endpoint: DefaultEndpoint, FingerprintTimeout: 2 * time.Second, RetryInterval: time.Second,
		ImageDelay: 3 * time.Minute, ImageGCInterval: time.Minute, Clock: clock.System{}, Logger: slog.Default()}
}

// Validate reports a Config that cannot work.
func (c Config) Validate() error {
	switch {
	case c.Clock == nil:
		return errors.New("docker: Clock is required")
	case c.Logger == nil:
		return errors.New("docker: Logger is required")
	case c.FingerprintTimeout <= 0, c.RetryInterval <= 0, c.ImageGCInterval <= 0:
		return errors.New("docker: FingerprintTimeout, RetryInterval and ImageGCInterval must be positive")
	case c.ImageDelay < 0:
		return errors.New("docker: ImageDelay must not be negative")
	}
	if _, err := newAPI(c.Endpoint); err != nil {
		return err
	}
	return nil
}

// Driver runs tasks as containers of a Docker daemon. Build it with New.
type Driver struct {
	cfg Config
	api *api
	// ctx ends at Close, ending the handles' goroutines.
	ctx    context.Context
	cancel context.CancelFunc
	// watchers counts the handles' goroutines, which Close waits for.
	watchers sync.WaitGroup
	mu       struct {
		sync.Mutex
		closed bool
		// images are the images of the tasks this driver ran (imagegc.go).
		images map[string]*imageUse
	}
}

var (
	_ driver.Driver  = (*Driver)(nil)
	_ driver.Sweeper = (*Driver)(nil)
)

// New returns a Driver; zero fields of cfg take DefaultConfig's values.
// It does not contact the daemon: Fingerprint does.
func New(cfg Config) (*Driver, error) {
	def := DefaultConfig()
	if cfg.Endpoint == "" {
		cfg.Endpoint = def.Endpoint
	}
	if cfg.FingerprintTimeout == 0 {
		cfg.FingerprintTimeout = def.FingerprintTimeout
	}
	if cfg.RetryInterval == 0 {
		cfg.RetryInterval = def.RetryInterval
	}
	if cfg.ImageDelay == 0 {
		cfg.ImageDelay = def.ImageDelay
	}
	if cfg.ImageGCInterval == 0 {
		cfg.ImageGCInterval = def.ImageGCInterval
	}
	if cfg.Clock == nil {
		cfg.Clock = def.Clock
	}
	if cfg.Logger == nil {
		cfg.Logger = def.Logger
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	a, err := newAPI(cfg.Endpoint)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	d := &Driver{cfg: cfg, api: a, ctx: ctx, cancel: cancel}
	d.mu.images = map[string]*imageUse{}
	if cfg.ImageGC {
		d.watchers.Add(1)
		go d.collectImages() // imagegc.go
	}
	return d, nil
}

// Name implements driver.Driver.
func (d *Driver) Name() string { return Name }

// Fingerprint implements driver.Driver: healthy when the daemon answers
// its version within FingerprintTimeout, with the attributes
// driver.docker.version, driver.docker.volumes.enabled and
// driver.docker.privileged.enabled. A daemon whose socket does not exist
// is not detected; one that does not answer is detected and unhealthy.
func (d *Driver) Fingerprint() driver.Fingerprint {
	ctx, cancel := context.WithTimeout(context.Background(), d.cfg.FingerprintTimeout)
	defer cancel()
	v, err := d.api.version(ctx)
	if err != nil {
		detected := true
		if d.api.network == "unix" {
			if _, serr := os.Stat(d.api.addr); serr != nil {
				detected = false
			}
		}
		d.cfg.Logger.Debug("docker: fingerprint", "endpoint", d.cfg.Endpoint, "err", err)
		return driver.Fingerprint{Detected: detected}
	}
	return driver.Fingerprint{Detected: true, Healthy: true, Attributes: map[string]string{
		"driver.docker.version":            v.Version,
		"driver.docker.api_version":        v.APIVersion,
		"driver.docker.volumes.enabled":    strconv.FormatBool(d.cfg.VolumesEnabled),
		"driver.docker.privileged.enabled": strconv.FormatBool(d.cfg.AllowPrivileged),
	}}
}

// Close stops the handles' goroutines — following logs and waiting for
// containers — and waits for them, leaving every container running: it
// is what a client shutting down without stopping its tasks calls, so
// that a later client process can Recover them. Start and Recover fail
// after Close.
func (d *Driver) Close() error {
	d.mu.Lock()
	if !d.mu.closed {
		d.mu.closed = true
		d.cancel()
	}
	d.mu.Unlock()
	d.watchers.Wait()
	return nil
}

// addWatcher reserves one handle goroutine; false once closed.
func (d *Driver) addWatcher() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.mu.closed {
		return false
	}
	d.watchers.Add(1)
	return true
}

// Start implements driver.Driver: it makes sure the image is there
// (pulling it when missing or force_pull is set), removes any container
// an earlier attempt of the same task left behind, then creates and
// starts the task's container.
func (d *Driver) Start(ctx context.Context, cfg driver.TaskConfig) (driver.Handle, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("docker: start task %s: %w", cfg.ID, err)
	}
	l, err := d.parseTask(cfg)
	if err != nil {
		return nil, fmt.Errorf("docker: start task %s: %w", cfg.ID, err)
	}
	if !d.addWatcher() {
		return nil, fmt.Errorf("docker: start task %s: %w", cfg.ID, ErrClosed)
	}
	d.useImage(l.image) // before the image is looked at: image GC keeps it
	h, err := d.start(ctx, cfg, l)
	if err != nil {
		d.releaseImage(l.image)
		d.watchers.Done()
		return nil, fmt.Errorf("docker: start task %s: %w", cfg.ID, err)
	}
	go h.run("")
	return h, nil
}

func (d *Driver) start(ctx context.Context, cfg driver.TaskConfig, l launch) (*handle, error) {
	if err := d.ensureImage(ctx, l); err != nil {
		return nil, err
	}
	// A task has one container: one left by an attempt whose start the
	// client did not live to record is removed, not run beside.
	stale, err := d.api.list(ctx, map[string]string{LabelAllocID: cfg.AllocID, LabelTaskName: cfg.Task})
	if err != nil {
		return nil, err
	}
	for _, id := range stale {
		if err := d.api.remove(ctx, id); err != nil {
			return nil, fmt.Errorf("remove the container of an earlier attempt: %w", err)
		}
		d.cfg.Logger.Info("docker: removed a container of an earlier attempt", "task", cfg.ID, "container", id)
	}
	id, err := d.api.create(ctx, containerName(cfg.ID), l.spec)
	if err != nil {
		return nil, fmt.Errorf("create container: %w", err)
	}
	if err := d.api.start(ctx, id); err != nil {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		if rerr := d.api.remove(rctx, id); rerr != nil {
			d.cfg.Logger.Warn("docker: remove a container that did not start", "container", id, "err", rerr)
		}
		return nil, fmt.Errorf("start container: %w", err)
	}
	return newHandle(d, task{id: cfg.ID, allocID: cfg.AllocID, name: cfg.Task, started: d.cfg.Clock.Now(),
		container: id, image: l.image, logs: l.logs, killSignal: l.killSignal, killTimeout: l.killTimeout}), nil
}

// ensureImage pulls the task's image when the daemon lacks it or the
// task forces a pull.
func (d *Driver) ensureImage(ctx context.Context, l launch) error {
	if !l.forcePull {
		ok, err := d.api.imageExists(ctx, l.image)
		if err != nil || ok {
			return err
		}
	}
	pctx, cancel := context.WithTimeout(ctx, l.pullTimeout)
	defer cancel()
	if err := d.api.pull(pctx, l.image, l.auth); err != nil {
		return fmt.Errorf("image %q is not on this node and could not be pulled: %w", l.image, err)
	}
	return nil
}

// containerName is the container's name for task id: the characters
// Docker allows, the others replaced by '_'.
func containerName(id string) string {
	b := []byte(id)
	for i, c := range b {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '.' || c == '-') || i == 0 && (c == '.' || c == '-') {
			b[i] = '_'
		}
	}
	return "ordo-" + string(b)
}

// Recover implements driver.Driver: it re-attaches to the container a
// handle state names if it still runs the same task (its labels say so),
// and resumes following its logs. A container found stopped is removed
// and the task reported gone.
func (d *Driver) Recover(ctx context.Context, state driver.HandleState) (driver.Handle, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("docker: recover task %s: %w", state.TaskID, err)
	}
	t, err := taskFromState(state)
	if err != nil {
		return nil, err
	}
	info, err := d.api.inspect(ctx, t.container)
	switch {
	case errors.Is(err, errNotFound):
		return nil, fmt.Errorf("docker: recover task %s: container %s is gone: %w", t.id, t.container, driver.ErrTaskGone)
	case err != nil:
		return nil, fmt.Errorf("docker: recover task %s: %w", t.id, err)
	case info.Config.Labels[LabelTaskID] != t.id:
		return nil, fmt.Errorf("docker: recover task %s: container %s runs task %q: %w", t.id, t.container, info.Config.Labels[LabelTaskID], driver.ErrTaskGone)
	case !info.State.Running:
		if !d.cfg.KeepContainers {
			if err := d.api.remove(ctx, t.container); err != nil {
				d.cfg.Logger.Warn("docker: remove an exited container", "container", t.container, "err", err)
			}
		}
		return nil, fmt.Errorf("docker: recover task %s: container %s has exited: %w", t.id, t.container, driver.ErrTaskGone)
	}
	if !d.addWatcher() {
		return nil, fmt.Errorf("docker: recover task %s: %w", t.id, ErrClosed)
	}
	if t.image == "" {
		t.image = info.Config.Image
	}
	d.useImage(t.image)
	h := newHandle(d, t)
	go h.run(since(t.logs.stdout))
	return h, nil
}

// isNotRunning reports whether err is the daemon's answer for a
// container that is not running (409) or gone (404).
func isNotRunning(err error) bool {
	if errors.Is(err, errNotFound) {
		return true
	}
	var ae *apiError
	return errors.As(err, &ae) && ae.Status == 409 && strings.Contains(ae.Message, "not running")
}
