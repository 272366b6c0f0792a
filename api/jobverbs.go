package api

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
)

// The job verbs beyond register and stop, with Nomad's request and answer
// shapes: validate, evaluate, revert, stability, scale and scaling
// policies, and versions with their diffs.

// JobValidateResponse answers PUT /v1/validate/job (Nomad's
// api.JobValidateResponse): a job that fails validation is a 200 whose
// ValidationErrors and Error say why.
type JobValidateResponse struct {
	// DriverConfigValidated is false: ordo does not check drivers'
	// configurations against the clients' drivers.
	DriverConfigValidated bool
	ValidationErrors      []string
	Error                 string
	Warnings              string
}

// EvalOptions are the options of a job's forced evaluation (Nomad's
// api.EvalOptions).
type EvalOptions struct {
	// ForceReschedule reschedules the job's failed allocations even when
	// their reschedule policy is exhausted.
	ForceReschedule bool
}

// JobEvaluateRequest is the body of PUT /v1/job/:id/evaluate.
type JobEvaluateRequest struct {
	JobID       string
	EvalOptions EvalOptions
}

// JobRevertRequest is the body of PUT /v1/job/:id/revert (Nomad's
// api.JobRevertRequest).
type JobRevertRequest struct {
	JobID string
	// JobVersion is the version whose spec is registered again.
	JobVersion uint64
	// EnforcePriorVersion, when set, reverts only if the job is at this
	// version.
	EnforcePriorVersion *uint64 `json:",omitempty"`
}

// JobStabilityRequest is the body of PUT /v1/job/:id/stable.
type JobStabilityRequest struct {
	JobID      string
	JobVersion uint64
	Stable     bool
}

// JobStabilityResponse answers PUT /v1/job/:id/stable.
type JobStabilityResponse struct {
	JobModifyIndex uint64
	Index          uint64
}

// ScalingRequest is the body of PUT /v1/job/:id/scale (Nomad's
// api.ScalingRequest): Target names the "Group" (and may repeat the
// "Job"); a nil Count records the message alone.
type ScalingRequest struct {
	Count          *int64 `json:",omitempty"`
	Target         map[string]string
	Message        string         `json:",omitempty"`
	Error          bool           `json:",omitempty"`
	Meta           map[string]any `json:",omitempty"`
	PolicyOverride bool           `json:",omitempty"`
	JobModifyIndex uint64         `json:",omitempty"`
}

// ScalingEvent is a recorded scaling request (Nomad's api.ScalingEvent).
type ScalingEvent struct {
	Count         *int64
	PreviousCount int64
	Error         bool
	Message       string
	Meta          map[string]any
	EvalID        *string
	// Time is Unix nanoseconds.
	Time        uint64
	CreateIndex uint64
}

// TaskGroupScaleStatus is one group's part of a scale status.
type TaskGroupScaleStatus struct {
	Desired   int
	Placed    int
	Running   int
	Healthy   int
	Unhealthy int
	// Events are the group's scaling events, newest first.
	Events []ScalingEvent
}

// JobScaleStatusResponse answers GET /v1/job/:id/scale (Nomad's
// api.JobScaleStatusResponse).
type JobScaleStatusResponse struct {
	JobID          string
	Namespace      string
	JobCreateIndex uint64
	JobModifyIndex uint64
	JobStopped     bool
	TaskGroups     map[string]TaskGroupScaleStatus
}

// ScalingPolicy is a task group's scaling block as GET
// /v1/scaling/policy/:id answers it (Nomad's api.ScalingPolicy). Target
// has the keys "Namespace", "Job" and "Group".
type ScalingPolicy struct {
	ID          string
	Namespace   string
	Type        string
	Target      map[string]string
	Min         int64
	Max         int64
	Policy      map[string]any
	Enabled     bool
	CreateIndex uint64
	ModifyIndex uint64
}

// ScalingPolicyListStub is a policy as GET /v1/scaling/policies lists it.
type ScalingPolicyListStub struct {
	ID          string
	Enabled     bool
	Type        string
	Target      map[string]string
	CreateIndex uint64
	ModifyIndex uint64
}

// ValidateJob asks the servers to validate job (the register body's Job,
// in Nomad's JSON); a job that fails is answered with its errors, not an
// error.
func (c *Client) ValidateJob(ctx context.Context, job any) (*JobValidateResponse, error) {
	var out JobValidateResponse
	err := c.Put(ctx, "/v1/validate/job", map[string]any{"Job": job}, &out)
	return &out, err
}

// EvaluateJob asks for a new evaluation of job id in namespace ns ("" for
// the client's).
func (c *Client) EvaluateJob(ctx context.Context, ns, id string, opts EvalOptions) (*JobRegisterResponse, error) {
	var out JobRegisterResponse
	err := c.Call(ctx, "PUT", Pathf("/v1/job/%s/evaluate", id), nsParams(ns), JobEvaluateRequest{JobID: id, EvalOptions: opts}, &out)
	return &out, err
}

// RevertJob registers version of job id again; enforcePrior, when not
// nil, reverts only if the job is at that version.
func (c *Client) RevertJob(ctx context.Context, ns, id string, version uint64, enforcePrior *uint64) (*JobRegisterResponse, error) {
	var out JobRegisterResponse
	err := c.Call(ctx, "PUT", Pathf("/v1/job/%s/revert", id), nsParams(ns),
		JobRevertRequest{JobID: id, JobVersion: version, EnforcePriorVersion: enforcePrior}, &out)
	return &out, err
}

// SetJobStability marks version of job id stable or not.
func (c *Client) SetJobStability(ctx context.Context, ns, id string, version uint64, stable bool) (*JobStabilityResponse, error) {
	var out JobStabilityResponse
	err := c.Call(ctx, "PUT", Pathf("/v1/job/%s/stable", id), nsParams(ns),
		JobStabilityRequest{JobID: id, JobVersion: version, Stable: stable}, &out)
	return &out, err
}

// ScaleJob sends a scaling request for job id.
func (c *Client) ScaleJob(ctx context.Context, ns, id string, req ScalingRequest) (*JobRegisterResponse, error) {
	var out JobRegisterResponse
	err := c.Call(ctx, "PUT", Pathf("/v1/job/%s/scale", id), nsParams(ns), req, &out)
	return &out, err
}

// JobScaleStatus reads job id's scale status.
func (c *Client) JobScaleStatus(ctx context.Context, ns, id string) (*JobScaleStatusResponse, error) {
	var out JobScaleStatusResponse
	err := c.Get(ctx, Pathf("/v1/job/%s/scale", id), nsParams(ns), &out)
	return &out, err
}

// ScalingPolicies lists the scaling policies of namespace ns ("*" for
// all), of job jobID when it is not "".
func (c *Client) ScalingPolicies(ctx context.Context, ns, jobID string) ([]ScalingPolicyListStub, error) {
	q := nsParams(ns)
	if jobID != "" {
		q.Set("job", jobID)
	}
	var out []ScalingPolicyListStub
	err := c.Get(ctx, "/v1/scaling/policies", q, &out)
	return out, err
}

// ScalingPolicyByID reads one scaling policy.
func (c *Client) ScalingPolicyByID(ctx context.Context, ns, id string) (*ScalingPolicy, error) {
	var out ScalingPolicy
	err := c.Get(ctx, Pathf("/v1/scaling/policy/%s", id), nsParams(ns), &out)
	return &out, err
}

// JobVersionsOptions select what GET /v1/job/:id/versions adds.
type JobVersionsOptions struct {
	// Diffs asks for each version's diff against the one before it.
	Diffs bool
	// DiffVersion, when set with Diffs, diffs every version against it.
	DiffVersion *uint64
}

// JobVersions reads job id's versions, newest first, into versions (a
// slice of the caller's job type), and with opts.Diffs their diffs into
// diffs (Nomad's []*JobDiff shape); either may be nil.
func (c *Client) JobVersions(ctx context.Context, ns, id string, opts JobVersionsOptions, versions, diffs any) error {
	q := nsParams(ns)
	if opts.Diffs {
		q.Set("diffs", "true")
		if opts.DiffVersion != nil {
			q.Set("diff_version", strconv.FormatUint(*opts.DiffVersion, 10))
		}
	}
	var out struct{ Versions, Diffs json.RawMessage }
	if err := c.Get(ctx, Pathf("/v1/job/%s/versions", id), q, &out); err != nil {
		return err
	}
	for _, f := range []struct {
		raw json.RawMessage
		to  any
	}{{out.Versions, versions}, {out.Diffs, diffs}} {
		if f.to != nil && len(f.raw) > 0 {
			if err := json.Unmarshal(f.raw, f.to); err != nil {
				return fmt.Errorf("decode versions of job %q: %w", id, err)
			}
		}
	}
	return nil
}

// nsParams returns ?namespace=ns, or no parameter when ns is "" (the
// client's namespace then applies).
func nsParams(ns string) url.Values {
	q := url.Values{}
	if ns != "" {
		q.Set("namespace", ns)
	}
	return q
}
