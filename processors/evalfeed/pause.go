package evalfeed

import (
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/schedconfig"
)

// followPause turns the broker off while the scheduler configuration
// sets PauseEvalBroker, as Nomad's leader does: evals stay pending in the
// state and no worker gets one. When the pause is lifted the broker is
// turned on and restored from the state, and followPause returns the
// index it restored at (the feed follows on from there); 0 otherwise.
func (f *Feed) followPause() (uint64, error) {
	snap := f.cfg.Store.Snapshot()
	c, err := schedconfig.Get(projections.NewView(snap))
	snap.Close()
	if err != nil {
		return 0, err
	}
	on := f.cfg.Broker.Enabled()
	switch {
	case c.PauseEvalBroker && on:
		f.cfg.Broker.SetEnabled(false)
		f.cfg.Logger.Info("eval broker paused by the scheduler configuration")
	case !c.PauseEvalBroker && !on:
		f.cfg.Broker.SetEnabled(true)
		next, err := f.restore()
		if err != nil {
			return 0, err
		}
		f.cfg.Logger.Info("eval broker resumed by the scheduler configuration")
		return next - 1, nil
	}
	return 0, nil
}
