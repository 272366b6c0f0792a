package httpapi

import (
	"io"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/storage/kv"
)

// The interfaces below are what the API needs of the processors and
// history tools it serves. They are declared here, by their consumer,
// because tools/lint forbids commands importing processors or history;
// the agent passes the implementations (Config).

// JobPlanner answers /v1/job/:id/plan: what registering job would do on
// the state v reflects, without writing anything. processors/jobplan's
// Planner implements it.
type JobPlanner interface {
	// PlanJob returns the plan's JSON answer (Nomad's JobPlanResponse).
	PlanJob(v projections.View, job *events.Job, diff bool) (any, error)
}

// Rescheduler answers /v1/debug/reschedule/{eval_id}: it re-runs the
// recorded scheduling decision of an evaluation on the state the archive
// in src held at its snapshot index, appending nothing. history/rerun's
// API implements it; its errors map to statuses as commands.Status maps
// them.
type Rescheduler interface {
	// Reschedule returns the re-run's JSON answer.
	Reschedule(src kv.Reader, evalID string) (any, error)
}

// Exporter answers /v1/operator/log/export: it writes the archive's
// events in [from, to] (to 0: to the end) held by src to w as a portable
// history file, with the projections at from-1 first when state is set.
// history/export's API implements it.
type Exporter interface {
	ExportHistory(w io.Writer, src kv.Reader, from, to uint64, state bool) error
}
