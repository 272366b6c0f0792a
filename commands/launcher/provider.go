package launcher

import (
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/gohcl"
	"github.com/hashicorp/hcl/v2/hclsyntax"

	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/launcher"
)

// Drivers lists the drivers a provider may name (local: client agent
// processes on the server's machine, configured in the agent file's
// local_driver block, docs/capacity.md).
var Drivers = []string{"sim", "static", "local"}

// validName is the rule for provider, pool, label and tenant names.
var validName = regexp.MustCompile(`^[a-zA-Z0-9][a-zA-Z0-9._-]{0,127}$`)

// ValidName reports whether name may name a launcher entity, as a
// *commands.ValidationError naming field.
func ValidName(field, name string) error {
	if !validName.MatchString(name) {
		return commands.Invalid(field, "%q must be 1-128 letters, digits, dots, dashes or underscores", name)
	}
	return nil
}

// providerFile is the HCL shape of a provider file.
type providerFile struct {
	Providers []providerBlock `hcl:"provider,block"`
}

type providerBlock struct {
	Name          string       `hcl:"name,label"`
	Driver        string       `hcl:"driver"`
	Priority      *int         `hcl:"priority,optional"`
	LaunchRetries *int         `hcl:"launch_retries,optional"`
	Pools         []poolBlock  `hcl:"pool,block"`
	Labels        []labelBlock `hcl:"label,block"`
	Sim           *simBlock    `hcl:"sim,block"`
	Static        *staticBlock `hcl:"static,block"`
}

type poolBlock struct {
	Name           string            `hcl:"name,label"`
	MaxServers     int               `hcl:"max_servers,optional"`
	MaxCores       int               `hcl:"max_cores,optional"`
	MaxRAMMB       int               `hcl:"max_ram_mb,optional"`
	Labels         []string          `hcl:"labels"`
	NodeAttributes map[string]string `hcl:"node_attributes,optional"`
}

type labelBlock struct {
	Name         string `hcl:"name,label"`
	InstanceType string `hcl:"instance_type,optional"`
	MinReady     int    `hcl:"min_ready,optional"`
}

type simBlock struct {
	InstanceTypes map[string]map[string]int `hcl:"instance_types,optional"`
	Quota         map[string]int            `hcl:"quota,optional"`
	BootTime      string                    `hcl:"boot_time,optional"`
}

type staticBlock struct {
	Hosts []hostBlock `hcl:"host,block"`
}

type hostBlock struct {
	Name    string   `hcl:"name,label"`
	Address string   `hcl:"address"`
	Labels  []string `hcl:"labels"`
}

// ParseProvider parses a provider file holding exactly one provider
// block. Errors are *commands.ValidationError naming the field.
func ParseProvider(src []byte, filename string) (events.ProviderConfig, error) {
	f, diags := hclsyntax.ParseConfig(src, filename, hcl.Pos{Line: 1, Column: 1})
	if diags.HasErrors() {
		return events.ProviderConfig{}, diagError(diags)
	}
	var pf providerFile
	if diags := gohcl.DecodeBody(f.Body, nil, &pf); diags.HasErrors() {
		return events.ProviderConfig{}, diagError(diags)
	}
	if len(pf.Providers) != 1 {
		return events.ProviderConfig{}, commands.Invalid("provider", "the file must hold exactly one provider block, not %d", len(pf.Providers))
	}
	b := pf.Providers[0]
	cfg := events.ProviderConfig{Name: b.Name, Driver: b.Driver, Priority: events.DefaultProviderPriority}
	if b.Priority != nil {
		cfg.Priority = *b.Priority
	}
	if b.LaunchRetries != nil {
		cfg.LaunchRetries = *b.LaunchRetries
	}
	for _, p := range b.Pools {
		cfg.Pools = append(cfg.Pools, events.ProviderPool{Name: p.Name, MaxServers: p.MaxServers, MaxCores: p.MaxCores,
			MaxRAMMB: p.MaxRAMMB, Labels: p.Labels, NodeAttributes: p.NodeAttributes})
	}
	for _, l := range b.Labels {
		cfg.Labels = append(cfg.Labels, events.LabelConfig{Name: l.Name, InstanceType: l.InstanceType, MinReady: l.MinReady})
	}
	if b.Sim != nil {
		sim := &events.SimConfig{InstanceTypes: map[string]events.SimInstanceType{}}
		for name, t := range b.Sim.InstanceTypes {
			for k := range t {
				if k != "cores" && k != "ram_mb" {
					return cfg, commands.Invalid("sim.instance_types."+name, "unknown attribute %q (cores, ram_mb)", k)
				}
			}
			sim.InstanceTypes[name] = events.SimInstanceType{Cores: t["cores"], RAMMB: t["ram_mb"]}
		}
		for k, v := range b.Sim.Quota {
			switch k {
			case "instances":
				sim.Quota.Instances = v
			case "cores":
				sim.Quota.Cores = v
			case "ram_mb":
				sim.Quota.RAMMB = v
			default:
				return cfg, commands.Invalid("sim.quota", "unknown attribute %q (instances, cores, ram_mb)", k)
			}
		}
		if b.Sim.BootTime != "" {
			d, err := time.ParseDuration(b.Sim.BootTime)
			if err != nil {
				return cfg, commands.Invalid("sim.boot_time", "%q is not a duration", b.Sim.BootTime)
			}
			sim.BootTime = int64(d)
		}
		cfg.Sim = sim
	}
	if b.Static != nil {
		st := &events.StaticConfig{}
		for _, h := range b.Static.Hosts {
			st.Hosts = append(st.Hosts, events.StaticHost{Name: h.Name, Address: h.Address, Labels: h.Labels})
		}
		cfg.Static = st
	}
	return cfg, ValidateProvider(cfg)
}

// diagError turns HCL diagnostics into a validation error naming the
// attribute or block (HCL's own messages name it) and the position.
func diagError(diags hcl.Diagnostics) error {
	d := diags.Errs()[0]
	var de *hcl.Diagnostic
	field := "file"
	if errors.As(d, &de) && de.Subject != nil {
		field = fmt.Sprintf("%s:%d,%d", de.Subject.Filename, de.Subject.Start.Line, de.Subject.Start.Column)
	}
	reason := d.Error()
	if de != nil {
		reason = de.Summary
		if de.Detail != "" {
			reason += ": " + de.Detail
		}
	}
	return &commands.ValidationError{Field: field, Reason: reason}
}

// ValidateProvider checks a configuration alone.
func ValidateProvider(c events.ProviderConfig) error {
	if err := ValidName("provider", c.Name); err != nil {
		return err
	}
	if !slices.Contains(Drivers, c.Driver) {
		return commands.Invalid("driver", "%q is not a driver (%v)", c.Driver, Drivers)
	}
	if c.Priority < 0 {
		return commands.Invalid("priority", "%d is negative", c.Priority)
	}
	if c.LaunchRetries < 0 {
		return commands.Invalid("launch_retries", "%d is negative", c.LaunchRetries)
	}
	if len(c.Pools) == 0 {
		return commands.Invalid("pool", "a provider needs at least one pool")
	}
	labels := map[string]events.LabelConfig{}
	for _, l := range c.Labels {
		if err := ValidName("label", l.Name); err != nil {
			return err
		}
		if _, dup := labels[l.Name]; dup {
			return commands.Invalid("label."+l.Name, "defined twice")
		}
		if l.MinReady < 0 {
			return commands.Invalid("label."+l.Name+".min_ready", "%d is negative", l.MinReady)
		}
		if c.Driver == "sim" && l.InstanceType == "" {
			return commands.Invalid("label."+l.Name+".instance_type", "the sim driver needs an instance type")
		}
		labels[l.Name] = l
	}
	pools := map[string]bool{}
	for _, p := range c.Pools {
		if err := ValidName("pool", p.Name); err != nil {
			return err
		}
		if pools[p.Name] {
			return commands.Invalid("pool."+p.Name, "defined twice")
		}
		pools[p.Name] = true
		if p.MaxServers < 0 || p.MaxCores < 0 || p.MaxRAMMB < 0 {
			return commands.Invalid("pool."+p.Name, "limits must not be negative")
		}
		if len(p.Labels) == 0 {
			return commands.Invalid("pool."+p.Name+".labels", "a pool serves at least one label")
		}
		for _, l := range p.Labels {
			if _, ok := labels[l]; !ok {
				return commands.Invalid("pool."+p.Name+".labels", "label %q has no label block", l)
			}
		}
	}
	switch c.Driver {
	case "sim":
		if c.Sim == nil {
			return commands.Invalid("sim", "the sim driver needs a sim block")
		}
		if c.Sim.BootTime < 0 {
			return commands.Invalid("sim.boot_time", "must not be negative")
		}
	case "static":
		return validateStatic(c)
	}
	return nil
}

// ApplyProvider creates a provider or applies a new configuration to it.
type ApplyProvider struct {
	Config events.ProviderConfig
}

var _ commands.Command = ApplyProvider{}

// Validate implements commands.Command.
func (a ApplyProvider) Validate() error { return ValidateProvider(a.Config) }

// Decide implements commands.Command: nothing when the configuration
// equals the current one by value (P16).
func (a ApplyProvider) Decide(v projections.View, _ time.Time, _ commands.IDs) (commands.Decision, error) {
	cur, err := launcher.GetProvider(v, a.Config.Name)
	switch {
	case err == nil:
		if sameConfig(cur.Config, a.Config) {
			return commands.Decision{}, nil
		}
	case !errors.Is(err, projections.ErrNotFound):
		return commands.Decision{}, err
	}
	return commands.Decision{Events: []events.Payload{&events.ProviderApplied{Provider: a.Config}}}, nil
}

// sameConfig compares two configurations by value, as stored (nil and
// empty maps and slices are equal, as after a round trip through the log).
func sameConfig(a, b events.ProviderConfig) bool {
	ea, err1 := events.Marshal(&a)
	eb, err2 := events.Marshal(&b)
	return err1 == nil && err2 == nil && reflect.DeepEqual(ea, eb)
}

// DeleteProvider removes a provider. Its instances stay until deleted.
type DeleteProvider struct {
	Name string
}

var _ commands.Command = DeleteProvider{}

// Validate implements commands.Command.
func (d DeleteProvider) Validate() error { return ValidName("name", d.Name) }

// Decide implements commands.Command.
func (d DeleteProvider) Decide(v projections.View, _ time.Time, _ commands.IDs) (commands.Decision, error) {
	if _, err := launcher.GetProvider(v, d.Name); errors.Is(err, projections.ErrNotFound) {
		return commands.Decision{}, &commands.NotFoundError{Kind: "provider", ID: d.Name}
	} else if err != nil {
		return commands.Decision{}, err
	}
	return commands.Decision{Events: []events.Payload{&events.ProviderDeleted{Name: d.Name}},
		Preconditions: []events.Precondition{{Table: launcher.ProvidersTable, Key: d.Name, Op: events.Exists}}}, nil
}
