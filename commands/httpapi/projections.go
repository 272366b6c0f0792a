package httpapi

import (
	"errors"
	"net/http"
	"strconv"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ordoplane/ordo/api"
	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/projections/fsm"
)

// Projection rebuilds are local to a server: each holds its own
// projections, so these endpoints act on the server addressed and are
// never forwarded to the leader.
//
//	GET  /v1/operator/projections[?checksum=true]   every projection: versions, applied index, state, checksum
//	POST /v1/operator/projections/rebuild  {"Projections": [...], "Parallelism": n}   start an online rebuild (none: all); 202 with the job
//	POST /v1/operator/projections/verify   {"Projections": [...], "Parallelism": n}   rebuild into scratch space and compare checksums; 202
//	GET  /v1/operator/projections/job      the running job, else the last one: progress, events/s, ETA, results
//	DELETE /v1/operator/projections/job    cancel the running or queued job; 200 with it, 404 when there is none
func (s *Server) projectionRoutes() {
	s.handle("GET /v1/operator/projections", endpoint(s.listProjections))
	s.handle("POST /v1/operator/projections/rebuild", endpoint(s.submitProjectionJob(fsm.JobRebuild)))
	s.handle("PUT /v1/operator/projections/rebuild", endpoint(s.submitProjectionJob(fsm.JobRebuild)))
	s.handle("POST /v1/operator/projections/verify", endpoint(s.submitProjectionJob(fsm.JobVerify)))
	s.handle("PUT /v1/operator/projections/verify", endpoint(s.submitProjectionJob(fsm.JobVerify)))
	s.handle("GET /v1/operator/projections/job", endpoint(s.projectionJob))
	s.handle("DELETE /v1/operator/projections/job", endpoint(s.cancelProjectionJob))
}

// ProjectionList is the answer of GET /v1/operator/projections.
type ProjectionList struct {
	Projections []fsm.ProjectionStatus
	// Job is the running projection job, else the last one; nil if none.
	Job *fsm.Job
}

// ProjectionJobRequest is the body of the rebuild and verify endpoints.
type ProjectionJobRequest struct {
	// Projections names the projections; empty means all.
	Projections []string
	// Parallelism is how many projections the job replays at once while
	// the server applies entries (all of them while it is idle): 0 the
	// server's default (one fewer than its cores, at least 1), -1 all of
	// them, n > 0 at most n.
	Parallelism int `json:",omitempty"`
}

type noRebuilder struct{}

func (noRebuilder) Error() string { return "this server runs no projection rebuilder" }

func (s *Server) listProjections(w http.ResponseWriter, r *http.Request) error {
	return listProjections(w, r, s.cfg.Rebuilds)
}

func listProjections(w http.ResponseWriter, r *http.Request, rb *fsm.Rebuilder) error {
	if rb == nil {
		return notImplemented{noRebuilder{}}
	}
	sums, _ := strconv.ParseBool(r.URL.Query().Get("checksum"))
	st, err := rb.Status(sums)
	if err != nil {
		return err
	}
	out := ProjectionList{Projections: st}
	if j, ok := rb.Job(); ok {
		out.Job = &j
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func (s *Server) submitProjectionJob(kind string) func(http.ResponseWriter, *http.Request) error {
	return func(w http.ResponseWriter, r *http.Request) error {
		rb := s.cfg.Rebuilds
		if rb == nil {
			return notImplemented{noRebuilder{}}
		}
		var body ProjectionJobRequest
		if r.ContentLength != 0 {
			if err := commands.DecodeJSON(r.Body, s.cfg.BodyLimit, &body); err != nil {
				return err
			}
		}
		j, err := rb.SubmitParallel(kind, body.Projections, body.Parallelism)
		var unknown *fsm.UnknownProjectionError
		switch {
		case errors.Is(err, fsm.ErrParallelism):
			return commands.Invalid("Parallelism", "%v", err)
		case errors.As(err, &unknown):
			return commands.Invalid("Projections", "%v", err)
		case errors.Is(err, fsm.ErrRebuildBusy):
			return &commands.ConflictError{Reason: err.Error()}
		case err != nil:
			return err
		}
		writeJSON(w, http.StatusAccepted, j)
		return nil
	}
}

func (s *Server) projectionJob(w http.ResponseWriter, _ *http.Request) error {
	return projectionJob(w, s.cfg.Rebuilds)
}

func (s *Server) cancelProjectionJob(w http.ResponseWriter, _ *http.Request) error {
	return answerJob(w, s.cfg.Rebuilds, "running projection job", (*fsm.Rebuilder).Cancel)
}

func projectionJob(w http.ResponseWriter, rb *fsm.Rebuilder) error {
	return answerJob(w, rb, "projection job", (*fsm.Rebuilder).Job)
}

// answerJob writes the job get returns from rb, or 404 naming what when
// it returns none.
func answerJob(w http.ResponseWriter, rb *fsm.Rebuilder, what string, get func(*fsm.Rebuilder) (fsm.Job, bool)) error {
	if rb == nil {
		return notImplemented{noRebuilder{}}
	}
	j, ok := get(rb)
	if !ok {
		return &commands.NotFoundError{Kind: what, ID: "any"}
	}
	writeJSON(w, http.StatusOK, j)
	return nil
}

// ProjectionHealth is one projection in /v1/agent/health.
type ProjectionHealth struct {
	State string `json:"state"`
	// Progress is the fraction of the archive a rebuild replayed (0..1).
	Progress  float64 `json:"progress,omitempty"`
	LagEvents uint64  `json:"lag_events,omitempty"`
	Version   int     `json:"version"`
}

// projectionHealth renders the projections' states for /v1/agent/health.
// An online rebuild leaves its projection serving: the health of a server
// that serves stays ok while one runs.
func projectionHealth(rb *fsm.Rebuilder) (map[string]ProjectionHealth, error) {
	st, err := rb.Status(false)
	if err != nil {
		return nil, err
	}
	out := make(map[string]ProjectionHealth, len(st))
	for _, p := range st {
		out[p.Name] = ProjectionHealth{State: p.State, Progress: p.Progress, LagEvents: p.LagEvents, Version: p.Version}
	}
	return out, nil
}

// StartingConfig configures the handler a server answers with while it
// rebuilds stale projections before serving.
type StartingConfig struct {
	Rebuilds *fsm.Rebuilder
	// Gatherer serves /v1/metrics; nil serves none.
	Gatherer prometheus.Gatherer
}

// Starting returns the handler of a server that is rebuilding projections
// a version change made stale, before it joins raft and serves: health,
// metrics and the projection status answer; every other request gets 503
// saying why. Stale projections never serve as if current.
func Starting(cfg StartingConfig) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/agent/health", func(w http.ResponseWriter, _ *http.Request) {
		body := map[string]any{"server": map[string]any{"ok": false, "message": errStarting.Error()}}
		if ph, err := projectionHealth(cfg.Rebuilds); err == nil {
			body["projections"] = ph
		}
		writeJSON(w, http.StatusServiceUnavailable, body)
	})
	mux.HandleFunc("GET /v1/operator/projections", endpoint(func(w http.ResponseWriter, r *http.Request) error {
		return listProjections(w, r, cfg.Rebuilds)
	}))
	mux.HandleFunc("GET /v1/operator/projections/job", endpoint(func(w http.ResponseWriter, _ *http.Request) error {
		return projectionJob(w, cfg.Rebuilds)
	}))
	if cfg.Gatherer != nil {
		mux.HandleFunc("GET /v1/metrics", endpoint(func(w http.ResponseWriter, r *http.Request) error {
			return serveMetricsOf(cfg.Gatherer, w, r) // metricsjson.go: JSON, or Prometheus text with format=prometheus
		}))
	}
	mux.HandleFunc("/", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Retry-After", "5")
		writeJSON(w, http.StatusServiceUnavailable, api.ErrorBody{Error: errStarting.Error(), Status: http.StatusServiceUnavailable})
	})
	return mux
}

var errStarting = errors.New("ordo: server starting: projections written by another version are being rebuilt from the archive " +
	"(see /v1/agent/health); reads and writes are served once they have caught up")
