package jobspec

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"

	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/events"
)

// ParseHCL parses src, the text of the Nomad-style HCL jobspec called
// filename, and returns the job canonical and validated. Every error is a
// *commands.ValidationError whose Field names the attribute or block in HCL
// terms (job.group[web].task[server].resources.memory) and whose Reason
// starts with filename:line:col.
func ParseHCL(filename string, src []byte) (*events.Job, error) {
	d := &decoder{filename: filename, src: src, pos: map[string]hcl.Range{}}
	s := d.file()
	if d.err != nil {
		return nil, d.err
	}
	if err := checkSpec(s); err != nil {
		return nil, d.locate(err)
	}
	job := canonicalize(s)
	if err := Validate(job); err != nil {
		return nil, d.locate(err)
	}
	return job, nil
}

// decoder walks one file's HCL into a spec. It keeps the first error only,
// and the source range of every attribute and block it read by field path,
// so that Validate's errors can point into the file.
type decoder struct {
	filename string
	src      []byte
	pos      map[string]hcl.Range
	err      error
}

func at(r hcl.Range) string {
	return fmt.Sprintf("%s:%d:%d", r.Filename, r.Start.Line, r.Start.Column)
}

func (d *decoder) fail(field string, r hcl.Range, format string, args ...any) {
	if d.err == nil {
		d.err = &commands.ValidationError{Field: field, Reason: at(r) + ": " + fmt.Sprintf(format, args...)}
	}
}

func (d *decoder) failed() bool { return d.err != nil }

// record notes where field is written; the first mention wins.
func (d *decoder) record(field string, r hcl.Range) {
	if _, ok := d.pos[field]; !ok {
		d.pos[field] = r
	}
}

// locate adds the position of err's field (or of its nearest enclosing
// block) to a *commands.ValidationError from Validate.
func (d *decoder) locate(err error) error {
	var ve *commands.ValidationError
	if !errors.As(err, &ve) {
		return err
	}
	for f := ve.Field; f != ""; {
		if r, ok := d.pos[f]; ok {
			return &commands.ValidationError{Field: ve.Field, Reason: at(r) + ": " + ve.Reason}
		}
		i := strings.LastIndexAny(f, ".[")
		if i < 0 {
			break
		}
		f = f[:i]
	}
	return &commands.ValidationError{Field: ve.Field, Reason: d.filename + ": " + ve.Reason}
}

// diag records the first error in diags, naming field (and, for an
// unsupported argument or block, the name written in the file).
func (d *decoder) diag(field string, diags hcl.Diagnostics) bool {
	for _, dg := range diags {
		if dg.Severity != hcl.DiagError {
			continue
		}
		r := hcl.Range{Filename: d.filename, Start: hcl.InitialPos, End: hcl.InitialPos}
		if dg.Subject != nil {
			r = *dg.Subject
			if dg.Summary == "Unsupported argument" || dg.Summary == "Unsupported block type" {
				if name := d.text(r); hclsyntax.ValidIdentifier(name) {
					field += "." + name
				}
			}
		}
		msg := dg.Summary
		if dg.Detail != "" {
			msg += "; " + dg.Detail
		}
		d.fail(field, r, "%s", msg)
		return true
	}
	return false
}

// text returns the source r covers, or "" when r is not within it.
func (d *decoder) text(r hcl.Range) string {
	if r.Start.Byte < 0 || r.End.Byte > len(d.src) || r.Start.Byte > r.End.Byte {
		return ""
	}
	return string(d.src[r.Start.Byte:r.End.Byte])
}

func (d *decoder) content(body hcl.Body, path string, schema *hcl.BodySchema) *hcl.BodyContent {
	c, diags := body.Content(schema)
	if d.diag(path, diags) {
		return nil
	}
	return c
}

// single returns the block of type typ in c, failing when there are several.
func (d *decoder) single(c *hcl.BodyContent, path, typ string) *hcl.Block {
	bs := c.Blocks.OfType(typ)
	if len(bs) == 0 {
		return nil
	}
	if len(bs) > 1 {
		d.fail(path+"."+typ, bs[1].DefRange, "only one %s block is allowed here", typ)
		return nil
	}
	d.record(path+"."+typ, bs[0].DefRange)
	return bs[0]
}

var fileSchema = &hcl.BodySchema{Blocks: []hcl.BlockHeaderSchema{{Type: "job", LabelNames: []string{"id"}}}}

func (d *decoder) file() *spec {
	if !utf8.Valid(d.src) {
		d.fail("job", d.invalidUTF8(), "the file is not valid UTF-8")
		return nil
	}
	f, diags := hclsyntax.ParseConfig(d.src, d.filename, hcl.InitialPos)
	if d.diag("job", diags) {
		return nil
	}
	c := d.content(f.Body, "job", fileSchema)
	if c == nil {
		return nil
	}
	jobs := c.Blocks.OfType("job")
	switch {
	case len(jobs) == 0:
		d.fail("job", f.Body.(*hclsyntax.Body).SrcRange, "a jobspec needs a job block")
		return nil
	case len(jobs) > 1:
		d.fail("job", jobs[1].DefRange, "only one job block is allowed per file")
		return nil
	}
	return d.job(jobs[0])
}

// invalidUTF8 returns where the first byte that is not UTF-8 is.
func (d *decoder) invalidUTF8() hcl.Range {
	pos := hcl.InitialPos
	for i, w := 0, 0; i < len(d.src); i += w {
		var r rune
		r, w = utf8.DecodeRune(d.src[i:])
		if r == utf8.RuneError && w <= 1 {
			break
		}
		pos.Byte += w
		pos.Column++
		if r == '\n' {
			pos.Line, pos.Column = pos.Line+1, 1
		}
	}
	return hcl.Range{Filename: d.filename, Start: pos, End: pos}
}

var jobSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: "name"}, {Name: "namespace"}, {Name: "region"}, {Name: "type"},
		{Name: "priority"}, {Name: "datacenters"}, {Name: "node_pool"},
	},
	Blocks: []hcl.BlockHeaderSchema{
		{Type: "group", LabelNames: []string{"name"}}, {Type: "constraint"},
		{Type: "update"}, {Type: "periodic"}, {Type: "parameterized"},
		{Type: "meta"}, {Type: "reschedule"}, {Type: "migrate"},
	},
}

func (d *decoder) job(b *hcl.Block) *spec {
	const path = "job"
	d.record(path, b.DefRange)
	d.record(path+".id", b.LabelRanges[0])
	id := b.Labels[0]
	s := &spec{ID: &id}
	c := d.content(b.Body, path, jobSchema)
	if c == nil {
		return nil
	}
	s.Name = d.str(c, path, "name")
	s.Namespace = d.str(c, path, "namespace")
	d.str(c, path, "region") // accepted for Nomad jobspecs; ordo is one region
	s.Type = d.str(c, path, "type")
	s.Priority = d.int(c, path, "priority")
	s.Datacenters = d.strList(c, path, "datacenters")
	s.NodePool = d.str(c, path, "node_pool")
	for i, cb := range c.Blocks.OfType("constraint") {
		s.Constraints = append(s.Constraints, d.constraint(cb, constraintPath(path, i)))
	}
	if ub := d.single(c, path, "update"); ub != nil {
		s.Update = d.update(ub, path+".update")
	}
	if mb := d.single(c, path, "migrate"); mb != nil {
		s.Migrate = d.migrate(mb, path+".migrate")
	}
	if pb := d.single(c, path, "periodic"); pb != nil {
		s.Periodic = d.periodic(pb, path+".periodic")
	}
	if pb := d.single(c, path, "parameterized"); pb != nil {
		s.ParameterizedJob = d.parameterized(pb, path+".parameterized")
	}
	if mb := d.single(c, path, "meta"); mb != nil {
		s.Meta = d.strMap(mb, path+".meta")
	}
	if rb := d.single(c, path, "reschedule"); rb != nil {
		s.Reschedule = d.reschedule(rb, path+".reschedule")
	}
	seen := map[string]bool{}
	for _, gb := range c.Blocks.OfType("group") {
		name := gb.Labels[0]
		gp := groupPath(name)
		if seen[name] {
			d.fail(gp, gb.LabelRanges[0], "group name %q is used twice", name)
			break
		}
		seen[name] = true
		s.TaskGroups = append(s.TaskGroups, d.group(gb, gp))
	}
	if d.failed() {
		return nil
	}
	return s
}

var groupSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{{Name: "count"}, {Name: "max_client_disconnect"}},
	Blocks: []hcl.BlockHeaderSchema{
		{Type: "task", LabelNames: []string{"name"}}, {Type: "constraint"},
		{Type: "restart"}, {Type: "reschedule"}, {Type: "disconnect"},
		{Type: "update"}, {Type: "meta"}, {Type: "migrate"},
		{Type: "volume", LabelNames: []string{"name"}}, // volume.go
		{Type: "scaling"}, // scaling.go
		{Type: "network"}, // network.go
		{Type: "service"}, // service.go
	},
}

func (d *decoder) group(b *hcl.Block, path string) *specGroup {
	d.record(path, b.DefRange)
	name := b.Labels[0]
	g := &specGroup{Name: &name}
	c := d.content(b.Body, path, groupSchema)
	if c == nil {
		return g
	}
	g.Count = d.int(c, path, "count")
	g.MaxClientDisconnect = d.duration(c, path, "max_client_disconnect")
	for i, cb := range c.Blocks.OfType("constraint") {
		g.Constraints = append(g.Constraints, d.constraint(cb, constraintPath(path, i)))
	}
	if rb := d.single(c, path, "restart"); rb != nil {
		g.RestartPolicy = d.restart(rb, path+".restart")
	}
	if rb := d.single(c, path, "reschedule"); rb != nil {
		g.ReschedulePolicy = d.reschedule(rb, path+".reschedule")
	}
	if db := d.single(c, path, "disconnect"); db != nil {
		g.Disconnect = d.disconnect(db, path+".disconnect")
	}
	if ub := d.single(c, path, "update"); ub != nil {
		g.Update = d.update(ub, path+".update")
	}
	if mb := d.single(c, path, "migrate"); mb != nil {
		g.Migrate = d.migrate(mb, path+".migrate")
	}
	if mb := d.single(c, path, "meta"); mb != nil {
		g.Meta = d.strMap(mb, path+".meta")
	}
	g.Volumes = d.volumes(c, name)   // volume.go
	g.Scaling = d.scaling(c, path)   // scaling.go
	g.Networks = d.network(c, name)  // network.go
	g.Services = d.services(c, path) // service.go
	seen := map[string]bool{}
	for _, tb := range c.Blocks.OfType("task") {
		tname := tb.Labels[0]
		tp := taskPath(name, tname)
		if seen[tname] {
			d.fail(tp, tb.LabelRanges[0], "task name %q is used twice in group %q", tname, name)
			break
		}
		seen[tname] = true
		g.Tasks = append(g.Tasks, d.task(tb, tp))
	}
	return g
}

var taskSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{{Name: "driver"}, {Name: "shutdown_delay"}, {Name: "kill_timeout"}, {Name: "kill_signal"}},
	Blocks: []hcl.BlockHeaderSchema{
		{Type: "config"}, {Type: "env"}, {Type: "resources"}, {Type: "meta"},
		{Type: "volume_mount"}, {Type: "csi_plugin"}, // volume.go
		{Type: "service"}, {Type: "template"}, // service.go, template.go
	},
}

var resourcesSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{{Name: "cpu"}, {Name: "memory"}, {Name: "memory_max"}, {Name: "disk"}},
	Blocks:     []hcl.BlockHeaderSchema{{Type: "network"}}, // refused: Nomad's older, task-level form
}

func (d *decoder) task(b *hcl.Block, path string) *specTask {
	d.record(path, b.DefRange)
	name := b.Labels[0]
	t := &specTask{Name: &name}
	c := d.content(b.Body, path, taskSchema)
	if c == nil {
		return t
	}
	t.Driver = d.str(c, path, "driver")
	t.ShutdownDelay = d.duration(c, path, "shutdown_delay")
	t.KillTimeout = d.duration(c, path, "kill_timeout")
	t.KillSignal = d.str(c, path, "kill_signal")
	if cb := d.single(c, path, "config"); cb != nil {
		t.Config = d.config(cb.Body, path+".config")
	}
	if eb := d.single(c, path, "env"); eb != nil {
		t.Env = d.strMap(eb, path+".env")
	}
	if mb := d.single(c, path, "meta"); mb != nil {
		t.Meta = d.strMap(mb, path+".meta")
	}
	t.VolumeMounts = d.volumeMounts(c, path) // volume.go
	t.CSIPluginConfig = d.csiPlugin(c, path)
	t.Services = d.services(c, path)   // service.go
	t.Templates = d.templates(c, path) // template.go
	if rb := d.single(c, path, "resources"); rb != nil {
		rp := path + ".resources"
		if rc := d.content(rb.Body, rp, resourcesSchema); rc != nil {
			if nb := d.single(rc, rp, "network"); nb != nil {
				d.fail(rp+".network", nb.DefRange, "a task-level network block is Nomad's older form; write it in the group")
			}
			t.Resources = &specResources{
				CPU:         d.int(rc, rp, "cpu"),
				MemoryMB:    d.int(rc, rp, "memory"),
				MemoryMaxMB: d.int(rc, rp, "memory_max"),
				DiskMB:      d.int(rc, rp, "disk"),
			}
		}
	}
	return t
}

var constraintSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: "attribute"}, {Name: "operator"}, {Name: "value"},
		{Name: "distinct_hosts"}, {Name: "distinct_property"},
		{Name: "regexp"}, {Name: "version"}, {Name: "semver"}, {Name: "set_contains"},
	},
}

// constraint reads a constraint block: attribute, operator and value, or
// one of Nomad's shorthands (distinct_hosts = true, regexp = "…", …).
func (d *decoder) constraint(b *hcl.Block, path string) *specConstraint {
	d.record(path, b.DefRange)
	c := d.content(b.Body, path, constraintSchema)
	if c == nil {
		return nil
	}
	sc := &specConstraint{}
	set(&sc.LTarget, d.str(c, path, "attribute"))
	set(&sc.Operand, d.str(c, path, "operator"))
	set(&sc.RTarget, d.str(c, path, "value"))
	// short makes a shorthand the operator; it stands for target too.
	short := func(name, target string) {
		a, ok := c.Attributes[name]
		if !ok {
			return
		}
		d.record(path+".operator", a.Range)
		d.record(path+"."+target, a.Range)
		if _, dup := c.Attributes["operator"]; dup {
			d.fail(path+"."+name, a.Range, "set operator or %s, not both", name)
			return
		}
		sc.Operand = name
	}
	if v := d.bool(c, path, "distinct_hosts"); v != nil {
		short("distinct_hosts", "value")
		sc.RTarget = strconv.FormatBool(*v)
	}
	if v := d.str(c, path, "distinct_property"); v != nil {
		short("distinct_property", "attribute")
		sc.LTarget = *v
	}
	for _, name := range []string{"regexp", "version", "semver", "set_contains"} {
		if v := d.str(c, path, name); v != nil {
			short(name, "value")
			sc.RTarget = *v
		}
	}
	return sc
}

var updateSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: "stagger"}, {Name: "max_parallel"}, {Name: "health_check"},
		{Name: "min_healthy_time"}, {Name: "healthy_deadline"}, {Name: "progress_deadline"},
		{Name: "auto_revert"}, {Name: "auto_promote"}, {Name: "canary"},
	},
}

func (d *decoder) update(b *hcl.Block, path string) *specUpdate {
	c := d.content(b.Body, path, updateSchema)
	if c == nil {
		return nil
	}
	return &specUpdate{
		Stagger:          d.duration(c, path, "stagger"),
		MaxParallel:      d.int(c, path, "max_parallel"),
		HealthCheck:      d.str(c, path, "health_check"),
		MinHealthyTime:   d.duration(c, path, "min_healthy_time"),
		HealthyDeadline:  d.duration(c, path, "healthy_deadline"),
		ProgressDeadline: d.duration(c, path, "progress_deadline"),
		AutoRevert:       d.bool(c, path, "auto_revert"),
		AutoPromote:      d.bool(c, path, "auto_promote"),
		Canary:           d.int(c, path, "canary"),
	}
}

var migrateSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: "max_parallel"}, {Name: "health_check"}, {Name: "min_healthy_time"}, {Name: "healthy_deadline"},
	},
}

func (d *decoder) migrate(b *hcl.Block, path string) *specMigrate {
	c := d.content(b.Body, path, migrateSchema)
	if c == nil {
		return nil
	}
	return &specMigrate{
		MaxParallel:     d.int(c, path, "max_parallel"),
		HealthCheck:     d.str(c, path, "health_check"),
		MinHealthyTime:  d.duration(c, path, "min_healthy_time"),
		HealthyDeadline: d.duration(c, path, "healthy_deadline"),
	}
}

var periodicSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: "cron"}, {Name: "crons"}, {Name: "prohibit_overlap"},
		{Name: "time_zone"}, {Name: "enabled"},
	},
}

func (d *decoder) periodic(b *hcl.Block, path string) *specPeriodic {
	c := d.content(b.Body, path, periodicSchema)
	if c == nil {
		return nil
	}
	return &specPeriodic{
		Spec:            d.str(c, path, "cron"),
		Specs:           d.strList(c, path, "crons"),
		ProhibitOverlap: d.bool(c, path, "prohibit_overlap"),
		TimeZone:        d.str(c, path, "time_zone"),
		Enabled:         d.bool(c, path, "enabled"),
	}
}

var parameterizedSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{{Name: "payload"}, {Name: "meta_required"}, {Name: "meta_optional"}},
}

func (d *decoder) parameterized(b *hcl.Block, path string) *specParam {
	c := d.content(b.Body, path, parameterizedSchema)
	if c == nil {
		return nil
	}
	return &specParam{
		Payload:      d.str(c, path, "payload"),
		MetaRequired: d.strList(c, path, "meta_required"),
		MetaOptional: d.strList(c, path, "meta_optional"),
	}
}

var restartSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{{Name: "attempts"}, {Name: "interval"}, {Name: "delay"}, {Name: "mode"}},
}

func (d *decoder) restart(b *hcl.Block, path string) *specRestart {
	c := d.content(b.Body, path, restartSchema)
	if c == nil {
		return nil
	}
	return &specRestart{
		Attempts: d.int(c, path, "attempts"),
		Interval: d.duration(c, path, "interval"),
		Delay:    d.duration(c, path, "delay"),
		Mode:     d.str(c, path, "mode"),
	}
}

var rescheduleSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: "attempts"}, {Name: "interval"}, {Name: "delay"},
		{Name: "delay_function"}, {Name: "max_delay"}, {Name: "unlimited"},
	},
}

func (d *decoder) reschedule(b *hcl.Block, path string) *specReschedule {
	c := d.content(b.Body, path, rescheduleSchema)
	if c == nil {
		return nil
	}
	return &specReschedule{
		Attempts:      d.int(c, path, "attempts"),
		Interval:      d.duration(c, path, "interval"),
		Delay:         d.duration(c, path, "delay"),
		DelayFunction: d.str(c, path, "delay_function"),
		MaxDelay:      d.duration(c, path, "max_delay"),
		Unlimited:     d.bool(c, path, "unlimited"),
	}
}

var disconnectSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{{Name: "lost_after"}, {Name: "replace"}, {Name: "reconcile"}},
}

func (d *decoder) disconnect(b *hcl.Block, path string) *specDisconnect {
	c := d.content(b.Body, path, disconnectSchema)
	if c == nil {
		return nil
	}
	return &specDisconnect{
		LostAfter: d.duration(c, path, "lost_after"),
		Replace:   d.bool(c, path, "replace"),
		Reconcile: d.str(c, path, "reconcile"),
	}
}
