package jobspec

import (
	"encoding/json"
	"time"

	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/events"
)

// spec is a job as a user writes it, shaped like Nomad's api.Job: a nil
// pointer is an attribute left out, which canonicalize replaces with its
// default. ParseJSON decodes into it; ParseHCL fills it.
type spec struct {
	ID               *string           `json:"ID"`
	Name             *string           `json:"Name"`
	Namespace        *string           `json:"Namespace"`
	Type             *string           `json:"Type"`
	Priority         *int              `json:"Priority"`
	Datacenters      []string          `json:"Datacenters"`
	NodePool         *string           `json:"NodePool"`
	Constraints      []*specConstraint `json:"Constraints"`
	Meta             map[string]string `json:"Meta"`
	Periodic         *specPeriodic     `json:"Periodic"`
	ParameterizedJob *specParam        `json:"ParameterizedJob"`
	Update           *specUpdate       `json:"Update"`
	// Migrate at job level is merged into every group's.
	Migrate *specMigrate `json:"Migrate"`
	// Reschedule at job level is merged into every group's.
	Reschedule *specReschedule `json:"Reschedule"`
	TaskGroups []*specGroup    `json:"TaskGroups"`
}

type specConstraint struct {
	LTarget string `json:"LTarget"`
	RTarget string `json:"RTarget"`
	Operand string `json:"Operand"`
}

type specPeriodic struct {
	Enabled         *bool    `json:"Enabled"`
	Spec            *string  `json:"Spec"`
	Specs           []string `json:"Specs"`
	SpecType        *string  `json:"SpecType"`
	ProhibitOverlap *bool    `json:"ProhibitOverlap"`
	TimeZone        *string  `json:"TimeZone"`
}

type specParam struct {
	Payload      *string  `json:"Payload"`
	MetaRequired []string `json:"MetaRequired"`
	MetaOptional []string `json:"MetaOptional"`
}

type specUpdate struct {
	Stagger          *time.Duration `json:"Stagger"`
	MaxParallel      *int           `json:"MaxParallel"`
	HealthCheck      *string        `json:"HealthCheck"`
	MinHealthyTime   *time.Duration `json:"MinHealthyTime"`
	HealthyDeadline  *time.Duration `json:"HealthyDeadline"`
	ProgressDeadline *time.Duration `json:"ProgressDeadline"`
	AutoRevert       *bool          `json:"AutoRevert"`
	AutoPromote      *bool          `json:"AutoPromote"`
	Canary           *int           `json:"Canary"`
}

type specMigrate struct {
	MaxParallel     *int           `json:"MaxParallel"`
	HealthCheck     *string        `json:"HealthCheck"`
	MinHealthyTime  *time.Duration `json:"MinHealthyTime"`
	HealthyDeadline *time.Duration `json:"HealthyDeadline"`
}

type specGroup struct {
	Name                *string                `json:"Name"`
	Count               *int                   `json:"Count"`
	Constraints         []*specConstraint      `json:"Constraints"`
	RestartPolicy       *specRestart           `json:"RestartPolicy"`
	ReschedulePolicy    *specReschedule        `json:"ReschedulePolicy"`
	Disconnect          *specDisconnect        `json:"Disconnect"`
	MaxClientDisconnect *time.Duration         `json:"MaxClientDisconnect"`
	Update              *specUpdate            `json:"Update"`
	Meta                map[string]string      `json:"Meta"`
	Tasks               []*specTask            `json:"Tasks"`
	Migrate             *specMigrate           `json:"Migrate"`
	Volumes             map[string]*specVolume `json:"Volumes"`  // volume.go
	Scaling             *specScaling           `json:"Scaling"`  // scaling.go
	Networks            []*specNetwork         `json:"Networks"` // network.go
	Services            []*specService         `json:"Services"` // service.go
}

type specRestart struct {
	Attempts *int           `json:"Attempts"`
	Interval *time.Duration `json:"Interval"`
	Delay    *time.Duration `json:"Delay"`
	Mode     *string        `json:"Mode"`
}

type specReschedule struct {
	Attempts      *int           `json:"Attempts"`
	Interval      *time.Duration `json:"Interval"`
	Delay         *time.Duration `json:"Delay"`
	DelayFunction *string        `json:"DelayFunction"`
	MaxDelay      *time.Duration `json:"MaxDelay"`
	Unlimited     *bool          `json:"Unlimited"`
}

type specDisconnect struct {
	LostAfter *time.Duration `json:"LostAfter"`
	Replace   *bool          `json:"Replace"`
	Reconcile *string        `json:"Reconcile"`
}

type specTask struct {
	Name            *string            `json:"Name"`
	Driver          *string            `json:"Driver"`
	Config          map[string]any     `json:"Config"`
	Env             map[string]string  `json:"Env"`
	Resources       *specResources     `json:"Resources"`
	ShutdownDelay   *time.Duration     `json:"ShutdownDelay"`
	KillTimeout     *time.Duration     `json:"KillTimeout"`
	KillSignal      *string            `json:"KillSignal"`
	Meta            map[string]string  `json:"Meta"`
	VolumeMounts    []*specVolumeMount `json:"VolumeMounts"`    // volume.go
	CSIPluginConfig *specCSIPlugin     `json:"CSIPluginConfig"` // volume.go
	Services        []*specService     `json:"Services"`        // service.go
	Templates       []*specTemplate    `json:"Templates"`       // template.go
}

type specResources struct {
	CPU      *int `json:"CPU"`
	MemoryMB *int `json:"MemoryMB"`
	// MemoryMaxMB is memory_max: accepted whether or not the scheduler
	// configuration allows oversubscription, as Nomad does.
	MemoryMaxMB *int `json:"MemoryMaxMB"`
	DiskMB      *int `json:"DiskMB"`
	// Networks is Nomad's older, task-level network block: refused.
	Networks []json.RawMessage `json:"Networks"`
}

// The defaults canonicalize fills in, as Nomad documents them.
const (
	DefaultNamespace = "default"
	DefaultNodePool  = "default"
	DefaultPriority  = 50
	DefaultCPU       = 100 // MHz
	DefaultMemoryMB  = 300
	DefaultTimeZone  = "UTC"
)

// DefaultDatacenters is every datacenter, Nomad's default since 1.5.
var DefaultDatacenters = []string{"*"}

// DefaultKillTimeout is how long a task has between its kill signal and
// being killed.
const DefaultKillTimeout = 5 * time.Second

// defaultUpdate is Nomad's update strategy for a service job without one,
// and the base an update block's attributes override.
func defaultUpdate() events.UpdateStrategy {
	return events.UpdateStrategy{
		Stagger: 30 * time.Second, MaxParallel: 1, HealthCheck: "checks",
		MinHealthyTime: 10 * time.Second, HealthyDeadline: 5 * time.Minute,
		ProgressDeadline: 10 * time.Minute,
	}
}

// defaultMigrate is Nomad's migrate block defaults, the base a migrate
// block's attributes override. A group with no migrate block (at job or
// group level) keeps a nil Migrate, which the drainer reads as these.
func defaultMigrate() events.MigrateStrategy {
	return events.MigrateStrategy{
		MaxParallel: events.DefaultMigrateMaxParallel, HealthCheck: "checks",
		MinHealthyTime: 10 * time.Second, HealthyDeadline: 5 * time.Minute,
	}
}

// defaultRestart is Nomad's restart policy for a job type.
func defaultRestart(jobType string) events.RestartPolicy {
	switch jobType {
	case events.JobTypeBatch, events.JobTypeSysbatch:
		return events.RestartPolicy{Attempts: 3, Interval: 24 * time.Hour, Delay: 15 * time.Second, Mode: "fail"}
	}
	return events.RestartPolicy{Attempts: 2, Interval: 30 * time.Minute, Delay: 15 * time.Second, Mode: "fail"}
}

// defaultReschedule is Nomad's reschedule policy for a job type; system
// and sysbatch jobs have none.
func defaultReschedule(jobType string) *events.ReschedulePolicy {
	switch jobType {
	case events.JobTypeService:
		return &events.ReschedulePolicy{Delay: 30 * time.Second, DelayFunction: "exponential", MaxDelay: time.Hour, Unlimited: true}
	case events.JobTypeBatch:
		return &events.ReschedulePolicy{Attempts: 1, Interval: 24 * time.Hour, Delay: 5 * time.Second, DelayFunction: "constant"}
	}
	return nil
}

func set[T any](dst *T, src *T) {
	if src != nil {
		*dst = *src
	}
}

func or[T any](p *T, def T) T {
	if p != nil {
		return *p
	}
	return def
}

// canonicalize returns s as an events.Job with every default filled in. It
// does not validate; a job type it does not know gets service defaults.
func canonicalize(s *spec) *events.Job {
	job := &events.Job{
		ID:          or(s.ID, ""),
		Namespace:   or(s.Namespace, DefaultNamespace),
		Type:        or(s.Type, events.JobTypeService),
		Priority:    or(s.Priority, DefaultPriority),
		Datacenters: s.Datacenters,
		NodePool:    or(s.NodePool, DefaultNodePool),
		Constraints: constraints(s.Constraints),
		Meta:        emptyNil(s.Meta),
	}
	job.Name = or(s.Name, job.ID)
	if job.Namespace == "" {
		job.Namespace = DefaultNamespace
	}
	if job.NodePool == "" {
		job.NodePool = DefaultNodePool
	}
	if len(job.Datacenters) == 0 {
		job.Datacenters = append([]string(nil), DefaultDatacenters...)
	}
	if p := s.Periodic; p != nil {
		job.Periodic = &events.PeriodicConfig{
			Enabled:         or(p.Enabled, true),
			Spec:            or(p.Spec, ""),
			Specs:           p.Specs,
			SpecType:        or(p.SpecType, "cron"),
			ProhibitOverlap: or(p.ProhibitOverlap, false),
			TimeZone:        or(p.TimeZone, DefaultTimeZone),
		}
		if len(job.Periodic.Specs) == 0 {
			job.Periodic.Specs = nil
		}
	}
	if p := s.ParameterizedJob; p != nil {
		job.ParameterizedJob = &events.ParameterizedJob{
			Payload:      or(p.Payload, "optional"),
			MetaRequired: emptyNilSlice(p.MetaRequired),
			MetaOptional: emptyNilSlice(p.MetaOptional),
		}
	}
	switch {
	case s.Update != nil:
		u := defaultUpdate()
		overlayUpdate(&u, s.Update)
		job.Update = &u
	case job.Type == events.JobTypeService:
		u := defaultUpdate()
		job.Update = &u
	}
	for _, g := range s.TaskGroups {
		if g == nil {
			g = &specGroup{}
		}
		job.TaskGroups = append(job.TaskGroups, canonicalGroup(job, s, g))
	}
	return job
}

func canonicalGroup(job *events.Job, s *spec, g *specGroup) events.TaskGroup {
	tg := events.TaskGroup{
		Name:                or(g.Name, ""),
		Count:               or(g.Count, 1),
		Constraints:         constraints(g.Constraints),
		MaxClientDisconnect: or(g.MaxClientDisconnect, 0),
		Meta:                emptyNil(g.Meta),
	}
	rp := defaultRestart(job.Type)
	if r := g.RestartPolicy; r != nil {
		set(&rp.Attempts, r.Attempts)
		set(&rp.Interval, r.Interval)
		set(&rp.Delay, r.Delay)
		set(&rp.Mode, r.Mode)
	}
	tg.RestartPolicy = &rp

	// Reschedule: the type's default, then the job's block, then the group's.
	tg.ReschedulePolicy = defaultReschedule(job.Type)
	if tg.ReschedulePolicy == nil && (s.Reschedule != nil || g.ReschedulePolicy != nil) {
		// Kept so Validate can refuse it for system and sysbatch jobs.
		tg.ReschedulePolicy = &events.ReschedulePolicy{}
	}
	for _, r := range []*specReschedule{s.Reschedule, g.ReschedulePolicy} {
		if r == nil {
			continue
		}
		rs := tg.ReschedulePolicy
		set(&rs.Attempts, r.Attempts)
		set(&rs.Interval, r.Interval)
		set(&rs.Delay, r.Delay)
		set(&rs.DelayFunction, r.DelayFunction)
		set(&rs.MaxDelay, r.MaxDelay)
		set(&rs.Unlimited, r.Unlimited)
	}

	if d := g.Disconnect; d != nil {
		tg.Disconnect = &events.Disconnect{
			LostAfter: or(d.LostAfter, 0),
			Replace:   or(d.Replace, true),
			Reconcile: or(d.Reconcile, "best_score"),
		}
	}

	// Update: the job's (already canonical), overridden by the group's.
	switch {
	case job.Update != nil:
		u := *job.Update
		if g.Update != nil {
			overlayUpdate(&u, g.Update)
		}
		tg.Update = &u
	case g.Update != nil:
		u := defaultUpdate()
		overlayUpdate(&u, g.Update)
		tg.Update = &u
	}

	for _, t := range g.Tasks {
		if t == nil {
			t = &specTask{}
		}
		task := canonicalTask(t)
		task.Services = canonicalServices(t.Services, job.Name, tg.Name, task.Name) // service.go
		tg.Tasks = append(tg.Tasks, task)
	}
	tg.Networks = canonicalNetworks(g.Networks)                        // network.go
	tg.Services = canonicalServices(g.Services, job.Name, tg.Name, "") // service.go

	// health_check defaults to checks when the group has any, else to
	// task_states, as Nomad's.
	if tg.Update != nil && !healthCheckSet(s.Update) && !healthCheckSet(g.Update) {
		tg.Update.HealthCheck = "task_states"
		if hasChecks(&tg) {
			tg.Update.HealthCheck = "checks"
		}
	}

	// Migrate: the defaults, then the job's block, then the group's.
	if s.Migrate != nil || g.Migrate != nil {
		m := defaultMigrate()
		for _, o := range []*specMigrate{s.Migrate, g.Migrate} {
			if o != nil {
				set(&m.MaxParallel, o.MaxParallel)
				set(&m.HealthCheck, o.HealthCheck)
				set(&m.MinHealthyTime, o.MinHealthyTime)
				set(&m.HealthyDeadline, o.HealthyDeadline)
			}
		}
		tg.Migrate = &m
	}
	tg.Volumes = canonicalVolumes(g.Volumes) // volume.go
	canonicalScaling(&tg, g)                 // scaling.go
	return tg
}

func canonicalTask(t *specTask) events.Task {
	task := events.Task{
		Name:          or(t.Name, ""),
		Driver:        or(t.Driver, ""),
		Config:        events.CanonicalConfig(t.Config),
		Env:           emptyNil(t.Env),
		ShutdownDelay: or(t.ShutdownDelay, 0),
		KillTimeout:   or(t.KillTimeout, DefaultKillTimeout),
		KillSignal:    or(t.KillSignal, ""),
		Meta:          emptyNil(t.Meta),
		Resources:     &events.Resources{CPU: DefaultCPU, MemoryMB: DefaultMemoryMB},
	}
	if len(task.Config) == 0 {
		task.Config = nil
	}
	task.VolumeMounts = canonicalVolumeMounts(t.VolumeMounts) // volume.go
	task.Templates = canonicalTemplates(t.Templates)          // template.go
	task.CSIPluginConfig = canonicalCSIPlugin(t.CSIPluginConfig)
	if r := t.Resources; r != nil {
		set(&task.Resources.CPU, r.CPU)
		set(&task.Resources.MemoryMB, r.MemoryMB)
		set(&task.Resources.MemoryMaxMB, r.MemoryMaxMB)
		set(&task.Resources.DiskMB, r.DiskMB)
	}
	return task
}

func healthCheckSet(u *specUpdate) bool { return u != nil && u.HealthCheck != nil }

// checkSpec refuses what a spec can say and a canonical job cannot hold
// (Nomad's features ordo does not offer), before canonicalize drops it.
func checkSpec(s *spec) error {
	for _, g := range s.TaskGroups {
		if g == nil {
			continue
		}
		name := or(g.Name, "")
		if err := checkNetworkSpecs(name, g.Networks); err != nil {
			return err
		}
		if err := checkServiceSpecs(groupPath(name), g.Services); err != nil {
			return err
		}
		for _, t := range g.Tasks {
			if t == nil {
				continue
			}
			tp := taskPath(name, or(t.Name, ""))
			if t.Resources != nil && len(t.Resources.Networks) > 0 {
				return commands.Invalid(tp+".resources.network", "a task-level network block is Nomad's older form; write it in the group")
			}
			if err := checkServiceSpecs(tp, t.Services); err != nil {
				return err
			}
		}
	}
	return nil
}

func overlayUpdate(u *events.UpdateStrategy, o *specUpdate) {
	set(&u.Stagger, o.Stagger)
	set(&u.MaxParallel, o.MaxParallel)
	set(&u.HealthCheck, o.HealthCheck)
	set(&u.MinHealthyTime, o.MinHealthyTime)
	set(&u.HealthyDeadline, o.HealthyDeadline)
	set(&u.ProgressDeadline, o.ProgressDeadline)
	set(&u.AutoRevert, o.AutoRevert)
	set(&u.AutoPromote, o.AutoPromote)
	set(&u.Canary, o.Canary)
}

func constraints(in []*specConstraint) []events.Constraint {
	var out []events.Constraint
	for _, c := range in {
		if c == nil {
			continue
		}
		op := c.Operand
		if op == "" {
			op = "="
		}
		out = append(out, events.Constraint{LTarget: c.LTarget, RTarget: c.RTarget, Operand: op})
	}
	return out
}

// emptyNil returns nil for an empty map, so "no meta" has one form.
func emptyNil(m map[string]string) map[string]string {
	if len(m) == 0 {
		return nil
	}
	return m
}

func emptyNilSlice(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	return s
}
