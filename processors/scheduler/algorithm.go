package scheduler

import "github.com/ordoplane/ordo/events"

// The placement algorithms of the scheduler configuration (Nomad's
// SchedulerAlgorithm).
const (
	// AlgorithmBinpack prefers the fullest node that fits, so that whole
	// nodes stay free: the default.
	AlgorithmBinpack = "binpack"
	// AlgorithmSpread prefers the emptiest node that fits, so that load
	// spreads across the nodes.
	AlgorithmSpread = "spread"
)

// fitScore scores placing r on n in [0, 1] by the cluster's algorithm:
// how full n would be with binpack, how empty with spread.
func (s *sched) fitScore(n *Node, r events.Resources) float64 {
	if s.spread {
		return 1 - s.binPack(n, r)
	}
	return s.binPack(n, r)
}

// SchedulerAlgorithm implements State: AlgorithmBinpack unless
// SetSchedulerAlgorithm chose another.
func (s *MemState) SchedulerAlgorithm() string {
	if s.algorithm == "" {
		return AlgorithmBinpack
	}
	return s.algorithm
}

// SetSchedulerAlgorithm sets the algorithm the state reports.
func (s *MemState) SetSchedulerAlgorithm(alg string) { s.algorithm = alg }
