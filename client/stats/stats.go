package stats

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ordoplane/ordo/api"
	"github.com/ordoplane/ordo/clock"
)

// ErrUnsupported is returned by Host on a system without Linux's /proc.
var ErrUnsupported = errors.New("stats: host statistics need Linux's /proc")

// ticksPerSecond is Linux's USER_HZ, the unit of /proc's CPU times.
const ticksPerSecond = 100

// Config configures a Sampler.
type Config struct {
	// ProcRoot is where proc is mounted; default "/proc".
	ProcRoot string
	// AllocDir is the directory of the allocations, whose disk is
	// reported as AllocDirStats; optional.
	AllocDir string
	// Clock stamps samples; default clock.System.
	Clock clock.Clock
}

// Sampler samples host and process statistics. Build it with New.
type Sampler struct {
	cfg Config
	mu  struct {
		sync.Mutex
		// cpus and procs are the previous samples, by core name and by
		// pid and start time.
		cpus  map[string]cpuTimes
		procs map[procKey]procSample
		mhz   float64
	}
}

type cpuTimes struct{ user, system, idle, total float64 }

type procKey struct {
	pid   int
	start uint64
}

type procSample struct {
	at         time.Time
	user, syst uint64
}

// New returns a Sampler of cfg; zero fields take their defaults.
func New(cfg Config) *Sampler {
	if cfg.ProcRoot == "" {
		cfg.ProcRoot = "/proc"
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.System{}
	}
	s := &Sampler{cfg: cfg}
	s.mu.cpus = map[string]cpuTimes{}
	s.mu.procs = map[procKey]procSample{}
	return s
}

// ProcRoot returns where the sampler reads proc.
func (s *Sampler) ProcRoot() string { return s.cfg.ProcRoot }

// Host samples the host: memory, each core's use since the previous
// sample, uptime, the disks mounted and the allocation directory's disk.
func (s *Sampler) Host() (api.HostStats, error) {
	if runtime.GOOS != "linux" {
		return api.HostStats{}, ErrUnsupported
	}
	now := s.cfg.Clock.Now()
	mem, err := s.memory()
	if err != nil {
		return api.HostStats{}, err
	}
	cpus, ticks, err := s.cpus()
	if err != nil {
		return api.HostStats{}, err
	}
	up, err := s.uptime()
	if err != nil {
		return api.HostStats{}, err
	}
	h := api.HostStats{Memory: mem, CPU: cpus, Uptime: uint64(up), CPUTicksConsumed: ticks,
		DiskStats: s.disks(), Timestamp: now.UnixNano()}
	if s.cfg.AllocDir != "" {
		if d, err := diskStats("", s.cfg.AllocDir); err == nil {
			h.AllocDirStats = d
		}
	}
	return h, nil
}

// memory reads /proc/meminfo.
func (s *Sampler) memory() (*api.HostMemoryStats, error) {
	f, err := os.Open(filepath.Join(s.cfg.ProcRoot, "meminfo"))
	if err != nil {
		return nil, fmt.Errorf("stats: %w", err)
	}
	defer f.Close()
	kb := map[string]uint64{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		if fs := strings.Fields(v); len(fs) > 0 {
			n, _ := strconv.ParseUint(fs[0], 10, 64)
			kb[k] = n << 10
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("stats: read meminfo: %w", err)
	}
	m := &api.HostMemoryStats{Total: kb["MemTotal"], Free: kb["MemFree"], Available: kb["MemAvailable"]}
	if m.Available == 0 {
		m.Available = m.Free + kb["Buffers"] + kb["Cached"]
	}
	m.Used = m.Total - min(m.Total, m.Available)
	return m, nil
}

// cpus reads /proc/stat: each core's user, system and idle percent since
// the previous sample, and the MHz consumed over it.
func (s *Sampler) cpus() ([]*api.HostCPUStats, float64, error) {
	b, err := os.ReadFile(filepath.Join(s.cfg.ProcRoot, "stat"))
	if err != nil {
		return nil, 0, fmt.Errorf("stats: %w", err)
	}
	mhz := s.coreMHz()
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []*api.HostCPUStats
	var consumed float64
	for line := range strings.Lines(string(b)) {
		fs := strings.Fields(line)
		if len(fs) < 5 || !strings.HasPrefix(fs[0], "cpu") || fs[0] == "cpu" {
			continue
		}
		var v [8]float64
		for i := 1; i < len(fs) && i <= len(v); i++ {
			v[i-1], _ = strconv.ParseFloat(fs[i], 64)
		}
		// user nice system idle iowait irq softirq steal
		cur := cpuTimes{user: v[0] + v[1], system: v[2] + v[5] + v[6], idle: v[3] + v[4]}
		cur.total = cur.user + cur.system + cur.idle + v[7]
		prev := s.mu.cpus[fs[0]]
		s.mu.cpus[fs[0]] = cur
		d := cur.total - prev.total
		st := &api.HostCPUStats{CPU: fs[0]}
		if d > 0 {
			st.User = 100 * (cur.user - prev.user) / d
			st.System = 100 * (cur.system - prev.system) / d
			st.Idle = 100 * (cur.idle - prev.idle) / d
		}
		consumed += (st.User + st.System) / 100 * mhz
		out = append(out, st)
	}
	return out, consumed, nil
}

// coreMHz returns one core's speed from /proc/cpuinfo, read once.
func (s *Sampler) coreMHz() float64 {
	s.mu.Lock()
	mhz := s.mu.mhz
	s.mu.Unlock()
	if mhz > 0 {
		return mhz
	}
	b, err := os.ReadFile(filepath.Join(s.cfg.ProcRoot, "cpuinfo"))
	if err == nil {
		for line := range strings.Lines(string(b)) {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "cpu MHz" {
				mhz, _ = strconv.ParseFloat(strings.TrimSpace(v), 64)
				break
			}
		}
	}
	if mhz <= 0 {
		mhz = 1000 // no frequency published (some virtual machines): Nomad's fallback
	}
	s.mu.Lock()
	s.mu.mhz = mhz
	s.mu.Unlock()
	return mhz
}

// uptime reads /proc/uptime, in seconds.
func (s *Sampler) uptime() (float64, error) {
	b, err := os.ReadFile(filepath.Join(s.cfg.ProcRoot, "uptime"))
	if err != nil {
		return 0, fmt.Errorf("stats: %w", err)
	}
	fs := strings.Fields(string(b))
	if len(fs) == 0 {
		return 0, fmt.Errorf("stats: empty uptime")
	}
	up, err := strconv.ParseFloat(fs[0], 64)
	if err != nil {
		return 0, fmt.Errorf("stats: uptime %q: %w", fs[0], err)
	}
	return up, nil
}

// disks reports the block-device filesystems of /proc/mounts.
func (s *Sampler) disks() []*api.HostDiskStats {
	b, err := os.ReadFile(filepath.Join(s.cfg.ProcRoot, "mounts"))
	if err != nil {
		return nil
	}
	seen := map[string]bool{}
	var out []*api.HostDiskStats
	for line := range strings.Lines(string(b)) {
		fs := strings.Fields(line)
		if len(fs) < 2 || !strings.HasPrefix(fs[0], "/dev/") || seen[fs[1]] {
			continue
		}
		seen[fs[1]] = true
		if d, err := diskStats(fs[0], fs[1]); err == nil {
			out = append(out, d)
		}
	}
	return out
}
