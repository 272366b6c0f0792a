package policy

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/gohcl"
	"github.com/hashicorp/hcl/v2/hclparse"
)

// Coarse dispositions of the policy field.
const (
	PolicyDeny  = "deny"
	PolicyRead  = "read"
	PolicyWrite = "write"
	PolicyList  = "list"  // plugin rules only
	PolicyScale = "scale" // namespace rules only
)

// Namespace capabilities (Nomad's names).
const (
	CapDeny                = "deny"
	CapListJobs            = "list-jobs"
	CapParseJob            = "parse-job"
	CapReadJob             = "read-job"
	CapSubmitJob           = "submit-job"
	CapDispatchJob         = "dispatch-job"
	CapReadLogs            = "read-logs"
	CapReadFS              = "read-fs"
	CapAllocExec           = "alloc-exec"
	CapAllocNodeExec       = "alloc-node-exec"
	CapAllocLifecycle      = "alloc-lifecycle"
	CapCSIRegisterPlugin   = "csi-register-plugin"
	CapCSIWriteVolume      = "csi-write-volume"
	CapCSIReadVolume       = "csi-read-volume"
	CapCSIListVolume       = "csi-list-volume"
	CapCSIMountVolume      = "csi-mount-volume"
	CapHostVolumeCreate    = "host-volume-create"
	CapHostVolumeRegister  = "host-volume-register"
	CapHostVolumeRead      = "host-volume-read"
	CapHostVolumeWrite     = "host-volume-write"
	CapHostVolumeDelete    = "host-volume-delete"
	CapListScalingPolicies = "list-scaling-policies"
	CapReadScalingPolicy   = "read-scaling-policy"
	CapReadJobScaling      = "read-job-scaling"
	CapScaleJob            = "scale-job"
	CapSubmitRecommend     = "submit-recommendation"
	CapSentinelOverride    = "sentinel-override"
)

// Variables path capabilities.
const (
	VarRead    = "read"
	VarWrite   = "write"
	VarList    = "list"
	VarDestroy = "destroy"
	VarDeny    = "deny"
)

var namespaceCaps = []string{CapDeny, CapListJobs, CapParseJob, CapReadJob, CapSubmitJob, CapDispatchJob,
	CapReadLogs, CapReadFS, CapAllocExec, CapAllocNodeExec, CapAllocLifecycle, CapCSIRegisterPlugin,
	CapCSIWriteVolume, CapCSIReadVolume, CapCSIListVolume, CapCSIMountVolume, CapHostVolumeCreate,
	CapHostVolumeRegister, CapHostVolumeRead, CapHostVolumeWrite, CapHostVolumeDelete,
	CapListScalingPolicies, CapReadScalingPolicy, CapReadJobScaling, CapScaleJob, CapSubmitRecommend,
	CapSentinelOverride}

var variableCaps = []string{VarRead, VarWrite, VarList, VarDestroy, VarDeny}

var readCaps = []string{CapListJobs, CapParseJob, CapReadJob, CapCSIListVolume, CapCSIReadVolume,
	CapListScalingPolicies, CapReadScalingPolicy, CapReadJobScaling, CapHostVolumeRead}

var writeCaps = append(slices.Clone(readCaps), CapSubmitJob, CapDispatchJob, CapReadLogs, CapReadFS,
	CapAllocExec, CapAllocLifecycle, CapCSIWriteVolume, CapCSIMountVolume, CapScaleJob,
	CapSubmitRecommend, CapHostVolumeCreate, CapHostVolumeRegister, CapHostVolumeWrite, CapHostVolumeDelete)

var scaleCaps = []string{CapListScalingPolicies, CapReadScalingPolicy, CapReadJobScaling, CapScaleJob}

// ExpandNamespacePolicy returns the capabilities a namespace rule's coarse
// policy stands for.
func ExpandNamespacePolicy(p string) []string {
	switch p {
	case PolicyDeny:
		return []string{CapDeny}
	case PolicyRead:
		return slices.Clone(readCaps)
	case PolicyWrite:
		return slices.Clone(writeCaps)
	case PolicyScale:
		return slices.Clone(scaleCaps)
	}
	return nil
}

// Policy is a parsed policy document.
type Policy struct {
	Namespaces  []NamespaceRule  `hcl:"namespace,block" json:",omitempty"`
	HostVolumes []HostVolumeRule `hcl:"host_volume,block" json:",omitempty"`
	NodePools   []NodePoolRule   `hcl:"node_pool,block" json:",omitempty"`
	Node        *Rule            `hcl:"node,block" json:",omitempty"`
	Agent       *Rule            `hcl:"agent,block" json:",omitempty"`
	Operator    *Rule            `hcl:"operator,block" json:",omitempty"`
	Quota       *Rule            `hcl:"quota,block" json:",omitempty"`
	Plugin      *Rule            `hcl:"plugin,block" json:",omitempty"`
}

// Rule is a node, agent, operator, quota or plugin rule.
type Rule struct {
	Policy string `hcl:"policy"`
}

// NamespaceRule is a namespace block.
type NamespaceRule struct {
	Name         string          `hcl:"name,label"`
	Policy       string          `hcl:"policy,optional"`
	Capabilities []string        `hcl:"capabilities,optional"`
	Variables    *VariablesBlock `hcl:"variables,block"`
}

// VariablesBlock is a namespace rule's variables block.
type VariablesBlock struct {
	Paths []PathRule `hcl:"path,block"`
}

// PathRule grants capabilities on variables paths matching Path (a glob).
type PathRule struct {
	Path         string   `hcl:"path,label"`
	Capabilities []string `hcl:"capabilities"`
}

// HostVolumeRule is a host_volume block.
type HostVolumeRule struct {
	Name         string   `hcl:"name,label"`
	Policy       string   `hcl:"policy,optional"`
	Capabilities []string `hcl:"capabilities,optional"`
}

// NodePoolRule is a node_pool block.
type NodePoolRule struct {
	Name         string   `hcl:"name,label"`
	Policy       string   `hcl:"policy,optional"`
	Capabilities []string `hcl:"capabilities,optional"`
}

// MaxRulesBytes bounds a policy's source text.
const MaxRulesBytes = 64 << 10

// Error is a policy that does not parse or validate; Field names the rule
// at fault (such as namespace["web"].capabilities).
type Error struct {
	Field  string
	Reason string
}

func (e *Error) Error() string {
	if e.Field == "" {
		return "acl policy: " + e.Reason
	}
	return fmt.Sprintf("acl policy: %s: %s", e.Field, e.Reason)
}

// Parse parses and validates a policy in HCL or, when it starts with "{",
// JSON.
func Parse(rules string) (*Policy, error) {
	if strings.TrimSpace(rules) == "" {
		return nil, &Error{Reason: "no rules"}
	}
	if len(rules) > MaxRulesBytes {
		return nil, &Error{Reason: fmt.Sprintf("%d bytes exceeds %d", len(rules), MaxRulesBytes)}
	}
	parser := hclparse.NewParser()
	var f *hcl.File
	var diags hcl.Diagnostics
	if strings.HasPrefix(strings.TrimSpace(rules), "{") {
		f, diags = parser.ParseJSON([]byte(rules), "policy.json")
	} else {
		f, diags = parser.ParseHCL([]byte(rules), "policy.hcl")
	}
	if diags.HasErrors() {
		return nil, &Error{Reason: diagText(diags)}
	}
	var p Policy
	if diags := gohcl.DecodeBody(f.Body, nil, &p); diags.HasErrors() {
		return nil, &Error{Reason: diagText(diags)}
	}
	if err := p.validate(); err != nil {
		return nil, err
	}
	return &p, nil
}

func diagText(diags hcl.Diagnostics) string {
	var parts []string
	for _, d := range diags {
		if d.Severity != hcl.DiagError {
			continue
		}
		s := d.Summary
		if d.Detail != "" {
			s += ": " + d.Detail
		}
		if d.Subject != nil {
			s = fmt.Sprintf("line %d: %s", d.Subject.Start.Line, s)
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, "; ")
}

func (p *Policy) validate() error {
	seen := map[string]bool{}
	for _, ns := range p.Namespaces {
		field := fmt.Sprintf("namespace[%q]", ns.Name)
		if ns.Name == "" {
			return &Error{Field: field, Reason: "empty namespace label"}
		}
		if seen[ns.Name] {
			return &Error{Field: field, Reason: "namespace rule given twice"}
		}
		seen[ns.Name] = true
		if ns.Policy != "" && ExpandNamespacePolicy(ns.Policy) == nil {
			return &Error{Field: field + ".policy", Reason: fmt.Sprintf("%q is not one of deny, read, write, scale", ns.Policy)}
		}
		for _, c := range ns.Capabilities {
			if !slices.Contains(namespaceCaps, c) {
				return &Error{Field: field + ".capabilities", Reason: fmt.Sprintf("unknown capability %q", c)}
			}
		}
		if ns.Variables != nil {
			for _, pr := range ns.Variables.Paths {
				pf := fmt.Sprintf("%s.variables.path[%q]", field, pr.Path)
				if pr.Path == "" {
					return &Error{Field: pf, Reason: "empty path label"}
				}
				if len(pr.Capabilities) == 0 {
					return &Error{Field: pf + ".capabilities", Reason: "no capabilities"}
				}
				for _, c := range pr.Capabilities {
					if !slices.Contains(variableCaps, c) {
						return &Error{Field: pf + ".capabilities", Reason: fmt.Sprintf("unknown variables capability %q", c)}
					}
				}
			}
		}
	}
	for _, hv := range p.HostVolumes {
		field := fmt.Sprintf("host_volume[%q]", hv.Name)
		if hv.Policy != "" && !slices.Contains([]string{PolicyDeny, PolicyRead, PolicyWrite}, hv.Policy) {
			return &Error{Field: field + ".policy", Reason: fmt.Sprintf("%q is not one of deny, read, write", hv.Policy)}
		}
		for _, c := range hv.Capabilities {
			if !slices.Contains([]string{"deny", "mount-readonly", "mount-readwrite"}, c) {
				return &Error{Field: field + ".capabilities", Reason: fmt.Sprintf("unknown capability %q", c)}
			}
		}
	}
	for _, np := range p.NodePools {
		if np.Policy != "" && !slices.Contains([]string{PolicyDeny, PolicyRead, PolicyWrite}, np.Policy) {
			return &Error{Field: fmt.Sprintf("node_pool[%q].policy", np.Name), Reason: fmt.Sprintf("%q is not one of deny, read, write", np.Policy)}
		}
	}
	for name, r := range map[string]*Rule{"node": p.Node, "agent": p.Agent, "operator": p.Operator, "quota": p.Quota} {
		if r != nil && !slices.Contains([]string{PolicyDeny, PolicyRead, PolicyWrite}, r.Policy) {
			return &Error{Field: name + ".policy", Reason: fmt.Sprintf("%q is not one of deny, read, write", r.Policy)}
		}
	}
	if p.Plugin != nil && !slices.Contains([]string{PolicyDeny, PolicyList, PolicyRead, PolicyWrite}, p.Plugin.Policy) {
		return &Error{Field: "plugin.policy", Reason: fmt.Sprintf("%q is not one of deny, list, read, write", p.Plugin.Policy)}
	}
	if len(p.Namespaces) == 0 && len(p.HostVolumes) == 0 && len(p.NodePools) == 0 && p.Node == nil &&
		p.Agent == nil && p.Operator == nil && p.Quota == nil && p.Plugin == nil {
		return &Error{Reason: "no rules"}
	}
	return nil
}

// IsError reports whether err is a policy *Error.
func IsError(err error) bool {
	var pe *Error
	return errors.As(err, &pe)
}
