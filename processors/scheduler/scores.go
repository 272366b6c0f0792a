package scheduler

// NodeScore is one node a placement scored, as WithScores records it: each
// scorer's value (Nomad's names: "binpack" or "spread",
// "job-anti-affinity", "node-reschedule-penalty") and the final score, their
// mean, which the choice maximised.
type NodeScore struct {
	NodeID, NodeName string
	Scores           map[string]float64
	FinalScore       float64
}

// PlacementScores are the nodes one placement scored, in the order the
// scheduler met them, and the node it chose ("" when none fit).
type PlacementScores struct {
	AllocName, TaskGroup string
	Chosen               string
	Nodes                []NodeScore
}

// Option changes what Compute records; the plan it decides is the same.
type Option func(*sched)

// WithScores has Compute record in Plan.Scores every node each placement
// scored: the re-run of a decision explains it this way (history/rerun).
// The workers do not ask for it, so the log never holds it.
func WithScores() Option { return func(s *sched) { s.recordScores = true } }

// scoreOf records one scored node of the current placement when scores
// are asked for.
func (s *sched) scoreOf(ps *PlacementScores, n *Node, fit, antiAffinity, penalty, final float64, hasAnti, hasPenalty bool) {
	if !s.recordScores {
		return
	}
	scores := map[string]float64{"binpack": fit}
	if s.spread {
		scores = map[string]float64{"spread": fit}
	}
	if hasAnti {
		scores["job-anti-affinity"] = antiAffinity
	}
	if hasPenalty {
		scores["node-reschedule-penalty"] = penalty
	}
	ps.Nodes = append(ps.Nodes, NodeScore{NodeID: n.ID, NodeName: n.Name, Scores: scores, FinalScore: final})
}
