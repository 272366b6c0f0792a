package events

// ScalingPolicyTypeHorizontal is the type of a group's scaling block: it
// scales the group's count, as Nomad's "horizontal" policies do.
const ScalingPolicyTypeHorizontal = "horizontal"

// ScalingPolicy is a task group's scaling block (Nomad's api.ScalingPolicy
// as a job carries it): the bounds of the group's count and the
// autoscaler's policy, which ordo stores and serves but does not act on.
type ScalingPolicy struct {
	// Type is "horizontal".
	Type string `msgpack:"ty" json:"Type"`
	// Min and Max bound the group's count; Min defaults to the count.
	Min int64 `msgpack:"min" json:"Min"`
	Max int64 `msgpack:"max" json:"Max"`
	// Enabled tells an autoscaler to act on the policy; default true.
	Enabled bool `msgpack:"on" json:"Enabled"`
	// Policy is the autoscaler's own configuration, JSON-shaped and
	// canonical as a task's driver configuration.
	Policy TaskConfig `msgpack:"pol,omitempty" json:"Policy"`
}

// ScalingEvent is one scaling request recorded against a task group
// (Nomad's api.ScalingEvent): a change of its count, or a message from an
// autoscaler with no change.
type ScalingEvent struct {
	// Count is the count asked for; nil when the request changed nothing.
	Count *int64 `msgpack:"c,omitempty" json:"Count"`
	// PreviousCount is the group's count when the request arrived.
	PreviousCount int64 `msgpack:"pc" json:"PreviousCount"`
	// Error marks a request reporting an autoscaler's failure.
	Error   bool       `msgpack:"err,omitempty" json:"Error"`
	Message string     `msgpack:"msg,omitempty" json:"Message"`
	Meta    TaskConfig `msgpack:"meta,omitempty" json:"Meta"`
	// EvalID is the evaluation the request created, "" when none.
	EvalID string `msgpack:"eval,omitempty" json:"EvalID,omitempty"`
	// Time is the leader time of the request, Unix nanoseconds.
	Time int64 `msgpack:"t" json:"Time"`
}

// JobScaled records a scaling request against a task group of a job
// (Nomad's scaling events); a count change is recorded in the same entry
// by the job's new version.
type JobScaled struct {
	Namespace string       `msgpack:"ns" json:"Namespace"`
	JobID     string       `msgpack:"job" json:"JobID"`
	Group     string       `msgpack:"g" json:"Group"`
	Event     ScalingEvent `msgpack:"ev" json:"Event"`
}

// EntityKeys implements Payload.
func (p *JobScaled) EntityKeys() []Key {
	return []Key{{Kind: KindNamespace, Value: p.Namespace}, {Kind: KindJob, Value: p.JobID}}
}

// JobStabilityUpdated records an operator marking a version of a job
// stable or not (Nomad's Job.Stable).
type JobStabilityUpdated struct {
	Namespace string `msgpack:"ns" json:"Namespace"`
	ID        string `msgpack:"id" json:"ID"`
	Version   uint64 `msgpack:"ver" json:"Version"`
	Stable    bool   `msgpack:"stable" json:"Stable"`
}

// EntityKeys implements Payload.
func (p *JobStabilityUpdated) EntityKeys() []Key {
	return []Key{{Kind: KindNamespace, Value: p.Namespace}, {Kind: KindJob, Value: p.ID}}
}

func init() {
	Register(Type{Name: "JobScaled", Version: 1, Topic: "Job",
		New: func() Payload { return new(JobScaled) }})
	Register(Type{Name: "JobStabilityUpdated", Version: 1, Topic: "Job",
		New: func() Payload { return new(JobStabilityUpdated) }})
}
