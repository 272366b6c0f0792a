package events

import (
	"encoding/json"
	"fmt"
	"math"
	"time"

	"github.com/vmihailenco/msgpack/v5"
)

// KindJob is the entity kind of a job; its key value is the job id, and
// events about a job also carry its namespace key.
const KindJob = "job"

// The job types.
const (
	JobTypeService  = "service"
	JobTypeBatch    = "batch"
	JobTypeSystem   = "system"
	JobTypeSysbatch = "sysbatch"
)

// ConstraintDistinctHosts is the operand of a constraint that places at
// most one of the job's (or group's) allocations on a node.
const ConstraintDistinctHosts = "distinct_hosts"

// Job is a job as events carry it: canonical (defaults filled in by the
// jobspec package) and shaped like Nomad's api.Job, so Nomad's API JSON
// decodes into it. Durations are time.Duration, nanoseconds in JSON as in
// Nomad. Version, Stop and SubmitTime are set by the server.
type Job struct {
	ID               string            `msgpack:"id" json:"ID"`
	Name             string            `msgpack:"n" json:"Name"`
	Namespace        string            `msgpack:"ns" json:"Namespace"`
	Type             string            `msgpack:"ty" json:"Type"`
	Priority         int               `msgpack:"pri" json:"Priority"`
	Datacenters      []string          `msgpack:"dcs,omitempty" json:"Datacenters"`
	NodePool         string            `msgpack:"pool,omitempty" json:"NodePool"`
	Constraints      []Constraint      `msgpack:"con,omitempty" json:"Constraints"`
	Meta             map[string]string `msgpack:"meta,omitempty" json:"Meta"`
	Periodic         *PeriodicConfig   `msgpack:"per,omitempty" json:"Periodic"`
	ParameterizedJob *ParameterizedJob `msgpack:"param,omitempty" json:"ParameterizedJob"`
	Update           *UpdateStrategy   `msgpack:"up,omitempty" json:"Update"`
	TaskGroups       []TaskGroup       `msgpack:"tgs" json:"TaskGroups"`

	// Version counts the job's registrations that changed it, from 0.
	Version uint64 `msgpack:"ver,omitempty" json:"Version"`
	// Stop marks a job deregistered without purge: it is kept, its
	// allocations are stopped.
	Stop bool `msgpack:"stop,omitempty" json:"Stop"`
	// SubmitTime is the leader time of the registration, Unix nanoseconds.
	SubmitTime int64 `msgpack:"sub,omitempty" json:"SubmitTime"`
	// Stable marks a version whose deployment succeeded; set by the jobs
	// projection, never taken from a registration.
	Stable bool `msgpack:"stable,omitempty" json:"Stable"`

	// ParentID is the parameterized (or periodic) job a dispatched (or
	// launched) child job was made from; set by the server.
	ParentID string `msgpack:"pid,omitempty" json:"ParentID,omitempty"`
	// Dispatched marks a child job made by dispatching a parameterized
	// job: it runs once and is not itself parameterized.
	Dispatched bool `msgpack:"disp,omitempty" json:"Dispatched,omitempty"`
	// Payload is the input a dispatched job was given.
	Payload []byte `msgpack:"pay,omitempty" json:"Payload,omitempty"`
}

// Group returns the job's task group name, or nil when it has none (or
// the job is nil).
func (j *Job) Group(name string) *TaskGroup {
	if j == nil {
		return nil
	}
	for i := range j.TaskGroups {
		if j.TaskGroups[i].Name == name {
			return &j.TaskGroups[i]
		}
	}
	return nil
}

// Constraint restricts placement: LTarget Operand RTarget, such as
// ${attr.kernel.name} = linux, or Operand distinct_hosts alone.
type Constraint struct {
	LTarget string `msgpack:"l,omitempty" json:"LTarget"`
	RTarget string `msgpack:"r,omitempty" json:"RTarget"`
	Operand string `msgpack:"op" json:"Operand"`
}

// PeriodicConfig launches a batch or sysbatch job on a cron schedule.
type PeriodicConfig struct {
	Enabled bool `msgpack:"on" json:"Enabled"`
	// Spec is the cron expression; Specs lists several (Nomad's `crons`).
	Spec            string   `msgpack:"spec,omitempty" json:"Spec"`
	Specs           []string `msgpack:"specs,omitempty" json:"Specs"`
	SpecType        string   `msgpack:"st" json:"SpecType"`
	ProhibitOverlap bool     `msgpack:"po,omitempty" json:"ProhibitOverlap"`
	TimeZone        string   `msgpack:"tz,omitempty" json:"TimeZone"`
}

// ParameterizedJob makes a batch or sysbatch job a template run by dispatch.
type ParameterizedJob struct {
	// Payload is "optional", "required" or "forbidden".
	Payload      string   `msgpack:"pl" json:"Payload,omitempty"`
	MetaRequired []string `msgpack:"mreq,omitempty" json:"MetaRequired"`
	MetaOptional []string `msgpack:"mopt,omitempty" json:"MetaOptional"`
}

// UpdateStrategy is how a service or system job's allocations are replaced
// when the job changes.
type UpdateStrategy struct {
	Stagger          time.Duration `msgpack:"stag,omitempty" json:"Stagger"`
	MaxParallel      int           `msgpack:"mp" json:"MaxParallel"`
	HealthCheck      string        `msgpack:"hc,omitempty" json:"HealthCheck"`
	MinHealthyTime   time.Duration `msgpack:"mht,omitempty" json:"MinHealthyTime"`
	HealthyDeadline  time.Duration `msgpack:"hd,omitempty" json:"HealthyDeadline"`
	ProgressDeadline time.Duration `msgpack:"pd,omitempty" json:"ProgressDeadline"`
	AutoRevert       bool          `msgpack:"ar,omitempty" json:"AutoRevert"`
	AutoPromote      bool          `msgpack:"ap,omitempty" json:"AutoPromote"`
	Canary           int           `msgpack:"can,omitempty" json:"Canary"`
}

// TaskGroup is a set of tasks placed together, Count times.
type TaskGroup struct {
	Name             string            `msgpack:"n" json:"Name"`
	Count            int               `msgpack:"c" json:"Count"`
	Constraints      []Constraint      `msgpack:"con,omitempty" json:"Constraints"`
	RestartPolicy    *RestartPolicy    `msgpack:"rp,omitempty" json:"RestartPolicy"`
	ReschedulePolicy *ReschedulePolicy `msgpack:"rs,omitempty" json:"ReschedulePolicy"`
	Disconnect       *Disconnect       `msgpack:"dis,omitempty" json:"Disconnect"`
	// MaxClientDisconnect is the older form of Disconnect.LostAfter.
	MaxClientDisconnect time.Duration     `msgpack:"mcd,omitempty" json:"MaxClientDisconnect"`
	Update              *UpdateStrategy   `msgpack:"up,omitempty" json:"Update"`
	Meta                map[string]string `msgpack:"meta,omitempty" json:"Meta"`
	Tasks               []Task            `msgpack:"t" json:"Tasks"`
	// Migrate paces the group's allocations off draining nodes; nil means
	// the defaults (see MigrateStrategy).
	Migrate *MigrateStrategy `msgpack:"mig,omitempty" json:"Migrate,omitempty"`
	// Volumes are the group's volume requests by name (events/csi.go).
	Volumes map[string]*VolumeRequest `msgpack:"vols,omitempty" json:"Volumes,omitempty"`
	// Scaling is the group's scaling block (events/scaling.go); nil when
	// it has none.
	Scaling *ScalingPolicy `msgpack:"sc,omitempty" json:"Scaling,omitempty"`
	// Networks is the group's network block (at most one; events/network.go).
	Networks []NetworkResource `msgpack:"nets,omitempty" json:"Networks,omitempty"`
	// Services are the group's service blocks (events/service.go).
	Services []Service `msgpack:"svcs,omitempty" json:"Services,omitempty"`
}

// DefaultMigrateMaxParallel is how many allocations of a group migrate off
// draining nodes at a time when the group has no migrate block.
const DefaultMigrateMaxParallel = 1

// MigrateStrategy is how a service group's allocations leave draining
// nodes (Nomad's migrate block): the node drainer marks at most
// MaxParallel of the group's allocations to migrate at a time, and marks
// the next once a replacement is running (and healthy, in a deployment).
type MigrateStrategy struct {
	// MaxParallel is how many allocations migrate at a time; default 1, and
	// 0 migrates none before the drain's deadline.
	MaxParallel int `msgpack:"mp" json:"MaxParallel"`
	// HealthCheck is "checks" (default) or "task_states": how a client
	// decides a replacement is healthy.
	HealthCheck string `msgpack:"hc,omitempty" json:"HealthCheck"`
	// MinHealthyTime is how long a replacement must be healthy; default 10s.
	MinHealthyTime time.Duration `msgpack:"mht,omitempty" json:"MinHealthyTime"`
	// HealthyDeadline is how long a replacement has to become healthy;
	// default 5m.
	HealthyDeadline time.Duration `msgpack:"hd,omitempty" json:"HealthyDeadline"`
}

// MigrateMaxParallel returns how many of the group's allocations may
// migrate at a time: its migrate block's max_parallel, or the default.
func (tg *TaskGroup) MigrateMaxParallel() int {
	if tg == nil || tg.Migrate == nil {
		return DefaultMigrateMaxParallel
	}
	return tg.Migrate.MaxParallel
}

// RestartPolicy is how a client restarts a failed task in place.
type RestartPolicy struct {
	Attempts int           `msgpack:"a" json:"Attempts"`
	Interval time.Duration `msgpack:"i" json:"Interval"`
	Delay    time.Duration `msgpack:"d" json:"Delay"`
	// Mode is "fail" or "delay".
	Mode string `msgpack:"m" json:"Mode"`
}

// ReschedulePolicy is how the scheduler replaces a failed allocation.
type ReschedulePolicy struct {
	Attempts int           `msgpack:"a" json:"Attempts"`
	Interval time.Duration `msgpack:"i" json:"Interval"`
	Delay    time.Duration `msgpack:"d" json:"Delay"`
	// DelayFunction is "constant", "exponential" or "fibonacci".
	DelayFunction string        `msgpack:"df" json:"DelayFunction"`
	MaxDelay      time.Duration `msgpack:"md,omitempty" json:"MaxDelay"`
	Unlimited     bool          `msgpack:"u,omitempty" json:"Unlimited"`
}

// Disconnect is how a group's allocations behave while their node is
// disconnected: unknown rather than lost until LostAfter (N1).
type Disconnect struct {
	// LostAfter is how long an allocation stays unknown before it is lost.
	LostAfter time.Duration `msgpack:"la,omitempty" json:"LostAfter"`
	// Replace says whether an unknown allocation is replaced meanwhile.
	Replace bool `msgpack:"rep,omitempty" json:"Replace"`
	// Reconcile picks the survivor on reconnect: "best_score",
	// "keep_original", "keep_replacement" or "longest_running".
	Reconcile string `msgpack:"rec,omitempty" json:"Reconcile"`
}

// Task is one process run by a driver.
type Task struct {
	Name          string            `msgpack:"n" json:"Name"`
	Driver        string            `msgpack:"d" json:"Driver"`
	Config        TaskConfig        `msgpack:"cfg,omitempty" json:"Config"`
	Env           map[string]string `msgpack:"env,omitempty" json:"Env"`
	Resources     *Resources        `msgpack:"res,omitempty" json:"Resources"`
	ShutdownDelay time.Duration     `msgpack:"sd,omitempty" json:"ShutdownDelay"`
	KillTimeout   time.Duration     `msgpack:"kt,omitempty" json:"KillTimeout"`
	Meta          map[string]string `msgpack:"meta,omitempty" json:"Meta"`
	// KillSignal is the signal that stops the task ("SIGINT", …); ""
	// means the driver's default, SIGTERM.
	KillSignal string `msgpack:"ks,omitempty" json:"KillSignal,omitempty"`
	// VolumeMounts mount the group's volumes into the task.
	VolumeMounts []VolumeMount `msgpack:"vm,omitempty" json:"VolumeMounts,omitempty"`
	// CSIPluginConfig makes the task a CSI plugin (events/csi.go).
	CSIPluginConfig *TaskCSIPluginConfig `msgpack:"csi,omitempty" json:"CSIPluginConfig,omitempty"`
	// Services are the task's service blocks (events/service.go).
	Services []Service `msgpack:"svcs,omitempty" json:"Services,omitempty"`
	// Templates are the task's template blocks (events/template.go).
	Templates []Template `msgpack:"tmpls,omitempty" json:"Templates,omitempty"`
}

// Resources is what one task asks of a node.
type Resources struct {
	CPU      int `msgpack:"cpu" json:"CPU"`
	MemoryMB int `msgpack:"mem" json:"MemoryMB"`
	DiskMB   int `msgpack:"disk,omitempty" json:"DiskMB"`
	// MemoryMaxMB is Nomad's memory_max (memory oversubscription): the
	// hard limit a driver may let the task grow to, above MemoryMB, which
	// stays what the scheduler places by. 0 when unset.
	MemoryMaxMB int `msgpack:"memmax,omitempty" json:"MemoryMaxMB"`
}

// TaskConfig is a task's driver configuration. Its values are JSON-shaped
// and canonical: string, bool, int64 (every integral number), float64,
// nil, []any and map[string]any, whichever codec it came through, so equal
// configurations compare equal after any round trip.
type TaskConfig map[string]any

// DecodeMsgpack implements msgpack.CustomDecoder, canonicalising values.
func (c *TaskConfig) DecodeMsgpack(dec *msgpack.Decoder) error {
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		return err
	}
	*c = CanonicalConfig(m)
	return nil
}

// UnmarshalJSON implements json.Unmarshaler, canonicalising values.
func (c *TaskConfig) UnmarshalJSON(b []byte) error {
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	*c = CanonicalConfig(m)
	return nil
}

// CanonicalConfig returns m with every value in TaskConfig's canonical
// form; nil for a nil map.
func CanonicalConfig(m map[string]any) TaskConfig {
	if m == nil {
		return nil
	}
	out := make(TaskConfig, len(m))
	for k, v := range m {
		out[k] = canonicalValue(v)
	}
	return out
}

func canonicalValue(v any) any {
	switch v := v.(type) {
	case nil, string, bool, int64:
		return v
	case int:
		return int64(v)
	case int8:
		return int64(v)
	case int16:
		return int64(v)
	case int32:
		return int64(v)
	case uint:
		return canonicalUint(uint64(v))
	case uint8:
		return int64(v)
	case uint16:
		return int64(v)
	case uint32:
		return int64(v)
	case uint64:
		return canonicalUint(v)
	case float32:
		return canonicalFloat(float64(v))
	case float64:
		return canonicalFloat(v)
	case json.Number:
		if i, err := v.Int64(); err == nil {
			return i
		}
		f, _ := v.Float64()
		return canonicalFloat(f)
	case []byte:
		return string(v)
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = canonicalValue(e)
		}
		return out
	case map[string]any:
		return map[string]any(CanonicalConfig(v))
	case TaskConfig:
		return map[string]any(CanonicalConfig(v))
	case map[any]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			out[fmt.Sprint(k)] = canonicalValue(e)
		}
		return out
	}
	return fmt.Sprint(v)
}

func canonicalUint(u uint64) any {
	if u <= math.MaxInt64 {
		return int64(u)
	}
	return float64(u)
}

// canonicalFloat returns an integral f within int64's range as an int64.
func canonicalFloat(f float64) any {
	if f == math.Trunc(f) && f >= -(1<<63) && f < 1<<63 {
		return int64(f)
	}
	return f
}

// JobRegistered records a job created or updated, at its new version.
type JobRegistered struct {
	Job Job `msgpack:"job" json:"Job"`
}

// EntityKeys implements Payload.
func (p *JobRegistered) EntityKeys() []Key {
	return []Key{{Kind: KindNamespace, Value: p.Job.Namespace}, {Kind: KindJob, Value: p.Job.ID}}
}

// JobDeregistered records a job stopped (kept, with Stop set) or, with
// Purge, removed.
type JobDeregistered struct {
	Namespace string `msgpack:"ns" json:"Namespace"`
	ID        string `msgpack:"id" json:"ID"`
	Purge     bool   `msgpack:"purge,omitempty" json:"Purge"`
	// NoShutdownDelay asks that the job's allocations be stopped without
	// their tasks' shutdown delay (N23).
	NoShutdownDelay bool `msgpack:"nsd,omitempty" json:"NoShutdownDelay"`
}

// EntityKeys implements Payload.
func (p *JobDeregistered) EntityKeys() []Key {
	return []Key{{Kind: KindNamespace, Value: p.Namespace}, {Kind: KindJob, Value: p.ID}}
}

func init() {
	Register(Type{Name: "JobRegistered", Version: 1, Topic: "Job",
		New: func() Payload { return new(JobRegistered) }})
	Register(Type{Name: "JobDeregistered", Version: 1, Topic: "Job",
		New: func() Payload { return new(JobDeregistered) }})
}
