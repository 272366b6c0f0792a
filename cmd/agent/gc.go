package agent

import (
	"time"

	cgc "github.com/ordoplane/ordo/commands/gc"
	pgc "github.com/ordoplane/ordo/processors/gc"
)

// GCConfig tunes garbage collection (processors/gc, docs/gc.md); the
// server block's eval_gc_threshold, batch_eval_gc_threshold,
// job_gc_threshold, node_gc_threshold, deployment_gc_threshold and
// job_gc_interval, as Nomad names them. Zero fields take Nomad's defaults.
type GCConfig struct {
	// Thresholds by kind; zero fields default to cgc.DefaultThresholds().
	Thresholds cgc.Thresholds `json:"Thresholds"`
	// Interval between periodic collections; default 5m.
	Interval time.Duration `json:"Interval"`
	// Disabled runs no periodic collection (PUT /v1/system/gc still works).
	Disabled bool `json:"Disabled"`
}

// withDefaults returns c with zero fields set to the defaults.
func (c GCConfig) withDefaults() GCConfig {
	d := cgc.DefaultThresholds()
	for _, f := range []struct{ dst, def *time.Duration }{
		{&c.Thresholds.Eval, &d.Eval}, {&c.Thresholds.BatchEval, &d.BatchEval}, {&c.Thresholds.Job, &d.Job},
		{&c.Thresholds.Node, &d.Node}, {&c.Thresholds.Deployment, &d.Deployment},
	} {
		if *f.dst == 0 {
			*f.dst = *f.def
		}
	}
	if c.Interval == 0 {
		c.Interval = pgc.DefaultInterval
	}
	return c
}

// newGC returns the periodic garbage collector, nil when disabled.
func (a *Agent) newGC() (*pgc.Processor, error) {
	if a.cfg.GC.Disabled {
		return nil, nil
	}
	c := a.cfg.GC.withDefaults()
	return pgc.New(pgc.Config{Pipeline: a.pipeline, Thresholds: c.Thresholds, Interval: c.Interval,
		Logger: a.log, Registerer: a.reg})
}
