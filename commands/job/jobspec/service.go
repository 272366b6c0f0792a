package jobspec

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"

	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/events"
)

// Services: the `service { … check { … check_restart { … } } }` blocks of
// a group or a task, in HCL and Nomad's JSON (TaskGroup.Services,
// Task.Services). Only Nomad-native service discovery (provider "nomad")
// is offered; Consul and Connect are refused.

type specService struct {
	Name         *string           `json:"Name"`
	Tags         []string          `json:"Tags"`
	CanaryTags   []string          `json:"CanaryTags"`
	PortLabel    *string           `json:"PortLabel"`
	AddressMode  *string           `json:"AddressMode"`
	Address      *string           `json:"Address"`
	Checks       []*specCheck      `json:"Checks"`
	CheckRestart *specCheckRestart `json:"CheckRestart"`
	Meta         map[string]string `json:"Meta"`
	CanaryMeta   map[string]string `json:"CanaryMeta"`
	TaskName     *string           `json:"TaskName"`
	OnUpdate     *string           `json:"OnUpdate"`
	Provider     *string           `json:"Provider"`
	// Connect is Consul Connect's block: refused when given.
	Connect json.RawMessage `json:"Connect"`
}

type specCheck struct {
	Name                   *string             `json:"Name"`
	Type                   *string             `json:"Type"`
	Command                *string             `json:"Command"`
	Args                   []string            `json:"Args"`
	Path                   *string             `json:"Path"`
	Protocol               *string             `json:"Protocol"`
	PortLabel              *string             `json:"PortLabel"`
	AddressMode            *string             `json:"AddressMode"`
	Expose                 *bool               `json:"Expose"`
	Interval               *time.Duration      `json:"Interval"`
	Timeout                *time.Duration      `json:"Timeout"`
	InitialStatus          *string             `json:"InitialStatus"`
	Method                 *string             `json:"Method"`
	Header                 map[string][]string `json:"Header"`
	Body                   *string             `json:"Body"`
	TaskName               *string             `json:"TaskName"`
	OnUpdate               *string             `json:"OnUpdate"`
	CheckRestart           *specCheckRestart   `json:"CheckRestart"`
	SuccessBeforePassing   *int                `json:"SuccessBeforePassing"`
	FailuresBeforeCritical *int                `json:"FailuresBeforeCritical"`
}

type specCheckRestart struct {
	Limit          *int           `json:"Limit"`
	Grace          *time.Duration `json:"Grace"`
	IgnoreWarnings *bool          `json:"IgnoreWarnings"`
}

// The service defaults, as Nomad's.
const (
	// DefaultCheckRestartGrace is how long after a task starts its
	// failing checks do not count towards check_restart's limit.
	DefaultCheckRestartGrace = time.Second
	// MinCheckInterval is the shortest interval a check may run at.
	MinCheckInterval = time.Second
	// ServiceOnUpdateRequireHealthy and its siblings say how a service's
	// checks count for a deployment's health.
	ServiceOnUpdateRequireHealthy = "require_healthy"
	ServiceOnUpdateIgnoreWarnings = "ignore_warnings"
	ServiceOnUpdateIgnore         = "ignore"
)

var serviceSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: "name"}, {Name: "port"}, {Name: "tags"}, {Name: "canary_tags"}, {Name: "address_mode"},
		{Name: "address"}, {Name: "provider"}, {Name: "task"}, {Name: "on_update"},
	},
	Blocks: []hcl.BlockHeaderSchema{
		{Type: "check"}, {Type: "check_restart"}, {Type: "meta"}, {Type: "canary_meta"}, {Type: "connect"},
	},
}

var checkSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: "name"}, {Name: "type"}, {Name: "command"}, {Name: "args"}, {Name: "path"}, {Name: "protocol"},
		{Name: "port"}, {Name: "address_mode"}, {Name: "interval"}, {Name: "timeout"}, {Name: "initial_status"},
		{Name: "method"}, {Name: "body"}, {Name: "task"}, {Name: "expose"}, {Name: "on_update"},
		{Name: "success_before_passing"}, {Name: "failures_before_critical"},
	},
	Blocks: []hcl.BlockHeaderSchema{{Type: "header"}, {Type: "check_restart"}},
}

var checkRestartSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{{Name: "limit"}, {Name: "grace"}, {Name: "ignore_warnings"}},
}

func servicePath(parent string, i int) string { return fmt.Sprintf("%s.service[%d]", parent, i) }

func checkPath(service string, i int) string { return fmt.Sprintf("%s.check[%d]", service, i) }

// services reads the service blocks of a group or task body.
func (d *decoder) services(c *hcl.BodyContent, parent string) []*specService {
	var out []*specService
	for i, b := range c.Blocks.OfType("service") {
		path := servicePath(parent, i)
		d.record(path, b.DefRange)
		sc := d.content(b.Body, path, serviceSchema)
		if sc == nil {
			return out
		}
		s := &specService{
			Name: d.str(sc, path, "name"), PortLabel: d.str(sc, path, "port"),
			Tags: d.strList(sc, path, "tags"), CanaryTags: d.strList(sc, path, "canary_tags"),
			AddressMode: d.str(sc, path, "address_mode"), Address: d.str(sc, path, "address"),
			Provider: d.str(sc, path, "provider"), TaskName: d.str(sc, path, "task"), OnUpdate: d.str(sc, path, "on_update"),
		}
		if cb := d.single(sc, path, "connect"); cb != nil {
			d.fail(path+".connect", cb.DefRange, "Consul Connect is not available in ordo")
			return out
		}
		if mb := d.single(sc, path, "meta"); mb != nil {
			s.Meta = d.strMap(mb, path+".meta")
		}
		if mb := d.single(sc, path, "canary_meta"); mb != nil {
			s.CanaryMeta = d.strMap(mb, path+".canary_meta")
		}
		if rb := d.single(sc, path, "check_restart"); rb != nil {
			s.CheckRestart = d.checkRestart(rb, path+".check_restart")
		}
		for j, cb := range sc.Blocks.OfType("check") {
			s.Checks = append(s.Checks, d.check(cb, checkPath(path, j)))
		}
		out = append(out, s)
	}
	return out
}

func (d *decoder) check(b *hcl.Block, path string) *specCheck {
	d.record(path, b.DefRange)
	c := d.content(b.Body, path, checkSchema)
	if c == nil {
		return nil
	}
	ck := &specCheck{
		Name: d.str(c, path, "name"), Type: d.str(c, path, "type"), Command: d.str(c, path, "command"),
		Args: d.strList(c, path, "args"), Path: d.str(c, path, "path"), Protocol: d.str(c, path, "protocol"),
		PortLabel: d.str(c, path, "port"), AddressMode: d.str(c, path, "address_mode"),
		Interval: d.duration(c, path, "interval"), Timeout: d.duration(c, path, "timeout"),
		InitialStatus: d.str(c, path, "initial_status"), Method: d.str(c, path, "method"), Body: d.str(c, path, "body"),
		TaskName: d.str(c, path, "task"), Expose: d.bool(c, path, "expose"), OnUpdate: d.str(c, path, "on_update"),
		SuccessBeforePassing:   d.int(c, path, "success_before_passing"),
		FailuresBeforeCritical: d.int(c, path, "failures_before_critical"),
	}
	if hb := d.single(c, path, "header"); hb != nil {
		ck.Header = d.strListMap(hb, path+".header")
	}
	if rb := d.single(c, path, "check_restart"); rb != nil {
		ck.CheckRestart = d.checkRestart(rb, path+".check_restart")
	}
	return ck
}

func (d *decoder) checkRestart(b *hcl.Block, path string) *specCheckRestart {
	c := d.content(b.Body, path, checkRestartSchema)
	if c == nil {
		return nil
	}
	return &specCheckRestart{Limit: d.int(c, path, "limit"), Grace: d.duration(c, path, "grace"),
		IgnoreWarnings: d.bool(c, path, "ignore_warnings")}
}

// strListMap reads a block of Name = ["value", …] attributes, such as a
// check's header.
func (d *decoder) strListMap(b *hcl.Block, path string) map[string][]string {
	attrs, diags := b.Body.JustAttributes()
	if d.diag(path, diags) {
		return nil
	}
	out := make(map[string][]string, len(attrs))
	for _, a := range sortedAttrs(attrs) {
		field := path + "." + a.Name
		d.record(field, a.Range)
		v, diags := d.eval(a.Expr)
		if d.diag(field, diags) {
			return nil
		}
		if !v.IsWhollyKnown() {
			d.fail(field, a.Expr.Range(), "value is not known when the jobspec is parsed")
			return nil
		}
		v, ok := d.convert(field, a, v, cty.List(cty.String), "a list of strings")
		if !ok {
			return nil
		}
		list := []string{}
		for it := v.ElementIterator(); it.Next(); {
			_, e := it.Element()
			if e.IsNull() {
				d.fail(field, a.Expr.Range(), "holds null")
				return nil
			}
			list = append(list, e.AsString())
		}
		out[a.Name] = list
	}
	return out
}

// checkServiceSpecs refuses what a spec can say and an events.Job cannot
// hold: a Consul Connect block.
func checkServiceSpecs(parent string, svcs []*specService) error {
	for i, s := range svcs {
		if s != nil && len(s.Connect) > 0 && !bytes.Equal(bytes.TrimSpace(s.Connect), []byte("null")) {
			return commands.Invalid(servicePath(parent, i)+".connect", "Consul Connect is not available in ordo")
		}
	}
	return nil
}

// groupServiceTask is what ${TASK} is in a group service's name, as in
// Nomad.
const groupServiceTask = "group"

// canonicalServices fills in the defaults of a group's (task "") or a
// task's services, as Nomad does: the name defaults to
// <job>-<group>[-<task>] and may use ${JOB}, ${TASKGROUP}, ${TASK} and
// ${BASE}, replaced here; a task's service runs in it; checks default
// their name, task and on_update from the service, and merge the
// service's check_restart under their own.
func canonicalServices(in []*specService, job, group, task string) []events.Service {
	var out []events.Service
	for _, s := range in {
		if s == nil {
			s = &specService{}
		}
		svc := events.Service{
			Name: or(s.Name, ""), Tags: emptyNilSlice(s.Tags), CanaryTags: emptyNilSlice(s.CanaryTags),
			PortLabel: or(s.PortLabel, ""), AddressMode: or(s.AddressMode, events.AddressModeAuto),
			Address: or(s.Address, ""), Meta: emptyNil(s.Meta), CanaryMeta: emptyNil(s.CanaryMeta),
			TaskName: or(s.TaskName, task), OnUpdate: or(s.OnUpdate, ServiceOnUpdateRequireHealthy),
			Provider: or(s.Provider, events.ServiceProviderNomad),
		}
		if svc.Name == "" {
			svc.Name = job + "-" + group
			if task != "" {
				svc.Name += "-" + task
			}
		}
		itask := task
		if itask == "" {
			itask = groupServiceTask
		}
		svc.Name = strings.NewReplacer("${JOB}", job, "${TASKGROUP}", group, "${TASK}", itask,
			"${BASE}", job+"-"+group+"-"+itask).Replace(svc.Name)
		if svc.AddressMode == "" {
			svc.AddressMode = events.AddressModeAuto
		}
		if svc.OnUpdate == "" {
			svc.OnUpdate = ServiceOnUpdateRequireHealthy
		}
		if svc.Provider == "" {
			svc.Provider = events.ServiceProviderNomad
		}
		if svc.TaskName == "" {
			svc.TaskName = task
		}
		for _, c := range s.Checks {
			svc.Checks = append(svc.Checks, canonicalCheck(c, &svc, s.CheckRestart))
		}
		out = append(out, svc)
	}
	return out
}

func canonicalCheck(c *specCheck, svc *events.Service, restart *specCheckRestart) events.ServiceCheck {
	if c == nil {
		c = &specCheck{}
	}
	ck := events.ServiceCheck{
		Name: or(c.Name, ""), Type: or(c.Type, ""), Command: or(c.Command, ""), Args: emptyNilSlice(c.Args),
		Path: or(c.Path, ""), Protocol: or(c.Protocol, ""), PortLabel: or(c.PortLabel, ""),
		AddressMode: or(c.AddressMode, ""), Expose: or(c.Expose, false), Interval: or(c.Interval, 0),
		Timeout: or(c.Timeout, 0), InitialStatus: or(c.InitialStatus, ""), Method: or(c.Method, ""),
		Body: or(c.Body, ""), TaskName: or(c.TaskName, svc.TaskName), OnUpdate: or(c.OnUpdate, svc.OnUpdate),
		SuccessBeforePassing:   max(or(c.SuccessBeforePassing, 0), 0),
		FailuresBeforeCritical: max(or(c.FailuresBeforeCritical, 0), 0),
	}
	if len(c.Header) > 0 {
		ck.Header = c.Header
	}
	if ck.Name == "" {
		ck.Name = fmt.Sprintf("service: %q check", svc.Name)
	}
	if ck.TaskName == "" {
		ck.TaskName = svc.TaskName
	}
	if ck.OnUpdate == "" {
		ck.OnUpdate = svc.OnUpdate
	}
	if ck.Type == events.CheckTypeHTTP {
		if ck.Method == "" {
			ck.Method = "GET"
		}
		if ck.Protocol == "" {
			ck.Protocol = "http"
		}
	}
	// The service's check_restart, overridden by the check's.
	if restart != nil || c.CheckRestart != nil {
		cr := &events.CheckRestart{Grace: DefaultCheckRestartGrace}
		for _, r := range []*specCheckRestart{restart, c.CheckRestart} {
			if r == nil {
				continue
			}
			if r.Limit != nil && (*r.Limit != 0 || r == restart) { // a check's 0 inherits
				cr.Limit = *r.Limit
			}
			set(&cr.Grace, r.Grace)
			if r.IgnoreWarnings != nil && (*r.IgnoreWarnings || r == restart) {
				cr.IgnoreWarnings = *r.IgnoreWarnings
			}
		}
		ck.CheckRestart = cr
	}
	return ck
}

// hasChecks reports whether any service of the group or its tasks has a
// check.
func hasChecks(tg *events.TaskGroup) bool {
	for _, s := range tg.Services {
		if len(s.Checks) > 0 {
			return true
		}
	}
	for _, t := range tg.Tasks {
		for _, s := range t.Services {
			if len(s.Checks) > 0 {
				return true
			}
		}
	}
	return false
}

// serviceName is what Nomad accepts as a service name (RFC 1123 §2.1),
// once each ${…} is replaced by a placeholder.
var (
	serviceName   = regexp.MustCompile(`^(?i:[a-z0-9]|[a-z0-9][a-z0-9-]{0,61}[a-z0-9])$`)
	interpolation = regexp.MustCompile(`\$\{[^}]*\}`)
)

// validateServices checks a group's services and its tasks', given the
// group network's port labels.
func validateServices(tg *events.TaskGroup, labels map[string]bool) error {
	tasks := map[string]bool{}
	for _, t := range tg.Tasks {
		tasks[t.Name] = true
	}
	seen := map[string]string{} // name + port → path
	check := func(path string, s *events.Service, task string) error {
		if err := validateService(path, s, task, tg.Name, labels, tasks); err != nil {
			return err
		}
		key := s.Name + "\x00" + s.PortLabel
		if other, ok := seen[key]; ok {
			return commands.Invalid(path+".name", "service %q on port %q is declared twice (also at %s)", s.Name, s.PortLabel, other)
		}
		seen[key] = path
		return nil
	}
	gp := groupPath(tg.Name)
	for i := range tg.Services {
		if err := check(servicePath(gp, i), &tg.Services[i], ""); err != nil {
			return err
		}
	}
	for _, t := range tg.Tasks {
		tp := taskPath(tg.Name, t.Name)
		for i := range t.Services {
			if err := check(servicePath(tp, i), &t.Services[i], t.Name); err != nil {
				return err
			}
		}
	}
	return nil
}

// validPort reports whether label is a port of the group's network or a
// port number.
func validPort(label string, labels map[string]bool) bool {
	if labels[label] {
		return true
	}
	n, err := strconv.Atoi(label)
	return err == nil && n >= 1 && n <= MaxPort
}

func portMessage(label, group string, labels map[string]bool) string {
	if len(labels) == 0 {
		return fmt.Sprintf("%q is not a port number, and group %q has no network ports", label, group)
	}
	return fmt.Sprintf("%q is not a port number nor a port of group %q's network (%s)", label, group,
		strings.Join(sortedLabels(labels), ", "))
}

func validateService(path string, s *events.Service, task, group string, labels, tasks map[string]bool) error {
	switch s.Provider {
	case "", events.ServiceProviderNomad:
	case "consul":
		return commands.Invalid(path+".provider", "Consul is not available in ordo; use provider = \"nomad\" (the default)")
	default:
		return commands.Invalid(path+".provider", "%q is not a service provider; ordo offers \"nomad\"", s.Provider)
	}
	stripped := interpolation.ReplaceAllString(s.Name, "ENV-VAR")
	switch {
	case s.Name == "":
		return commands.Invalid(path+".name", "must not be empty")
	case !serviceName.MatchString(stripped):
		return commands.Invalid(path+".name", "%q is not a valid service name: letters, digits and dashes, at most 63, "+
			"not starting or ending with a dash (RFC 1123)", s.Name)
	case s.PortLabel != "" && !validPort(s.PortLabel, labels):
		return commands.Invalid(path+".port", "%s", portMessage(s.PortLabel, group, labels))
	}
	switch s.AddressMode {
	case "", events.AddressModeAuto, events.AddressModeHost, events.AddressModeAlloc, events.AddressModeDriver:
	default:
		return commands.Invalid(path+".address_mode", "%q is not one of auto, host, alloc, driver", s.AddressMode)
	}
	if s.Address != "" && s.AddressMode != events.AddressModeAuto && s.AddressMode != "" {
		return commands.Invalid(path+".address", "a service with an address needs address_mode \"auto\", not %q", s.AddressMode)
	}
	if !validOnUpdate(s.OnUpdate) {
		return commands.Invalid(path+".on_update", "%q is not one of require_healthy, ignore_warnings, ignore", s.OnUpdate)
	}
	switch {
	case task != "" && s.TaskName != "" && s.TaskName != task:
		return commands.Invalid(path+".task", "a task's service runs in its task %q, not %q", task, s.TaskName)
	case s.TaskName != "" && !tasks[s.TaskName]:
		return commands.Invalid(path+".task", "%q is not a task of group %q", s.TaskName, group)
	}
	checks := map[string]bool{}
	for i := range s.Checks {
		cp := checkPath(path, i)
		c := &s.Checks[i]
		if checks[c.Name] {
			return commands.Invalid(cp+".name", "check name %q is used twice in the service", c.Name)
		}
		checks[c.Name] = true
		if err := validateCheck(cp, c, s, group, labels, tasks); err != nil {
			return err
		}
	}
	return nil
}

func validOnUpdate(s string) bool {
	switch s {
	case "", ServiceOnUpdateRequireHealthy, ServiceOnUpdateIgnoreWarnings, ServiceOnUpdateIgnore:
		return true
	}
	return false
}

func validateCheck(path string, c *events.ServiceCheck, s *events.Service, group string, labels, tasks map[string]bool) error {
	switch c.Type {
	case events.CheckTypeHTTP:
		if c.Path == "" {
			return commands.Invalid(path+".path", "an http check needs a path")
		}
		if u, err := url.Parse(interpolation.ReplaceAllString(c.Path, "x")); err != nil || u.IsAbs() || u.Host != "" {
			return commands.Invalid(path+".path", "%q is not a relative URL path such as /health", c.Path)
		}
		if c.Protocol != "" && c.Protocol != "http" && c.Protocol != "https" {
			return commands.Invalid(path+".protocol", "%q is not http or https", c.Protocol)
		}
	case events.CheckTypeTCP:
	case events.CheckTypeScript:
		switch {
		case c.Command == "":
			return commands.Invalid(path+".command", "a script check needs a command")
		case c.TaskName == "" && s.TaskName == "":
			return commands.Invalid(path+".task", "a script check of a group service needs the task to run in")
		}
	case "":
		return commands.Invalid(path+".type", "a check needs a type: http, tcp or script")
	default:
		return commands.Invalid(path+".type", "%q is not one of http, tcp, script", c.Type)
	}
	if c.Type != events.CheckTypeScript {
		port := c.PortLabel
		if port == "" {
			port = s.PortLabel
		}
		switch {
		case port == "":
			return commands.Invalid(path+".port", "an %s check needs a port: set port on the check or its service", c.Type)
		case !validPort(port, labels):
			return commands.Invalid(path+".port", "%s", portMessage(port, group, labels))
		}
	}
	switch {
	case c.Interval == 0:
		return commands.Invalid(path+".interval", "missing: a check needs an interval of at least %v", MinCheckInterval)
	case c.Interval < MinCheckInterval:
		return commands.Invalid(path+".interval", "%v is less than the minimum %v", c.Interval, MinCheckInterval)
	case c.Timeout == 0:
		return commands.Invalid(path+".timeout", "missing: a check needs a timeout")
	case c.Timeout < 0:
		return commands.Invalid(path+".timeout", "%v must be positive", c.Timeout)
	case c.TaskName != "" && !tasks[c.TaskName]:
		return commands.Invalid(path+".task", "%q is not a task of group %q", c.TaskName, group)
	case c.SuccessBeforePassing < 0:
		return commands.Invalid(path+".success_before_passing", "%d is negative", c.SuccessBeforePassing)
	case c.FailuresBeforeCritical < 0:
		return commands.Invalid(path+".failures_before_critical", "%d is negative", c.FailuresBeforeCritical)
	case !validOnUpdate(c.OnUpdate):
		return commands.Invalid(path+".on_update", "%q is not one of require_healthy, ignore_warnings, ignore", c.OnUpdate)
	}
	switch c.AddressMode {
	case "", events.AddressModeHost, events.AddressModeAlloc, events.AddressModeDriver:
	default:
		return commands.Invalid(path+".address_mode", "%q is not one of host, alloc, driver", c.AddressMode)
	}
	switch c.InitialStatus {
	case "", events.CheckPassing, events.CheckWarning, events.CheckCritical:
	default:
		return commands.Invalid(path+".initial_status", "%q is not one of passing, warning, critical", c.InitialStatus)
	}
	for k := range c.Header {
		if k == "" || strings.ContainsAny(k, " :\r\n\x00") {
			return commands.Invalid(path+".header", "%q is not an HTTP header name", k)
		}
	}
	if cr := c.CheckRestart; cr != nil {
		switch {
		case cr.Limit < 0:
			return commands.Invalid(path+".check_restart.limit", "%d is negative", cr.Limit)
		case cr.Grace < 0:
			return commands.Invalid(path+".check_restart.grace", "%v is negative", cr.Grace)
		case c.OnUpdate == ServiceOnUpdateIgnore:
			return commands.Invalid(path+".on_update", "on_update \"ignore\" cannot be used with check_restart: "+
				"a deployment could succeed on a check that then restarts its task")
		case c.OnUpdate == ServiceOnUpdateIgnoreWarnings && !cr.IgnoreWarnings:
			return commands.Invalid(path+".check_restart.ignore_warnings", "must be true when on_update is \"ignore_warnings\"")
		}
	}
	return nil
}
