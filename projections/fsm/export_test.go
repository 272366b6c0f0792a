package fsm

// BusyFunc returns the test a job of r would use of whether the server
// applies entries.
func BusyFunc(r *Rebuilder) func() bool { return r.busy() }

// ScratchDirOf returns where r's verifies put their scratch stores.
func ScratchDirOf(r *Rebuilder) string { return r.cfg.ScratchDir }

// SetRebuildHook has r's FSM report every progress of its rebuilds to
// hook before r records it: the FSM's progress observer, which r set,
// calls hook first.
func SetRebuildHook(r *Rebuilder, hook func(RebuildProgress)) {
	r.fsm.setObserver(func(p RebuildProgress) {
		hook(p)
		r.observe(p)
	})
}

// SetPreparedHook makes f's online rebuilds call fn once they have
// written the switch's table files, before they catch up for the last
// time: at the first progress report that says Prepared.
func SetPreparedHook(f *FSM, fn func()) {
	obs := f.observer()
	seen := false
	f.setObserver(func(p RebuildProgress) {
		if p.Prepared && !seen {
			seen = true
			fn()
		}
		if p.Phase == PhaseDone || p.Phase == PhaseFailed {
			seen = false
		}
		obs(p)
	})
}
