// Package stats samples what a client reports of its host and of its
// tasks' processes, from /proc: the host's memory, per-core CPU use,
// uptime and disks (GET /v1/client/stats, Nomad's HostStats), and the
// memory and CPU of a process group (GET /v1/client/allocation/{id}/stats,
// Nomad's TaskResourceUsage for exec tasks).
//
// # Usage
//
//	s := stats.New(stats.Config{AllocDir: filepath.Join(dataDir, "alloc")})
//	host, err := s.Host()
//	task := s.Processes(stats.GroupPIDs(s.ProcRoot(), leaderPID))
//
// CPU percentages cover the time since the previous sample of the same
// core or process (since boot, or since the process started, for the
// first one), as Nomad's do.
//
// # Concurrency
//
// A Sampler is safe for concurrent use; its previous samples are guarded
// by one mutex.
//
// # Invariants
//
//   - Only Linux's /proc is read; other systems answer ErrUnsupported.
//   - Time comes from Config.Clock only.
package stats
