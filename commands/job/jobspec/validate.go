package jobspec

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
	_ "time/tzdata" // time zones validate the same on every server
	"unicode"
	"unicode/utf8"

	"github.com/hashicorp/cronexpr"

	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/commands/namespace"
	"github.com/ordoplane/ordo/events"
)

// The limits Validate applies.
const (
	MaxIDLength = 128
	// MaxGroupCount bounds a group's count: the scheduler places, and the
	// store keeps, one allocation per unit.
	MaxGroupCount = 100_000
	MinPriority   = 1
	MaxPriority   = 100
	MinCPU        = 1  // MHz
	MinMemoryMB   = 10 // Nomad's minimum
	MinReschDly   = 5 * time.Second
	MinRestartIv  = 5 * time.Second
)

// Field paths, in HCL terms, shared by Validate and ParseHCL's positions.
func groupPath(name string) string { return "job.group[" + name + "]" }

func taskPath(group, task string) string { return groupPath(group) + ".task[" + task + "]" }

func constraintPath(parent string, i int) string { return fmt.Sprintf("%s.constraint[%d]", parent, i) }

// ValidID returns a *commands.ValidationError naming field when id cannot
// name a job: empty, over MaxIDLength bytes, not UTF-8, holding a space or
// a character that does not print, or with a '/'-separated segment that
// is empty, "." or "..". A job id travels in URL paths (escaped), and the
// children of periodic and parameterized jobs are "<parent>/periodic-…"
// and "<parent>/dispatch-…"; registered jobs may have no '/' (Validate).
func ValidID(field, id string) error {
	switch {
	case id == "":
		return commands.Invalid(field, "must not be empty")
	case len(id) > MaxIDLength:
		return commands.Invalid(field, "%d bytes is longer than %d", len(id), MaxIDLength)
	case !utf8.ValidString(id):
		return commands.Invalid(field, "%q is not UTF-8", id)
	}
	for _, c := range id {
		if c == ' ' || !unicode.IsPrint(c) {
			return commands.Invalid(field, "%q contains a space or a control character", id)
		}
	}
	for _, seg := range strings.Split(id, "/") {
		if seg == "" || seg == "." || seg == ".." {
			return commands.Invalid(field, "%q has an empty, '.' or '..' segment", id)
		}
	}
	return nil
}

// Validate checks a canonical job against Nomad's rules and returns the
// first violation as a *commands.ValidationError naming the field.
func Validate(job *events.Job) error {
	if job == nil {
		return commands.Invalid("job", "missing")
	}
	if err := ValidID("job.id", job.ID); err != nil {
		return err
	}
	switch {
	case strings.Contains(job.ID, "/"):
		return commands.Invalid("job.id", "%q contains '/', which only the children of periodic and parameterized jobs have", job.ID)
	case job.Name == "":
		return commands.Invalid("job.name", "must not be empty")
	case strings.ContainsRune(job.Name, 0):
		return commands.Invalid("job.name", "contains a null character")
	}
	if err := namespace.ValidName("job.namespace", job.Namespace); err != nil {
		return err
	}
	switch job.Type {
	case events.JobTypeService, events.JobTypeBatch, events.JobTypeSystem, events.JobTypeSysbatch:
	default:
		return commands.Invalid("job.type", "%q is not one of service, batch, system, sysbatch", job.Type)
	}
	if job.Priority < MinPriority || job.Priority > MaxPriority {
		return commands.Invalid("job.priority", "%d is not between %d and %d", job.Priority, MinPriority, MaxPriority)
	}
	if len(job.Datacenters) == 0 {
		return commands.Invalid("job.datacenters", "must name at least one datacenter")
	}
	for _, dc := range job.Datacenters {
		if dc == "" {
			return commands.Invalid("job.datacenters", "holds an empty name")
		}
	}
	if job.NodePool == "" {
		return commands.Invalid("job.node_pool", "must not be empty")
	}
	if err := validateConstraints("job", job.Constraints); err != nil {
		return err
	}
	batchy := job.Type == events.JobTypeBatch || job.Type == events.JobTypeSysbatch
	if p := job.Periodic; p != nil {
		if !batchy {
			return commands.Invalid("job.periodic", "only batch and sysbatch jobs may be periodic, not %s", job.Type)
		}
		if err := validatePeriodic(p); err != nil {
			return err
		}
	}
	if p := job.ParameterizedJob; p != nil {
		if !batchy {
			return commands.Invalid("job.parameterized", "only batch and sysbatch jobs may be parameterized, not %s", job.Type)
		}
		switch p.Payload {
		case "optional", "required", "forbidden":
		default:
			return commands.Invalid("job.parameterized.payload", "%q is not one of optional, required, forbidden", p.Payload)
		}
	}
	if job.Update != nil {
		if batchy {
			return commands.Invalid("job.update", "%s jobs do not take an update block", job.Type)
		}
		if err := validateUpdate("job.update", job.Update); err != nil {
			return err
		}
	}
	if len(job.TaskGroups) == 0 {
		return commands.Invalid("job.group", "a job needs at least one group")
	}
	groups := make(map[string]bool, len(job.TaskGroups))
	for i := range job.TaskGroups {
		tg := &job.TaskGroups[i]
		if groups[tg.Name] {
			return commands.Invalid(groupPath(tg.Name), "group name %q is used twice", tg.Name)
		}
		groups[tg.Name] = true
		if err := validateGroup(job, tg); err != nil {
			return err
		}
	}
	return nil
}

func validateGroup(job *events.Job, tg *events.TaskGroup) error {
	path := groupPath(tg.Name)
	if tg.Name == "" {
		return commands.Invalid(path, "group name must not be empty")
	}
	if strings.ContainsAny(tg.Name, "\x00") {
		return commands.Invalid(path, "group name contains a null character")
	}
	system := job.Type == events.JobTypeSystem || job.Type == events.JobTypeSysbatch
	switch {
	case tg.Count < 0:
		return commands.Invalid(path+".count", "%d is negative", tg.Count)
	case tg.Count > MaxGroupCount:
		return commands.Invalid(path+".count", "%d exceeds %d", tg.Count, MaxGroupCount)
	case system && tg.Count > 1:
		return commands.Invalid(path+".count", "%s jobs run one allocation per node; count %d > 1", job.Type, tg.Count)
	}
	if err := validateConstraints(path, tg.Constraints); err != nil {
		return err
	}
	if rp := tg.RestartPolicy; rp != nil {
		if err := validateRestart(path+".restart", rp); err != nil {
			return err
		}
	}
	if rs := tg.ReschedulePolicy; rs != nil {
		if system {
			return commands.Invalid(path+".reschedule", "%s jobs are not rescheduled; remove the reschedule block", job.Type)
		}
		if err := validateReschedule(path+".reschedule", rs); err != nil {
			return err
		}
	}
	if tg.MaxClientDisconnect < 0 {
		return commands.Invalid(path+".max_client_disconnect", "%v is negative", tg.MaxClientDisconnect)
	}
	if d := tg.Disconnect; d != nil {
		if tg.MaxClientDisconnect != 0 && d.LostAfter != 0 {
			return commands.Invalid(path+".max_client_disconnect",
				"set disconnect.lost_after or the older max_client_disconnect, not both")
		}
		if d.LostAfter < 0 {
			return commands.Invalid(path+".disconnect.lost_after", "%v is negative", d.LostAfter)
		}
		switch d.Reconcile {
		case "best_score", "keep_original", "keep_replacement", "longest_running":
		default:
			return commands.Invalid(path+".disconnect.reconcile",
				"%q is not one of best_score, keep_original, keep_replacement, longest_running", d.Reconcile)
		}
	}
	if tg.Update != nil {
		if job.Type == events.JobTypeBatch || job.Type == events.JobTypeSysbatch {
			return commands.Invalid(path+".update", "%s jobs do not take an update block", job.Type)
		}
		if err := validateUpdate(path+".update", tg.Update); err != nil {
			return err
		}
	}
	if tg.Migrate != nil {
		if job.Type != events.JobTypeService {
			return commands.Invalid(path+".migrate", "%s jobs do not take a migrate block", job.Type)
		}
		if err := validateMigrate(path+".migrate", tg.Migrate); err != nil {
			return err
		}
	}
	if len(tg.Tasks) == 0 {
		return commands.Invalid(path+".task", "group %q needs at least one task", tg.Name)
	}

	tasks := make(map[string]bool, len(tg.Tasks))
	for i := range tg.Tasks {
		t := &tg.Tasks[i]
		tp := taskPath(tg.Name, t.Name)
		switch {
		case tasks[t.Name]:
			return commands.Invalid(tp, "task name %q is used twice in group %q", t.Name, tg.Name)
		case t.Name == "":
			return commands.Invalid(tp, "task name must not be empty")
		case strings.ContainsAny(t.Name, "/\x00"):
			return commands.Invalid(tp, "task name %q contains a slash or a null character", t.Name)
		case t.Driver == "":
			return commands.Invalid(tp+".driver", "a task needs a driver")
		case t.ShutdownDelay < 0:
			return commands.Invalid(tp+".shutdown_delay", "%v is negative", t.ShutdownDelay)
		case t.KillTimeout < 0:
			return commands.Invalid(tp+".kill_timeout", "%v is negative", t.KillTimeout)
		case !validKillSignal(t.KillSignal):
			return commands.Invalid(tp+".kill_signal", "%q is not SIGHUP, SIGINT, SIGQUIT, SIGKILL, SIGUSR1, SIGUSR2 or SIGTERM", t.KillSignal)
		case t.Resources == nil:
			return commands.Invalid(tp+".resources", "missing")
		case t.Resources.CPU < MinCPU:
			return commands.Invalid(tp+".resources.cpu", "%d is less than the minimum %d MHz", t.Resources.CPU, MinCPU)
		case t.Resources.MemoryMB < MinMemoryMB:
			return commands.Invalid(tp+".resources.memory", "%d is less than the minimum %d MB", t.Resources.MemoryMB, MinMemoryMB)
		case t.Resources.MemoryMaxMB != 0 && t.Resources.MemoryMaxMB < t.Resources.MemoryMB:
			return commands.Invalid(tp+".resources.memory_max", "%d is less than memory (%d MB)", t.Resources.MemoryMaxMB, t.Resources.MemoryMB)
		case t.Resources.DiskMB < 0:
			return commands.Invalid(tp+".resources.disk", "%d is negative", t.Resources.DiskMB)
		}
		tasks[t.Name] = true
		for k := range t.Env {
			if k == "" || strings.ContainsAny(k, "=\x00") {
				return commands.Invalid(tp+".env", "%q is not a valid environment variable name", k)
			}
		}
	}
	if err := validateScaling(job, tg); err != nil { // scaling.go
		return err
	}
	labels, err := validateNetworks(tg) // network.go
	if err != nil {
		return err
	}
	if err := validateServices(tg, labels); err != nil { // service.go
		return err
	}
	for i := range tg.Tasks {
		if err := validateTemplates(taskPath(tg.Name, tg.Tasks[i].Name), tg.Tasks[i].Templates); err != nil { // template.go
			return err
		}
	}
	return validateVolumes(job, tg) // volume.go
}

// operands are the constraint operators Nomad knows.
var operands = map[string]bool{
	"=": true, "==": true, "is": true, "!=": true, "not": true,
	"<": true, "<=": true, ">": true, ">=": true,
	"regexp": true, "version": true, "semver": true,
	"set_contains": true, "set_contains_all": true, "set_contains_any": true,
	"is_set": true, "is_not_set": true,
	events.ConstraintDistinctHosts: true, "distinct_property": true,
}

func validateConstraints(parent string, cs []events.Constraint) error {
	for i, c := range cs {
		path := constraintPath(parent, i)
		if !operands[c.Operand] {
			return commands.Invalid(path+".operator", "%q is not a constraint operator", c.Operand)
		}
		switch c.Operand {
		case events.ConstraintDistinctHosts:
			if c.RTarget != "" {
				if _, err := strconv.ParseBool(c.RTarget); err != nil {
					return commands.Invalid(path+".value", "distinct_hosts takes true or false, not %q", c.RTarget)
				}
			}
		case "distinct_property":
			if c.LTarget == "" {
				return commands.Invalid(path+".attribute", "distinct_property needs an attribute")
			}
			if c.RTarget != "" {
				if n, err := strconv.Atoi(c.RTarget); err != nil || n < 1 {
					return commands.Invalid(path+".value", "distinct_property takes a count of at least 1, not %q", c.RTarget)
				}
			}
		case "is_set", "is_not_set":
			if c.LTarget == "" {
				return commands.Invalid(path+".attribute", "%s needs an attribute", c.Operand)
			}
		default:
			if c.LTarget == "" {
				return commands.Invalid(path+".attribute", "operator %q needs an attribute", c.Operand)
			}
			if c.RTarget == "" {
				return commands.Invalid(path+".value", "operator %q needs a value", c.Operand)
			}
			if c.Operand == "regexp" {
				if _, err := regexp.Compile(c.RTarget); err != nil {
					return commands.Invalid(path+".value", "bad regexp: %v", err)
				}
			}
		}
	}
	return nil
}

func validatePeriodic(p *events.PeriodicConfig) error {
	if p.SpecType != "cron" {
		return commands.Invalid("job.periodic", "spec type %q is not cron", p.SpecType)
	}
	if p.Spec != "" && len(p.Specs) > 0 {
		return commands.Invalid("job.periodic.crons", "set cron or crons, not both")
	}
	specs := p.Specs
	field := "job.periodic.crons"
	if p.Spec != "" {
		specs, field = []string{p.Spec}, "job.periodic.cron"
	}
	if len(specs) == 0 {
		return commands.Invalid("job.periodic.crons", "a periodic job needs a cron expression")
	}
	for _, s := range specs {
		if _, err := ParseCron(s); err != nil {
			return commands.Invalid(field, "%q: %v", s, err)
		}
	}
	if _, err := time.LoadLocation(p.TimeZone); err != nil || p.TimeZone == "" {
		return commands.Invalid("job.periodic.time_zone", "%q is not a time zone", p.TimeZone)
	}
	return nil
}

// ParseCron parses a periodic job's cron expression as Nomad does, with
// hashicorp/cronexpr (the periodic launcher computes launches with it): a
// predefined schedule (@yearly, @annually, @monthly, @weekly, @daily,
// @hourly) or 5 fields (minute, hour, day of month, month, day of week), 6
// (a year appended) or 7 (a second prepended too), with names, L, W, # and
// ?. It refuses two things cronexpr takes though they can never run: fields
// past the seventh, which cronexpr ignores, and a backwards range such as
// 5-1, which matches nothing and sends cronexpr's search for the next time
// through every year to 2099, or forever.
func ParseCron(spec string) (*cronexpr.Expression, error) {
	spec = strings.TrimSpace(spec)
	switch spec {
	case "@yearly", "@annually", "@monthly", "@weekly", "@daily", "@hourly":
		return cronexpr.Parse(spec)
	}
	fields := strings.Fields(spec)
	if len(fields) < 5 || len(fields) > 7 {
		return nil, fmt.Errorf("has %d fields, want 5 to 7", len(fields))
	}
	e, err := cronexpr.Parse(spec)
	if err != nil {
		return nil, err
	}
	names := []string{"minute", "hour", "day-of-month", "month", "day-of-week", "year"}
	if len(fields) == 7 {
		names = append([]string{"second"}, names...)
	}
	for i, f := range fields {
		if err := checkCronRanges(names[i], f); err != nil {
			return nil, err
		}
	}
	return e, nil
}

// cronRange is a range in a cron field, with or without a step.
var cronRange = regexp.MustCompile(`^([0-9a-z]+)-([0-9a-z]+)(?:/[0-9]+)?$`)

// cronNames are the month and weekday names cronexpr reads.
var cronNames = map[string]int{
	"jan": 1, "feb": 2, "mar": 3, "apr": 4, "may": 5, "jun": 6, "jul": 7, "aug": 8, "sep": 9, "oct": 10, "nov": 11, "dec": 12,
	"january": 1, "february": 2, "march": 3, "april": 4, "june": 6, "july": 7, "august": 8, "september": 9,
	"october": 10, "november": 11, "december": 12,
	"sun": 0, "mon": 1, "tue": 2, "wed": 3, "thu": 4, "fri": 5, "sat": 6,
	"sunday": 0, "monday": 1, "tuesday": 2, "wednesday": 3, "thursday": 4, "friday": 5, "saturday": 6,
}

// checkCronRanges refuses a backwards range in field f (named name) of an
// expression cronexpr parsed, read as cronexpr reads it: in the day of
// week, 7 is Sunday (0), and a range ending on Sunday ends on Saturday.
func checkCronRanges(name, f string) error {
	value := func(s string) int {
		if n, err := strconv.Atoi(s); err == nil {
			return n
		}
		return cronNames[s]
	}
	for _, entry := range strings.Split(strings.ToLower(f), ",") {
		m := cronRange.FindStringSubmatch(entry)
		if m == nil {
			continue
		}
		first, last := value(m[1]), value(m[2])
		if name == "day-of-week" {
			first, last = first%7, last%7
			if last == 0 {
				last = 6
			}
		}
		if first > last {
			return fmt.Errorf("range %q in the %s field is backwards: it matches nothing", entry, name)
		}
	}
	return nil
}

func validateUpdate(path string, u *events.UpdateStrategy) error {
	switch u.HealthCheck {
	case "checks", "task_states", "manual":
	default:
		return commands.Invalid(path+".health_check", "%q is not one of checks, task_states, manual", u.HealthCheck)
	}
	switch {
	case u.MaxParallel < 0:
		return commands.Invalid(path+".max_parallel", "%d is negative", u.MaxParallel)
	case u.Canary < 0:
		return commands.Invalid(path+".canary", "%d is negative", u.Canary)
	case u.Canary == 0 && u.AutoPromote:
		return commands.Invalid(path+".auto_promote", "needs canary > 0")
	case u.MinHealthyTime < 0:
		return commands.Invalid(path+".min_healthy_time", "%v is negative", u.MinHealthyTime)
	case u.HealthyDeadline <= 0:
		return commands.Invalid(path+".healthy_deadline", "%v must be positive", u.HealthyDeadline)
	case u.ProgressDeadline < 0:
		return commands.Invalid(path+".progress_deadline", "%v is negative", u.ProgressDeadline)
	case u.MinHealthyTime >= u.HealthyDeadline:
		return commands.Invalid(path+".min_healthy_time", "%v must be less than healthy_deadline %v", u.MinHealthyTime, u.HealthyDeadline)
	case u.ProgressDeadline != 0 && u.HealthyDeadline >= u.ProgressDeadline:
		return commands.Invalid(path+".healthy_deadline", "%v must be less than progress_deadline %v", u.HealthyDeadline, u.ProgressDeadline)
	case u.Stagger <= 0:
		return commands.Invalid(path+".stagger", "%v must be positive", u.Stagger)
	}
	return nil
}

func validateMigrate(path string, m *events.MigrateStrategy) error {
	switch {
	case m.HealthCheck != "checks" && m.HealthCheck != "task_states":
		return commands.Invalid(path+".health_check", "%q is not one of checks, task_states", m.HealthCheck)
	case m.MaxParallel < 0:
		return commands.Invalid(path+".max_parallel", "%d is negative", m.MaxParallel)
	case m.MinHealthyTime < 0:
		return commands.Invalid(path+".min_healthy_time", "%v is negative", m.MinHealthyTime)
	case m.HealthyDeadline <= 0:
		return commands.Invalid(path+".healthy_deadline", "%v must be positive", m.HealthyDeadline)
	case m.MinHealthyTime >= m.HealthyDeadline:
		return commands.Invalid(path+".min_healthy_time", "%v must be less than healthy_deadline %v", m.MinHealthyTime, m.HealthyDeadline)
	}
	return nil
}

func validateRestart(path string, rp *events.RestartPolicy) error {
	switch {
	case rp.Mode != "fail" && rp.Mode != "delay":
		return commands.Invalid(path+".mode", "%q is not fail or delay", rp.Mode)
	case rp.Attempts < 0:
		return commands.Invalid(path+".attempts", "%d is negative", rp.Attempts)
	case rp.Attempts == 0 && rp.Mode != "fail":
		return commands.Invalid(path+".attempts", "mode %q with 0 attempts is ambiguous; use mode fail", rp.Mode)
	case rp.Delay < 0:
		return commands.Invalid(path+".delay", "%v is negative", rp.Delay)
	case rp.Interval < MinRestartIv:
		return commands.Invalid(path+".interval", "%v is less than the minimum %v", rp.Interval, MinRestartIv)
	case time.Duration(rp.Attempts)*rp.Delay > rp.Interval:
		return commands.Invalid(path+".interval", "%d attempts %v apart do not fit in %v", rp.Attempts, rp.Delay, rp.Interval)
	}
	return nil
}

func validateReschedule(path string, rs *events.ReschedulePolicy) error {
	switch rs.DelayFunction {
	case "constant", "exponential", "fibonacci":
	default:
		return commands.Invalid(path+".delay_function", "%q is not one of constant, exponential, fibonacci", rs.DelayFunction)
	}
	switch {
	case rs.Attempts < 0:
		return commands.Invalid(path+".attempts", "%d is negative", rs.Attempts)
	case rs.Interval < 0:
		return commands.Invalid(path+".interval", "%v is negative", rs.Interval)
	case rs.Delay < MinReschDly:
		return commands.Invalid(path+".delay", "%v is less than the minimum %v", rs.Delay, MinReschDly)
	case rs.MaxDelay < 0:
		return commands.Invalid(path+".max_delay", "%v is negative", rs.MaxDelay)
	case rs.DelayFunction != "constant" && rs.MaxDelay < rs.Delay:
		return commands.Invalid(path+".max_delay", "%v must be at least delay %v for %s backoff", rs.MaxDelay, rs.Delay, rs.DelayFunction)
	case !rs.Unlimited && rs.Attempts > 0 && rs.Interval < rs.Delay:
		return commands.Invalid(path+".interval", "%v is shorter than delay %v, so %d attempts cannot happen in it", rs.Interval, rs.Delay, rs.Attempts)
	}
	return nil
}

func validKillSignal(name string) bool {
	_, _, ok := events.KillSignal(name)
	return ok
}
