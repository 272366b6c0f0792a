package scheduler

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"hash/fnv"

	"github.com/ordoplane/ordo/events"
)

// Plan is a scheduler's decision for one evaluation: what to place, what
// to stop or mark, and what to do next. The plan applier commits what
// still fits; the worker records the rest on the eval.
type Plan struct {
	EvalID string `msgpack:"eval"`
	// Namespace and JobID name the job the plan is for.
	Namespace string `msgpack:"ns"`
	JobID     string `msgpack:"job"`
	// SnapshotIndex is the index of the State the plan was computed on, so
	// re-running the eval against that snapshot reproduces the plan.
	SnapshotIndex uint64 `msgpack:"si"`
	// Placements are new allocations, ids derived from the eval id.
	Placements []events.Allocation `msgpack:"place,omitempty"`
	// Stops stop allocations (DesiredStatus stop), with ClientStatus lost
	// for allocations on down nodes or disconnected past lost_after.
	Stops []events.AllocDesiredUpdate `msgpack:"stop,omitempty"`
	// Updates change running allocations without stopping them: ClientStatus
	// unknown for allocations on disconnected nodes (N1), FollowupEvalID for
	// failed allocations waiting for a delayed reschedule.
	Updates []events.AllocDesiredUpdate `msgpack:"up,omitempty"`
	// Deployment is a deployment created by this plan, nil if none.
	Deployment *events.Deployment `msgpack:"dep,omitempty"`
	// DeploymentID is the deployment the eval acted under (created by the
	// plan or the job version's active one), "" if none: the worker
	// records it on the eval, as Nomad's Evaluation.DeploymentID.
	DeploymentID string `msgpack:"depid,omitempty"`
	// FailedTGAllocs explains, per task group, placements that failed.
	FailedTGAllocs map[string]*events.AllocMetric `msgpack:"fail,omitempty"`
	// QueuedAllocations counts, per task group, placements not made.
	QueuedAllocations map[string]int `msgpack:"queued,omitempty"`
	// CreateBlockedEval asks the worker for a blocked eval that capacity
	// changes unblock; ClassEligibility and EscapedComputedClass fill it.
	CreateBlockedEval    bool            `msgpack:"blocked,omitempty"`
	ClassEligibility     map[string]bool `msgpack:"ce,omitempty"`
	EscapedComputedClass bool            `msgpack:"ecc,omitempty"`
	// FollowUps are evals to create: delayed reschedules and lost_after
	// timeouts, with WaitUntil set.
	FollowUps []events.Evaluation `msgpack:"follow,omitempty"`
	// Complete says a batch or sysbatch job has nothing left to run once the
	// plan is committed (N24: every feasible node's alloc is terminal).
	Complete bool `msgpack:"complete,omitempty"`
	// Scores are the nodes each placement scored, only when Compute ran
	// WithScores; never encoded, so they are no part of the decision.
	Scores []PlacementScores `msgpack:"-" json:"-"`
}

// IsNoOp reports whether committing the plan changes nothing.
func (p *Plan) IsNoOp() bool {
	return len(p.Placements) == 0 && len(p.Stops) == 0 && len(p.Updates) == 0 && p.Deployment == nil && len(p.FollowUps) == 0
}

// Encode returns the plan's canonical encoding: equal plans encode to
// equal bytes, which the replay tests compare.
func (p *Plan) Encode() ([]byte, error) { return events.Marshal(p) }

// DeriveID returns a UUID-shaped id that is a pure function of the eval id,
// a kind and a position, so a replayed eval mints the same ids.
func DeriveID(evalID, kind string, n int) string {
	h := sha256.New()
	h.Write([]byte(evalID))
	h.Write([]byte{0})
	h.Write([]byte(kind))
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], uint64(n))
	h.Write(b[:])
	sum := h.Sum(nil)
	s := hex.EncodeToString(sum[:16])
	return s[0:8] + "-" + s[8:12] + "-" + s[12:16] + "-" + s[16:20] + "-" + s[20:32]
}

// nextID returns the next id of kind ("alloc", "followup") derived from
// the eval that the state does not hold yet, counting with n. An eval
// whose plan was partly refused is computed again on a state holding what
// its first attempt committed, and the derivation starts at 0 again: the
// retry skips the ids its earlier attempts took rather than minting them
// for other allocations or follow-ups (an allocation re-minted would be
// moved to another node, a follow-up re-minted would be rescheduled to
// another time). It stays a function of the eval and the state, so a
// re-run on the same snapshot mints the same ids.
func (s *sched) nextID(kind string, n *int) string {
	if s.taken == nil {
		// Only this eval's allocations, all of them the job's, can hold
		// ids derived from it, and only the job's allocations link to
		// its follow-ups.
		s.taken = map[string]bool{}
		for _, a := range s.allocs {
			if a.EvalID == s.eval.ID {
				s.taken[a.ID] = true
			}
			if a.FollowupEvalID != "" {
				s.taken[a.FollowupEvalID] = true
			}
		}
	}
	for {
		id := DeriveID(s.eval.ID, kind, *n)
		*n++
		if !s.taken[id] {
			return id
		}
	}
}

// rng is a splitmix64 generator seeded from the eval id: the scheduler's
// only randomness, reproducible on replay.
type rng struct{ s uint64 }

func newRNG(evalID string) *rng {
	h := fnv.New64a()
	h.Write([]byte(evalID))
	return &rng{s: h.Sum64()}
}

func (r *rng) next() uint64 {
	r.s += 0x9e3779b97f4a7c15
	z := r.s
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// intn returns a number in [0, n).
func (r *rng) intn(n int) int { return int(r.next() % uint64(n)) }

// shuffle permutes nodes in place (Fisher–Yates).
func (r *rng) shuffle(ns []*Node) {
	for i := len(ns) - 1; i > 0; i-- {
		j := r.intn(i + 1)
		ns[i], ns[j] = ns[j], ns[i]
	}
}
