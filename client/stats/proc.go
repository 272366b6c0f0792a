package stats

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/ordoplane/ordo/api"
)

// Nomad's names of what is measured for a process.
var (
	memoryMeasured = []string{"RSS", "Swap"}
	cpuMeasured    = []string{"System Mode", "User Mode", "Percent"}
)

// procStat is what /proc/<pid>/stat says of a process.
type procStat struct {
	pgrp        int
	utime, stim uint64
	start       uint64
}

// readStat reads /proc/<pid>/stat. The command name, field 2, is in
// parentheses and may hold spaces, so fields are counted from the last ')'.
func readStat(procRoot string, pid int) (procStat, error) {
	b, err := os.ReadFile(filepath.Join(procRoot, strconv.Itoa(pid), "stat"))
	if err != nil {
		return procStat{}, err
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return procStat{}, fmt.Errorf("stats: malformed stat of pid %d", pid)
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 20 {
		return procStat{}, fmt.Errorf("stats: malformed stat of pid %d", pid)
	}
	// f[0] is field 3 (state): pgrp is field 5, utime 14, stime 15, starttime 22.
	var st procStat
	st.pgrp, _ = strconv.Atoi(f[2])
	st.utime, _ = strconv.ParseUint(f[11], 10, 64)
	st.stim, _ = strconv.ParseUint(f[12], 10, 64)
	st.start, _ = strconv.ParseUint(f[19], 10, 64)
	return st, nil
}

// GroupPIDs returns the live processes of process group pgid (an exec
// task's processes: its leader and what it forked), leader first.
func GroupPIDs(procRoot string, pgid int) []int {
	ents, err := os.ReadDir(procRoot)
	if err != nil {
		return nil
	}
	out := []int{}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == pgid {
			continue
		}
		if st, err := readStat(procRoot, pid); err == nil && st.pgrp == pgid {
			out = append(out, pid)
		}
	}
	if _, err := readStat(procRoot, pgid); err == nil {
		out = append([]int{pgid}, out...)
	}
	return out
}

// Processes samples pids: each one's memory and CPU since its previous
// sample (since it started, the first time), and their sum.
func (s *Sampler) Processes(pids []int) *api.TaskResourceUsage {
	now := s.cfg.Clock.Now()
	up, _ := s.uptime()
	mhz := s.coreMHz()
	t := &api.TaskResourceUsage{Timestamp: now.UnixNano(), Pids: map[string]*api.ResourceUsage{},
		ResourceUsage: &api.ResourceUsage{MemoryStats: &api.MemoryStats{Measured: memoryMeasured},
			CpuStats: &api.CpuStats{Measured: cpuMeasured}}}
	live := map[procKey]bool{}
	for _, pid := range pids {
		st, err := readStat(s.cfg.ProcRoot, pid)
		if err != nil {
			continue // exited meanwhile
		}
		key := procKey{pid, st.start}
		live[key] = true
		s.mu.Lock()
		prev, ok := s.mu.procs[key]
		s.mu.procs[key] = procSample{at: now, user: st.utime, syst: st.stim}
		s.mu.Unlock()
		var secs float64
		if ok {
			secs = now.Sub(prev.at).Seconds()
		} else {
			secs = up - float64(st.start)/ticksPerSecond
		}
		cpu := &api.CpuStats{Measured: cpuMeasured}
		if secs > 0 {
			cpu.UserMode = 100 * float64(st.utime-prev.user) / ticksPerSecond / secs
			cpu.SystemMode = 100 * float64(st.stim-prev.syst) / ticksPerSecond / secs
			cpu.Percent = cpu.UserMode + cpu.SystemMode
			cpu.TotalTicks = cpu.Percent / 100 * mhz
		}
		mem := s.memoryOf(pid)
		u := &api.ResourceUsage{MemoryStats: mem, CpuStats: cpu}
		t.Pids[strconv.Itoa(pid)] = u
		AddUsage(t.ResourceUsage, u)
	}
	s.forget(pids, live)
	return t
}

// forget drops the previous samples of sampled pids that are gone.
func (s *Sampler) forget(pids []int, live map[procKey]bool) {
	asked := map[int]bool{}
	for _, p := range pids {
		asked[p] = true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for k := range s.mu.procs {
		if asked[k.pid] && !live[k] {
			delete(s.mu.procs, k)
		}
	}
}

// memoryOf reads VmRSS and VmSwap of /proc/<pid>/status.
func (s *Sampler) memoryOf(pid int) *api.MemoryStats {
	m := &api.MemoryStats{Measured: memoryMeasured}
	f, err := os.Open(filepath.Join(s.cfg.ProcRoot, strconv.Itoa(pid), "status"))
	if err != nil {
		return m
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		fs := strings.Fields(v)
		if len(fs) == 0 {
			continue
		}
		n, _ := strconv.ParseUint(fs[0], 10, 64)
		switch k {
		case "VmRSS":
			m.RSS = n << 10
		case "VmSwap":
			m.Swap = n << 10
		}
	}
	m.Usage = m.RSS
	return m
}

// AddUsage adds src's memory and CPU to dst's (both with MemoryStats and
// CpuStats set), and takes src's Measured names.
func AddUsage(dst, src *api.ResourceUsage) {
	dm, sm := dst.MemoryStats, src.MemoryStats
	dm.RSS += sm.RSS
	dm.Swap += sm.Swap
	dm.Usage += sm.Usage
	dm.Measured = sm.Measured
	dc, sc := dst.CpuStats, src.CpuStats
	dc.UserMode += sc.UserMode
	dc.SystemMode += sc.SystemMode
	dc.Percent += sc.Percent
	dc.TotalTicks += sc.TotalTicks
	dc.Measured = sc.Measured
}
