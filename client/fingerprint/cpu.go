package fingerprint

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// DefaultCoreMHz is what a core counts for when /proc/cpuinfo names no
// frequency.
const DefaultCoreMHz = 1000

// CPU is what /proc/cpuinfo says about the processors.
type CPU struct {
	// Cores counts logical processors (the "processor" entries).
	Cores int
	// MHz is the highest "cpu MHz" of any processor; 0 when none is given.
	MHz float64
	// ModelName is the first "model name" (or "Processor" on ARM).
	ModelName string
}

// TotalMHz is the node's compute: Cores × MHz, or Cores × DefaultCoreMHz
// when the frequency is unknown.
func (c CPU) TotalMHz() int {
	if c.MHz <= 0 {
		return c.Cores * DefaultCoreMHz
	}
	return int(float64(c.Cores) * c.MHz)
}

// ParseCPUInfo reads the text of /proc/cpuinfo.
func ParseCPUInfo(r io.Reader) (CPU, error) {
	var c CPU
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		key, val, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		key, val = strings.TrimSpace(key), strings.TrimSpace(val)
		switch key {
		case "processor":
			// x86 and arm64 number processors; old ARM kernels also have a
			// "Processor : <model>" line, which is not a processor entry.
			if _, err := strconv.Atoi(val); err == nil {
				c.Cores++
			} else if c.ModelName == "" {
				c.ModelName = val
			}
		case "cpu MHz":
			mhz, err := strconv.ParseFloat(val, 64)
			if err != nil {
				return CPU{}, fmt.Errorf("cpuinfo: cpu MHz %q: %w", val, err)
			}
			c.MHz = max(c.MHz, mhz)
		case "model name":
			if c.ModelName == "" {
				c.ModelName = val
			}
		}
	}
	if err := sc.Err(); err != nil {
		return CPU{}, fmt.Errorf("cpuinfo: %w", err)
	}
	if c.Cores == 0 {
		return CPU{}, fmt.Errorf("cpuinfo: no processor entries")
	}
	return c, nil
}
