package httpapi

import (
	"net/http"

	"github.com/ordoplane/ordo/api"
	"github.com/ordoplane/ordo/client/stats"
)

// allocStats is GET /v1/client/allocation/{alloc_id}/stats: the memory
// and CPU of each running task's processes (an exec task's process
// group), read from /proc, and their sum (api.AllocResourceUsage).
func (s *Server) allocStats(w http.ResponseWriter, r *http.Request) {
	_, c, err := s.controls(r)
	if err != nil {
		writeError(w, err)
		return
	}
	now := s.cfg.Clock.Now().UnixNano()
	out := api.AllocResourceUsage{Timestamp: now, Tasks: map[string]*api.TaskResourceUsage{},
		ResourceUsage: &api.ResourceUsage{MemoryStats: &api.MemoryStats{}, CpuStats: &api.CpuStats{}}}
	for task, pid := range c.TaskPIDs() {
		t := s.cfg.Stats.Processes(stats.GroupPIDs(s.cfg.Stats.ProcRoot(), pid))
		out.Tasks[task] = t
		stats.AddUsage(out.ResourceUsage, t.ResourceUsage)
	}
	s.answer(w, out, nil)
}

// hostStats is GET /v1/client/stats: the host's memory, CPU, disks and
// uptime (api.HostStats).
func (s *Server) hostStats(w http.ResponseWriter, r *http.Request) {
	h, err := s.cfg.Stats.Host()
	if err != nil {
		err = &apiError{Status: http.StatusNotImplemented, Message: err.Error()}
	}
	s.answer(w, h, err)
}
