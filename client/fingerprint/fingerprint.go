package fingerprint

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"

	"github.com/ordoplane/ordo/client/driver"
	"github.com/ordoplane/ordo/events"
)

// Config says where Run looks.
type Config struct {
	// ProcRoot is where proc is mounted; default "/proc". Tests point it
	// at a directory holding cpuinfo, meminfo and sys/kernel/osrelease.
	ProcRoot string
	// OSRelease is the os-release file; default "/etc/os-release". Optional.
	OSRelease string
	// DataDir is the client's data directory, whose file system's free
	// space is the node's disk. Required.
	DataDir string
	// Hostname returns the node's hostname; default os.Hostname.
	Hostname func() (string, error)
	// Drivers are fingerprinted in turn.
	Drivers []driver.Driver
}

// Result is what Run found.
type Result struct {
	Attributes map[string]string
	Resources  events.NodeResources
	Drivers    map[string]events.DriverInfo
	// Hostname is the node's hostname (also unique.hostname).
	Hostname string
}

// Run fingerprints the node.
func Run(cfg Config) (Result, error) {
	if cfg.ProcRoot == "" {
		cfg.ProcRoot = "/proc"
	}
	if cfg.OSRelease == "" {
		cfg.OSRelease = "/etc/os-release"
	}
	if cfg.Hostname == nil {
		cfg.Hostname = os.Hostname
	}
	if cfg.DataDir == "" {
		return Result{}, errors.New("fingerprint: DataDir is required")
	}
	r := Result{Attributes: map[string]string{
		"kernel.name": runtime.GOOS,
		"cpu.arch":    runtime.GOARCH,
		"os.name":     runtime.GOOS,
	}, Drivers: map[string]events.DriverInfo{}}
	attrs := r.Attributes

	f, err := os.Open(filepath.Join(cfg.ProcRoot, "cpuinfo"))
	if err != nil {
		return Result{}, fmt.Errorf("fingerprint: %w", err)
	}
	cpu, err := ParseCPUInfo(f)
	f.Close()
	if err != nil {
		return Result{}, fmt.Errorf("fingerprint %s: %w", f.Name(), err)
	}
	r.Resources.CPU = cpu.TotalMHz()
	attrs["cpu.numcores"] = strconv.Itoa(cpu.Cores)
	attrs["cpu.totalcompute"] = strconv.Itoa(r.Resources.CPU)
	if cpu.MHz > 0 {
		attrs["cpu.frequency"] = strconv.Itoa(int(cpu.MHz))
	}
	if cpu.ModelName != "" {
		attrs["cpu.modelname"] = cpu.ModelName
	}

	if f, err = os.Open(filepath.Join(cfg.ProcRoot, "meminfo")); err != nil {
		return Result{}, fmt.Errorf("fingerprint: %w", err)
	}
	mem, err := ParseMemInfo(f)
	f.Close()
	if err != nil {
		return Result{}, fmt.Errorf("fingerprint %s: %w", f.Name(), err)
	}
	r.Resources.MemoryMB = int(mem >> 20)
	attrs["memory.totalbytes"] = strconv.FormatUint(mem, 10)

	if b, err := os.ReadFile(filepath.Join(cfg.ProcRoot, "sys", "kernel", "osrelease")); err == nil {
		attrs["kernel.version"] = strings.TrimSpace(string(b))
	}
	if f, err := os.Open(cfg.OSRelease); err == nil {
		id, version := ParseOSRelease(f)
		f.Close()
		if id != "" {
			attrs["os.name"] = id
		}
		if version != "" {
			attrs["os.version"] = version
		}
	}

	free, total, err := diskSpace(cfg.DataDir)
	switch {
	case errors.Is(err, errUnsupported):
	case err != nil:
		return Result{}, fmt.Errorf("fingerprint disk of %s: %w", cfg.DataDir, err)
	default:
		r.Resources.DiskMB = int(free >> 20)
		attrs["unique.storage.bytesfree"] = strconv.FormatUint(free, 10)
		attrs["unique.storage.bytestotal"] = strconv.FormatUint(total, 10)
	}

	if r.Hostname, err = cfg.Hostname(); err != nil {
		return Result{}, fmt.Errorf("fingerprint hostname: %w", err)
	}
	attrs["unique.hostname"] = r.Hostname

	for _, d := range cfg.Drivers {
		info, published := Driver(d) // driver.go
		r.Drivers[d.Name()] = info
		for k, v := range published {
			attrs[k] = v
		}
	}
	return r, nil
}
