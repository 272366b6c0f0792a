package launcher

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"

	"github.com/ordoplane/ordo/commands"
	lcmd "github.com/ordoplane/ordo/commands/launcher"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/processors/launcher/driver"
	"github.com/ordoplane/ordo/projections/launcher"
)

// TestDecide plays the launcher's decisions from testdata/decide: each
// script declares providers, instance types, tenants, requests and
// instances, and `decide` prints the steps one pass of a provider's
// runner takes, every submission succeeding unless named in conflict=
// or error=. Regenerate with -rewrite.
//
// Commands (arguments key=value, lists comma-separated):
//
//	provider name= priority= [retries=] [paused-for=] [errored=label:why,...] [static]
//	  input lines: pool NAME labels=.. [max-servers= max-cores= max-ram= attrs=k:v]
//	               label NAME [type=] [min-ready=]
//	               host NAME labels=..             (a static provider's hosts)
//	type name= [cores=] [ram=] [err=transient|permanent]
//	tenant name= [max-servers= max-cores= max-ram=]
//	request id= labels= [state=requested|pending] [provider=] [min-ready] [tenant=] [declined=p,..] [attempts=]
//	instance id= provider= pool= label= state= [request=] [cores=] [ram=] [tenant=] [host=] [unreachable]
//	clear                                          (drop requests and instances)
//	decide provider= [quota=instances/cores/ram|unknown] [conflict=step|request,..] [error=step|request,..] [group]
//
// With group, decide queues commands as the runner does and prints each
// group it submits (one entry each).
func TestDecide(t *testing.T) {
	datadriven.Walk(t, "testdata/decide", func(t *testing.T, path string) {
		w := newWorld()
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			return w.run(t, d)
		})
	})
}

// world is a script's state.
type world struct {
	provs       []*launcher.Provider
	hosts       map[string][]driver.Host
	types       map[string]typeAnswer
	tenants     map[string]*launcher.Tenant
	reqs        []*launcher.Request
	insts       []*launcher.Instance
	unreachable map[string]bool
	attempts    map[string]int
}

func newWorld() *world {
	return &world{hosts: map[string][]driver.Host{}, types: map[string]typeAnswer{}, tenants: map[string]*launcher.Tenant{},
		unreachable: map[string]bool{}, attempts: map[string]int{}}
}

// args reads a command's arguments as key → comma-joined values.
func args(d *datadriven.TestData) map[string]string {
	out := map[string]string{}
	for _, a := range d.CmdArgs {
		out[a.Key] = strings.Join(a.Vals, ",")
	}
	return out
}

func lineArgs(t *testing.T, fields []string) map[string]string {
	out := map[string]string{}
	for _, f := range fields {
		k, v, _ := strings.Cut(f, "=")
		out[k] = v
	}
	return out
}

func num(t *testing.T, s string) int {
	t.Helper()
	if s == "" {
		return 0
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatalf("%q: %v", s, err)
	}
	return n
}

func list(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}

func (w *world) run(t *testing.T, d *datadriven.TestData) string {
	a := args(d)
	switch d.Cmd {
	case "provider":
		p := &launcher.Provider{Config: events.ProviderConfig{Name: a["name"], Priority: num(t, a["priority"]),
			LaunchRetries: num(t, a["retries"])}, ConfigIndex: 1}
		if a["paused-for"] != "" {
			p.Paused, p.PausedRequest = true, a["paused-for"]
		}
		for _, e := range list(a["errored"]) {
			l, why, _ := strings.Cut(e, ":")
			if p.ErroredLabels == nil {
				p.ErroredLabels = map[string]string{}
			}
			p.ErroredLabels[l] = why
		}
		for _, line := range strings.Split(strings.TrimSpace(d.Input), "\n") {
			f := strings.Fields(line)
			if len(f) < 2 {
				continue
			}
			la := lineArgs(t, f[2:])
			switch f[0] {
			case "pool":
				pl := events.ProviderPool{Name: f[1], Labels: list(la["labels"]), MaxServers: num(t, la["max-servers"]),
					MaxCores: num(t, la["max-cores"]), MaxRAMMB: num(t, la["max-ram"])}
				for _, kv := range list(la["attrs"]) {
					k, v, _ := strings.Cut(kv, ":")
					if pl.NodeAttributes == nil {
						pl.NodeAttributes = map[string]string{}
					}
					pl.NodeAttributes[k] = v
				}
				p.Config.Pools = append(p.Config.Pools, pl)
			case "label":
				p.Config.Labels = append(p.Config.Labels, events.LabelConfig{Name: f[1], InstanceType: la["type"], MinReady: num(t, la["min-ready"])})
			case "host":
				w.hosts[p.Config.Name] = append(w.hosts[p.Config.Name], driver.Host{Name: f[1], Labels: list(la["labels"])})
			default:
				t.Fatalf("unknown provider line %q", line)
			}
		}
		if _, static := a["static"]; static && w.hosts[p.Config.Name] == nil {
			w.hosts[p.Config.Name] = []driver.Host{}
		}
		w.provs = slices.DeleteFunc(w.provs, func(o *launcher.Provider) bool { return o.Config.Name == p.Config.Name })
		w.provs = append(w.provs, p)
	case "type":
		ta := typeAnswer{res: driver.Resources{Cores: num(t, a["cores"]), RAMMB: num(t, a["ram"])}}
		switch a["err"] {
		case "transient":
			ta.err = errors.New("cloud unavailable")
		case "permanent":
			ta.err = fmt.Errorf("instance type %s unknown: %w", a["name"], driver.ErrPermanent)
		}
		w.types[a["name"]] = ta
	case "tenant":
		w.tenants[a["name"]] = &launcher.Tenant{Tenant: events.Tenant{Name: a["name"], MaxServers: num(t, a["max-servers"]),
			MaxCores: num(t, a["max-cores"]), MaxRAMMB: num(t, a["max-ram"])}}
	case "request":
		r := &launcher.Request{NodeRequest: events.NodeRequest{ID: a["id"], Labels: list(a["labels"]), Requestor: "ci",
			Tenant: a["tenant"]}, State: events.RequestRequested, Provider: a["provider"], ModifyIndex: 1}
		if _, ok := a["min-ready"]; ok {
			r.MinReady, r.Requestor = true, MinReadyRequestor
		}
		if a["state"] != "" {
			r.State = a["state"]
		}
		for _, p := range list(a["declined"]) {
			r.DeclinedBy = append(r.DeclinedBy, launcher.Decline{Provider: p, Reason: "declined"})
		}
		w.attempts[r.ID] = num(t, a["attempts"])
		w.reqs = slices.DeleteFunc(w.reqs, func(o *launcher.Request) bool { return o.ID == r.ID })
		w.reqs = append(w.reqs, r)
	case "instance":
		in := &launcher.Instance{Instance: events.Instance{ID: a["id"], Provider: a["provider"], Pool: a["pool"], Label: a["label"],
			RequestID: a["request"], Cores: num(t, a["cores"]), RAMMB: num(t, a["ram"]), Tenant: a["tenant"]},
			State: a["state"], ExternalID: a["host"], ModifyIndex: 1}
		_, down := a["unreachable"]
		w.unreachable[in.ID] = down
		w.insts = slices.DeleteFunc(w.insts, func(o *launcher.Instance) bool { return o.ID == in.ID })
		w.insts = append(w.insts, in)
	case "clear":
		w.reqs, w.insts = nil, nil
	case "decide":
		return w.decide(t, a)
	default:
		t.Fatalf("unknown command %q", d.Cmd)
	}
	return ""
}

// decide runs one pass of provider's runner and renders its steps.
func (w *world) decide(t *testing.T, a map[string]string) string {
	name := a["provider"]
	i := slices.IndexFunc(w.provs, func(p *launcher.Provider) bool { return p.Config.Name == name })
	if i < 0 {
		t.Fatalf("no provider %q", name)
	}
	prov := w.provs[i]
	var mine []*launcher.Instance
	for _, in := range w.insts {
		if in.Provider == name {
			mine = append(mine, in)
		}
	}
	hosts, static := w.hosts[name]
	f := &facts{name: name, gen: prov.ConfigIndex, prov: prov, provs: w.provs, insts: mine, retries: prov.Config.LaunchRetries,
		attempts: w.attempts, static: static, hosts: hosts, ask: worldLookups{w: w, prov: prov}}
	if f.retries == 0 {
		f.retries = DefaultLaunchRetries
	}
	switch q := a["quota"]; q {
	case "unknown":
	case "":
		f.quota = &driver.Quota{}
	default:
		parts := strings.Split(q, "/")
		if len(parts) != 3 {
			t.Fatalf("quota %q: want instances/cores/ram", q)
		}
		f.quota = &driver.Quota{Instances: num(t, parts[0]), Cores: num(t, parts[1]), RAMMB: num(t, parts[2])}
	}
	in := passInput{skip: func(req *launcher.Request, _ bool) bool { return req.Declined(name) }, ready: w.ready(f)}
	for _, r := range w.reqs {
		switch r.State {
		case events.RequestPending:
			in.pending = append(in.pending, r)
		case events.RequestRequested:
			in.requested = append(in.requested, r)
		}
	}
	var out strings.Builder
	ex := &scriptExec{out: &out, conflict: list(a["conflict"]), failing: list(a["error"])}
	if _, ok := a["group"]; ok {
		ex.b = newBatcher(ex.submit)
	}
	tl, err := decidePass(f, in, ex)
	if err != nil {
		fmt.Fprintf(&out, "pass ended: %v\n", err)
	}
	fmt.Fprintf(&out, "busy=%t paused=%t retry=%t\n", tl.busy, tl.paused, tl.retry)
	return out.String()
}

// scriptExec plays the runner for a script: every step at once, or,
// with a batcher, commands queued and printed a group at a time as the
// runner submits them. A step named in conflict or failing (by its
// command's name or its request's id) is refused or fails.
type scriptExec struct {
	out               *strings.Builder
	conflict, failing []string
	b                 *batcher
	groups            int
}

func (e *scriptExec) do(s step, then func(err error)) (queued bool) {
	if e.b != nil {
		if s.fail == nil && s.release == nil && s.cmd != nil {
			e.b.add(s, then)
			return true
		}
		if s.fail != nil || s.release != nil {
			e.b.flush()
		}
	}
	then(e.play(s, ""))
	return false
}

func (e *scriptExec) flush() {
	if e.b != nil {
		e.b.flush()
	}
}

// submit prints a group as the runner submits it.
func (e *scriptExec) submit(group []step) []error {
	e.groups++
	fmt.Fprintf(e.out, "group %d:\n", e.groups)
	errs := make([]error, len(group))
	for i, s := range group {
		errs[i] = e.play(s, "  ")
	}
	return errs
}

// play prints s and returns its scripted outcome.
func (e *scriptExec) play(s step, indent string) error {
	line := render(s)
	if line == "" {
		return nil
	}
	e.out.WriteString(indent + line)
	named := func(names []string) bool {
		return slices.Contains(names, s.name) || (s.req != nil && slices.Contains(names, s.req.ID))
	}
	switch {
	case named(e.conflict):
		e.out.WriteString(" → conflict\n")
		return &commands.ConflictError{Reason: "changed"}
	case named(e.failing):
		e.out.WriteString(" → error\n")
		return errors.New("log unavailable")
	}
	e.out.WriteString("\n")
	return nil
}

// ready indexes the free instances as the runner does: by pool and
// label, a static host under each of its host's labels.
func (w *world) ready(f *facts) map[string][]*launcher.Instance {
	if !f.static {
		return readyByPool(f.insts)
	}
	out := map[string][]*launcher.Instance{}
	for _, in := range f.insts {
		if in.State != events.InstanceReady || in.RequestID != "" {
			continue
		}
		for _, h := range f.hosts {
			if h.Name == in.ExternalID {
				for _, l := range h.Labels {
					out[readyKey(in.Pool, l)] = append(out[readyKey(in.Pool, l)], in)
				}
			}
		}
	}
	return out
}

// render prints a step, or "" for one that only marks a request checked
// or logs at debug.
func render(s step) string {
	switch {
	case s.fail != nil:
		return "fail-request " + s.fail.reqID + ": " + s.fail.reason
	case s.release != nil:
		return "release " + s.req.ID + " and unpause: " + s.release.Error()
	case s.mark == markAside:
		return "set aside " + s.req.ID + " (a better provider serves it)"
	}
	if s.cmd == nil {
		if s.debug || s.log == "" {
			return ""
		}
		return "note: " + s.log + attrs(s.attrs)
	}
	switch c := s.cmd.(type) {
	case lcmd.Decline:
		return "decline " + c.RequestID + ": " + c.Reason
	case lcmd.Fail:
		line := "fail " + c.RequestID + ": " + c.Reason
		if c.LabelError != "" {
			line += " (label " + c.LabelError + " errored)"
		}
		return line
	case lcmd.Pause:
		if c.Paused {
			return "pause for " + c.RequestID + ": " + c.Reason
		}
		return "unpause: " + c.Reason
	case *lcmd.Launch:
		in := c.Instance
		return fmt.Sprintf("launch %s %s in %s (type %s, %d cores, %d MB%s)", c.RequestID, in.Label, in.Pool, in.InstanceType,
			in.Cores, in.RAMMB, attrMap(in.Attributes))
	case *lcmd.Accept:
		line := "accept " + c.RequestID + " in " + c.Pool
		if c.Partial {
			line += " partially"
		}
		for _, as := range c.Assign {
			line += " assign=" + as.InstanceID
		}
		for _, in := range c.Launch {
			line += fmt.Sprintf(" launch=%s(%s,%dc,%dMB%s)", in.Label, in.InstanceType, in.Cores, in.RAMMB, attrMap(in.Attributes))
		}
		return line
	case *lcmd.CreateRequest:
		return "create min-ready request for " + strings.Join(c.Labels, ",")
	}
	return fmt.Sprintf("%s %+v", s.name, s.cmd)
}

func attrs(kv []any) string {
	var b strings.Builder
	for i := 0; i+1 < len(kv); i += 2 {
		if k := kv[i].(string); k != "request" && k != "requestor" {
			fmt.Fprintf(&b, " %s=%v", k, kv[i+1])
		}
	}
	return b.String()
}

func attrMap(m map[string]string) string {
	if len(m) == 0 {
		return ""
	}
	var kv []string
	for k, v := range m {
		kv = append(kv, k+":"+v)
	}
	slices.Sort(kv)
	return ", attrs " + strings.Join(kv, ",")
}

// worldLookups answers a pass's lookups from the script's tables.
type worldLookups struct {
	w    *world
	prov *launcher.Provider
}

func (l worldLookups) resources(label string) (driver.Resources, error) {
	lc, _ := l.prov.Label(label)
	if lc.InstanceType == "" {
		return driver.Resources{}, nil // a static host has no type
	}
	a, ok := l.w.types[lc.InstanceType]
	if !ok {
		return driver.Resources{}, fmt.Errorf("instance type %q not in the script", lc.InstanceType)
	}
	return a.res, a.err
}

func (l worldLookups) reachable(_ string, in *launcher.Instance) bool { return !l.w.unreachable[in.ID] }

func (l worldLookups) tenantExceeds(tenant string, need launcher.Usage) (string, error) {
	tn, ok := l.w.tenants[tenant]
	if tenant == "" || !ok {
		return "", nil
	}
	var insts []*launcher.Instance
	for _, in := range l.w.insts {
		if in.Tenant == tenant {
			insts = append(insts, in)
		}
	}
	return tn.Exceeds(launcher.UsageOf(insts).Add(need)), nil
}
