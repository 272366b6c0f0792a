package fingerprint_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ordoplane/ordo/client/driver"
	"github.com/ordoplane/ordo/client/fingerprint"
)

func open(t *testing.T, path string) *os.File {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func TestParseCPUInfo(t *testing.T) {
	for _, tc := range []struct {
		file      string
		cores     int
		mhz       float64
		total     int
		modelName string
	}{
		{"testdata/x86/cpuinfo", 2, 2445.402, 4890, "AMD EPYC"},
		{"testdata/arm64/cpuinfo", 4, 0, 4000, ""}, // no MHz: 1000 per core
	} {
		t.Run(tc.file, func(t *testing.T) {
			c, err := fingerprint.ParseCPUInfo(open(t, tc.file))
			if err != nil {
				t.Fatal(err)
			}
			if c.Cores != tc.cores || c.MHz != tc.mhz || c.TotalMHz() != tc.total || c.ModelName != tc.modelName {
				t.Errorf("got %+v (total %d), want %d cores at %v MHz, total %d, model %q",
					c, c.TotalMHz(), tc.cores, tc.mhz, tc.total, tc.modelName)
			}
		})
	}
	for _, bad := range []string{"", "flags : fpu\n", "processor : 0\ncpu MHz : fast\n"} {
		if _, err := fingerprint.ParseCPUInfo(strings.NewReader(bad)); err == nil {
			t.Errorf("ParseCPUInfo(%q): no error", bad)
		}
	}
}

func TestParseMemInfo(t *testing.T) {
	for file, want := range map[string]uint64{
		"testdata/x86/meminfo":   24683656 << 10,
		"testdata/arm64/meminfo": 8039068 << 10,
	} {
		got, err := fingerprint.ParseMemInfo(open(t, file))
		if err != nil || got != want {
			t.Errorf("%s: %d, %v; want %d", file, got, err, want)
		}
	}
	for _, bad := range []string{"", "MemFree: 1 kB\n", "MemTotal: lots kB\n", "MemTotal: 1 parsecs\n", "MemTotal:\n"} {
		if _, err := fingerprint.ParseMemInfo(strings.NewReader(bad)); err == nil {
			t.Errorf("ParseMemInfo(%q): no error", bad)
		}
	}
}

func TestParseOSRelease(t *testing.T) {
	id, version := fingerprint.ParseOSRelease(open(t, "testdata/os-release"))
	if id != "debian" || version != "12" {
		t.Errorf("got %q %q, want debian 12", id, version)
	}
}

// fakeDriver is a driver that only fingerprints.
type fakeDriver struct {
	name string
	fp   driver.Fingerprint
}

func (d fakeDriver) Name() string                    { return d.name }
func (d fakeDriver) Fingerprint() driver.Fingerprint { return d.fp }
func (d fakeDriver) Start(context.Context, driver.TaskConfig) (driver.Handle, error) {
	return nil, driver.ErrTaskGone
}
func (d fakeDriver) Recover(context.Context, driver.HandleState) (driver.Handle, error) {
	return nil, driver.ErrTaskGone
}

func TestRun(t *testing.T) {
	dir := t.TempDir()
	r, err := fingerprint.Run(fingerprint.Config{
		ProcRoot: "testdata/arm64", OSRelease: "testdata/os-release", DataDir: dir,
		Hostname: func() (string, error) { return "node-a", nil },
		Drivers: []driver.Driver{
			fakeDriver{"exec", driver.Fingerprint{Detected: true, Healthy: true, Attributes: map[string]string{"driver.exec.version": "1"}}},
			fakeDriver{"docker", driver.Fingerprint{}},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"cpu.numcores": "4", "cpu.totalcompute": "4000", "memory.totalbytes": "8232005632",
		"kernel.version": "5.15.0-1034-aws", "os.name": "debian", "os.version": "12",
		"unique.hostname": "node-a", "driver.exec": "1", "driver.exec.version": "1",
	}
	for k, v := range want {
		if r.Attributes[k] != v {
			t.Errorf("attribute %s = %q, want %q", k, r.Attributes[k], v)
		}
	}
	if _, ok := r.Attributes["driver.docker"]; ok {
		t.Error("undetected driver published as an attribute")
	}
	if r.Resources.CPU != 4000 || r.Resources.MemoryMB != 7850 {
		t.Errorf("resources %+v", r.Resources)
	}
	if r.Resources.DiskMB <= 0 || r.Attributes["unique.storage.bytesfree"] == "" {
		t.Errorf("no disk: %+v", r.Resources)
	}
	if d := r.Drivers["exec"]; !d.Detected || !d.Healthy {
		t.Errorf("exec driver %+v", d)
	}
	if d, ok := r.Drivers["docker"]; !ok || d.Detected {
		t.Errorf("docker driver %+v, %v", d, ok)
	}

	// A missing proc file fails with its name.
	_, err = fingerprint.Run(fingerprint.Config{ProcRoot: filepath.Join(dir, "nope"), DataDir: dir})
	if err == nil || !strings.Contains(err.Error(), "cpuinfo") {
		t.Errorf("missing cpuinfo: %v", err)
	}
}
