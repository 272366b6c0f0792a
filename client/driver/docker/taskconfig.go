package docker

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/ordoplane/ordo/client/driver"
)

// Labels the driver puts on its containers, by which it finds them again.
const (
	LabelAllocID  = "com.ordoplane.ordo.alloc_id"
	LabelTaskName = "com.ordoplane.ordo.task_name"
	LabelTaskID   = "com.ordoplane.ordo.task_id"
	LabelOwner    = "com.ordoplane.ordo.owner"
	labelPrefix   = "com.ordoplane.ordo."
)

// Where the allocation's directories appear inside a container.
const (
	containerAllocDir   = "/alloc"
	containerLocalDir   = "/local"
	containerSecretsDir = "/secrets"
)

// defaultKillTimeout is the kill timeout of a task that sets none.
const defaultKillTimeout = 5 * time.Second

// defaultPullTimeout bounds an image pull when image_pull_timeout is unset.
const defaultPullTimeout = 5 * time.Minute

// configKeys are the keys of a docker task's config block.
var configKeys = []string{"image", "command", "args", "entrypoint", "work_dir", "network_mode", "ports", "labels",
	"volumes", "privileged", "cap_add", "cap_drop", "force_pull", "image_pull_timeout", "auth", "init", "hostname",
	"extra_hosts", "dns_servers", "dns_search_domains", "dns_options", "shm_size", "pids_limit", "readonly_rootfs",
	"security_opt", "mount", "ulimit", "devices", "logging"}

// launch is a task's configuration checked and resolved for starting it.
type launch struct {
	image       string
	forcePull   bool
	pullTimeout time.Duration
	auth        string
	spec        containerSpec
	logs        logSpec
	killSignal  int
	killTimeout time.Duration
}

// parser reads a task's config block, keeping the first error.
type parser struct {
	cfg map[string]any
	// prefix is the path of a nested block's keys ("mount.0."); "" at the
	// top of the config block.
	prefix string
	err    error
}

func (p *parser) fail(key, format string, a ...any) {
	if p.err == nil {
		p.err = &driver.ConfigError{Key: "config." + p.prefix + key, Reason: fmt.Sprintf(format, a...)}
	}
}

func (p *parser) str(key string) string {
	switch v := p.cfg[key].(type) {
	case nil:
		return ""
	case string:
		return v
	default:
		p.fail(key, "is a %T, want a string", v)
		return ""
	}
}

func (p *parser) boolean(key string) bool {
	switch v := p.cfg[key].(type) {
	case nil:
		return false
	case bool:
		return v
	default:
		p.fail(key, "is a %T, want a bool", v)
		return false
	}
}

func (p *parser) integer(key string) (int64, bool) {
	switch v := p.cfg[key].(type) {
	case nil:
		return 0, false
	case int64:
		return v, true
	case int:
		return int64(v), true
	case float64:
		if v != float64(int64(v)) {
			p.fail(key, "%v is not a whole number", v)
		}
		return int64(v), true
	default:
		p.fail(key, "is a %T, want a number", v)
		return 0, false
	}
}

func (p *parser) strings(key string) []string {
	switch v := p.cfg[key].(type) {
	case nil:
		return nil
	case []string:
		return slices.Clone(v)
	case []any:
		out := make([]string, 0, len(v))
		for i, e := range v {
			s, ok := e.(string)
			if !ok {
				p.fail(key, "element %d is a %T, want a string", i, e)
				return nil
			}
			out = append(out, s)
		}
		return out
	default:
		p.fail(key, "is a %T, want a list of strings", v)
		return nil
	}
}

// stringMap reads a block of string values: a map, or the list of maps
// HCL1-style jobspecs give for a block.
func (p *parser) stringMap(key string) map[string]string {
	var blocks []map[string]any
	switch v := p.cfg[key].(type) {
	case nil:
		return nil
	case map[string]any:
		blocks = append(blocks, v)
	case map[string]string:
		return maps.Clone(v)
	case []any:
		for i, e := range v {
			m, ok := e.(map[string]any)
			if !ok {
				p.fail(key, "element %d is a %T, want a block", i, e)
				return nil
			}
			blocks = append(blocks, m)
		}
	default:
		p.fail(key, "is a %T, want a block of strings", v)
		return nil
	}
	out := map[string]string{}
	for _, b := range blocks {
		for k, e := range b {
			s, ok := e.(string)
			if !ok {
				p.fail(key+"."+k, "is a %T, want a string", e)
				return nil
			}
			out[k] = s
		}
	}
	return out
}

// parseTask checks cfg and returns what Start needs; configuration errors
// are *driver.ConfigError naming the field.
func (d *Driver) parseTask(cfg driver.TaskConfig) (launch, error) {
	var l launch
	for k := range cfg.Config {
		if !slices.Contains(configKeys, k) {
			keys := slices.Clone(configKeys)
			sort.Strings(keys)
			return l, &driver.ConfigError{Key: "config." + k, Reason: "unknown key (docker takes " + strings.Join(keys, ", ") + ")"}
		}
	}
	p := &parser{cfg: cfg.Config}
	l.image = p.str("image")
	if p.err == nil && l.image == "" {
		p.fail("image", "required")
	}
	l.forcePull = p.boolean("force_pull")
	l.pullTimeout = defaultPullTimeout
	if s := p.str("image_pull_timeout"); s != "" {
		t, err := time.ParseDuration(s)
		if err != nil || t <= 0 {
			p.fail("image_pull_timeout", "%q is not a positive duration", s)
		}
		l.pullTimeout = t
	}
	if auth := p.stringMap("auth"); len(auth) > 0 {
		l.auth = registryAuth(auth)
	}
	s := &l.spec
	s.Image = l.image
	if cmd := p.str("command"); cmd != "" {
		s.Cmd = append([]string{cmd}, p.strings("args")...)
	} else if args := p.strings("args"); len(args) > 0 {
		s.Cmd = args // the image's entrypoint takes them
	}
	s.Entrypoint = p.strings("entrypoint")
	s.WorkingDir = p.str("work_dir")
	s.Hostname = p.str("hostname")
	h := &s.HostConfig
	h.NetworkMode = p.str("network_mode")
	switch h.NetworkMode {
	case "", "host":
		h.NetworkMode = "host"
	case "none":
	case "bridge", "default":
		p.fail("network_mode", "bridge networking is not supported by ordo's docker driver yet: use \"host\" (tasks listen on NOMAD_PORT_<label>) or \"none\"")
	default:
		p.fail("network_mode", "%q is not supported: use \"host\" or \"none\"", h.NetworkMode)
	}
	for _, label := range p.strings("ports") {
		if _, ok := cfg.Env["NOMAD_PORT_"+label]; !ok {
			p.fail("ports", "port %q is not a port of the group's network block", label)
		}
	}
	user := p.stringMap("labels")
	s.Labels = map[string]string{}
	for k, v := range user {
		if strings.HasPrefix(k, labelPrefix) {
			p.fail("labels."+k, "labels starting %q are the driver's", labelPrefix)
		}
		s.Labels[k] = v
	}
	s.Labels[LabelAllocID], s.Labels[LabelTaskName], s.Labels[LabelTaskID] = cfg.AllocID, cfg.Task, cfg.ID
	if d.cfg.Owner != "" {
		s.Labels[LabelOwner] = d.cfg.Owner
	}
	if h.Privileged = p.boolean("privileged"); h.Privileged && !d.cfg.AllowPrivileged {
		p.fail("privileged", "privileged containers are not allowed on this client (plugin \"docker\" config allow_privileged)")
	}
	if _, ok := cfg.Config["init"]; ok {
		v := p.boolean("init")
		h.Init = &v
	}
	h.ReadonlyRootfs = p.boolean("readonly_rootfs")
	h.CapAdd, h.CapDrop = p.strings("cap_add"), p.strings("cap_drop")
	h.SecurityOpt = p.strings("security_opt")
	h.ExtraHosts = p.strings("extra_hosts")
	h.DNS, h.DNSSearch, h.DNSOptions = p.strings("dns_servers"), p.strings("dns_search_domains"), p.strings("dns_options")
	if n, ok := p.integer("shm_size"); ok {
		if n <= 0 {
			p.fail("shm_size", "must be positive (bytes)")
		}
		h.ShmSize = n
	}
	if n, ok := p.integer("pids_limit"); ok {
		if n <= 0 {
			p.fail("pids_limit", "must be positive")
		}
		h.PidsLimit = &n
	}
	binds, err := d.binds(cfg, p.strings("volumes"))
	if err != nil {
		p.fail("volumes", "%v", err)
	}
	h.Mounts = d.mounts(p, cfg) // taskconfig_mounts.go
	h.Ulimits = ulimits(p)      // taskconfig_mounts.go
	h.Devices = devices(p)      // taskconfig_mounts.go
	h.LogConfig = logConfig(p)  // taskconfig_mounts.go
	if p.err != nil {
		return l, p.err
	}
	h.Binds = binds
	if cfg.CPU > 0 {
		h.CPUShares = max(int64(cfg.CPU), 2) // the kernel's minimum weight
	}
	if cfg.MemoryMB > 0 {
		h.Memory = int64(cfg.MemoryMB) << 20
		h.MemorySwap = h.Memory // no swap beyond the limit
	}
	if cfg.MemoryMaxMB > cfg.MemoryMB && cfg.MemoryMB > 0 {
		// memory_max: the hard limit grows to it and memory, what the
		// task was placed by, becomes the soft reservation.
		h.MemoryReservation = h.Memory
		h.Memory = int64(cfg.MemoryMaxMB) << 20
		h.MemorySwap = h.Memory
	}
	s.Env = containerEnv(cfg.Env)

	sig, err := driver.ParseSignal(cfg.KillSignal)
	if err != nil {
		return l, &driver.ConfigError{Key: "kill_signal", Reason: err.Error()}
	}
	l.killSignal = sig
	switch {
	case cfg.KillTimeout < 0:
		return l, &driver.ConfigError{Key: "kill_timeout", Reason: "must not be negative"}
	case cfg.KillTimeout == 0:
		l.killTimeout = defaultKillTimeout
	default:
		l.killTimeout = cfg.KillTimeout
	}
	if cfg.LogMaxBytes < 0 {
		return l, &driver.ConfigError{Key: "logs.max_file_size", Reason: "must not be negative"}
	}
	l.logs = logSpec{stdout: cfg.StdoutPath, stderr: cfg.StderrPath, maxBytes: cfg.LogMaxBytes, maxFiles: max(cfg.LogMaxFiles, 1)}
	return l, nil
}

// registryAuth encodes an auth block (username, password, email,
// server_address) as the X-Registry-Auth header wants it.
func registryAuth(auth map[string]string) string {
	b, _ := json.Marshal(map[string]string{"username": auth["username"], "password": auth["password"],
		"email": auth["email"], "serveraddress": auth["server_address"]})
	return base64.URLEncoding.EncodeToString(b)
}

// containerEnv renders the task's environment for the container: the
// allocation's directories are where the container sees them.
func containerEnv(env map[string]string) []string {
	out := make([]string, 0, len(env))
	for k, v := range env {
		switch k {
		case "NOMAD_ALLOC_DIR":
			v = containerAllocDir
		case "NOMAD_TASK_DIR":
			v = containerLocalDir
		case "NOMAD_SECRETS_DIR":
			v = containerSecretsDir
		}
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}

// binds returns the container's bind mounts: the allocation's shared
// directory at /alloc, the task's local/ and secrets/ at /local and
// /secrets, and the task's volumes ("host:container[:ro]"). A relative
// host path is relative to the task's directory and must stay inside the
// allocation's directory; an absolute one needs volumes enabled.
func (d *Driver) binds(cfg driver.TaskConfig, volumes []string) ([]string, error) {
	var out []string
	if dir := cfg.Env["NOMAD_ALLOC_DIR"]; dir != "" {
		if fi, err := os.Stat(dir); err == nil && fi.IsDir() {
			out = append(out, dir+":"+containerAllocDir)
		}
	}
	if cfg.Dir != "" {
		for _, sub := range []struct {
			name, at string
			mode     os.FileMode
		}{{"local", containerLocalDir, 0o755}, {"secrets", containerSecretsDir, 0o700}} {
			p := filepath.Join(cfg.Dir, sub.name)
			if err := os.MkdirAll(p, sub.mode); err != nil {
				return nil, fmt.Errorf("task directory: %w", err)
			}
			out = append(out, p+":"+sub.at)
		}
	}
	for i, v := range volumes {
		parts := strings.Split(v, ":")
		if len(parts) < 2 || len(parts) > 3 || parts[0] == "" || !filepath.IsAbs(parts[1]) {
			return nil, fmt.Errorf("element %d %q: want host_path:/container/path[:ro]", i, v)
		}
		if len(parts) == 3 && parts[2] != "ro" && parts[2] != "rw" {
			return nil, fmt.Errorf("element %d %q: the mode must be ro or rw", i, v)
		}
		host, err := d.hostPath(cfg, parts[0])
		if err != nil {
			return nil, fmt.Errorf("element %d %q: %w", i, v, err)
		}
		parts[0] = host
		out = append(out, strings.Join(parts, ":"))
	}
	return out, nil
}

// hostPath resolves the host side of a volume or bind mount: a relative
// path is relative to the task's directory and must stay inside the
// allocation's directory; an absolute one needs volumes enabled.
func (d *Driver) hostPath(cfg driver.TaskConfig, p string) (string, error) {
	if filepath.IsAbs(p) {
		if !d.cfg.VolumesEnabled {
			return "", errors.New("host paths outside the allocation need volumes enabled in the client's plugin \"docker\" config")
		}
		return filepath.Clean(p), nil
	}
	if cfg.Dir == "" {
		return "", errors.New("a relative path needs a task directory")
	}
	host := filepath.Join(cfg.Dir, p)
	if rel, err := filepath.Rel(filepath.Dir(cfg.Dir), host); err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
		return "", errors.New("a relative path must stay inside the allocation directory")
	}
	return host, nil
}
