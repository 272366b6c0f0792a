package agent

import (
	"fmt"
	"runtime"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/processors/broker"
	"github.com/ordoplane/ordo/processors/drainer"
	"github.com/ordoplane/ordo/processors/evalfeed"
	"github.com/ordoplane/ordo/processors/plan"
	"github.com/ordoplane/ordo/processors/schedstate"
	"github.com/ordoplane/ordo/processors/supervisor"
	"github.com/ordoplane/ordo/processors/worker"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/evals"
)

// scheduling holds the leader-only scheduling processors: the eval feed
// (which enables and fills the broker), the workers, the plan applier and
// the node drainer.
type scheduling struct {
	broker  *broker.Broker
	applier *plan.Applier
	drainer *drainer.Drainer
	procs   []supervisor.Processor
}

// newScheduling builds the scheduling processors; workers defaults to one per core.
func (a *Agent) newScheduling(workers int) (*scheduling, error) {
	b, err := broker.New(broker.Config{
		NackTimeout: a.cfg.Scheduler.NackTimeout, DeliveryLimit: 3,
		InitialNackDelay: a.cfg.Scheduler.NackDelay, SubsequentNackDelay: 20 * a.cfg.Scheduler.NackDelay,
		Registerer: a.reg})
	if err != nil {
		return nil, err
	}
	src := &schedstate.Source{Store: a.store, Notifier: a.fsm.Notifier()}
	tcfg := plan.DefaultTrackerConfig()
	rt := a.cfg.Scheduler.PlanRejectionTracker // defaults filled by SchedulerConfig.defaults
	tcfg.Enabled, tcfg.Threshold, tcfg.Window = rt.Enabled, rt.NodeThreshold, rt.NodeWindow
	tracker, err := plan.NewTracker(tcfg)
	if err != nil {
		return nil, err
	}
	ap, err := plan.New(plan.Config{Pipeline: a.pipeline, States: src, Tracker: tracker, Logger: a.log, Registerer: a.reg})
	if err != nil {
		return nil, err
	}
	feed, err := evalfeed.New(evalfeed.Config{Broker: b, Pipeline: a.pipeline, Store: a.store,
		Notifier: a.fsm.Notifier(), Restore: restoreEvals, Logger: a.log})
	if err != nil {
		return nil, err
	}
	// Node drains: allocations leave draining nodes at their groups' migrate pace.
	dr, err := drainer.New(drainer.Config{Pipeline: a.pipeline, State: a.fsm, Logger: a.log, Registerer: a.reg})
	if err != nil {
		return nil, err
	}
	s := &scheduling{broker: b, applier: ap, drainer: dr, procs: []supervisor.Processor{feed, ap, dr}}
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
		a.cfg.Scheduler.Workers = workers
	}
	metrics := worker.NewMetrics(a.reg)
	for i := range workers {
		w, err := worker.New(worker.Config{Broker: b, States: src, Planner: ap, Logger: a.log, Metrics: metrics,
			Name: fmt.Sprintf("worker-%d", i), SyncLimit: a.cfg.Scheduler.SyncLimit})
		if err != nil {
			return nil, err
		}
		s.procs = append(s.procs, w)
	}
	return s, nil
}

func (s *scheduling) close() {
	s.broker.Close()
	s.applier.Close()
	s.drainer.Close()
}

// restoreEvals lists the pending and blocked evals for the broker when this
// server gains leadership.
func restoreEvals(v projections.View) (pending, blocked []*events.Evaluation, err error) {
	err = evals.Scan(v, evals.Query{}, func(e *evals.Eval) error {
		ev := e.Evaluation
		switch ev.Status {
		case events.EvalStatusPending:
			pending = append(pending, &ev)
		case events.EvalStatusBlocked:
			blocked = append(blocked, &ev)
		}
		return nil
	})
	return pending, blocked, err
}
