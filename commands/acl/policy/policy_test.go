package policy_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/ordoplane/ordo/commands/acl/policy"
)

const sample = `
namespace "default" {
  policy       = "read"
  capabilities = ["submit-job"]
  variables {
    path "project/*" { capabilities = ["read", "write"] }
    path "project/secret" { capabilities = ["deny"] }
  }
}
namespace "*-web" { policy = "deny" }
namespace "*" { policy = "write" }
node { policy = "read" }
agent { policy = "write" }
operator { policy = "read" }
plugin { policy = "list" }
`

const sampleJSON = `{
  "namespace": {
    "default": {"policy": "read", "capabilities": ["submit-job"],
      "variables": {"path": {"project/*": {"capabilities": ["read", "write"]},
                             "project/secret": {"capabilities": ["deny"]}}}},
    "*-web": {"policy": "deny"},
    "*": {"policy": "write"}
  },
  "node": {"policy": "read"}, "agent": {"policy": "write"},
  "operator": {"policy": "read"}, "plugin": {"policy": "list"}
}`

func TestParseAndAllow(t *testing.T) {
	for name, src := range map[string]string{"hcl": sample, "json": sampleJSON} {
		t.Run(name, func(t *testing.T) {
			p, err := policy.Parse(src)
			if err != nil {
				t.Fatal(err)
			}
			a := policy.Compile([]*policy.Policy{p})
			for _, tc := range []struct {
				name string
				got  bool
				want bool
			}{
				{"default read-job", a.AllowNamespace("default", policy.CapReadJob), true},
				{"default submit-job (capability merged)", a.AllowNamespace("default", policy.CapSubmitJob), true},
				{"default read-logs", a.AllowNamespace("default", policy.CapReadLogs), false},
				{"production-web denied by the closest glob", a.AllowNamespace("production-web", policy.CapReadJob), false},
				{"other write by *", a.AllowNamespace("other", policy.CapAllocExec), true},
				{"var read", a.AllowVariable("default", "project/db", policy.VarRead), true},
				{"var list implied", a.AllowVariable("default", "project/db", policy.VarList), true},
				{"var destroy", a.AllowVariable("default", "project/db", policy.VarDestroy), false},
				{"var exact deny", a.AllowVariable("default", "project/secret", policy.VarRead), false},
				{"var other path", a.AllowVariable("default", "system/x", policy.VarRead), false},
				{"node read", a.AllowNode(false), true},
				{"node write", a.AllowNode(true), false},
				{"agent write", a.AllowAgent(true), true},
				{"operator write", a.AllowOperator(true), false},
				{"plugin list", a.AllowPlugin(policy.LevelList), true},
				{"plugin read", a.AllowPlugin(policy.LevelRead), false},
			} {
				if tc.got != tc.want {
					t.Errorf("%s = %v, want %v", tc.name, tc.got, tc.want)
				}
			}
		})
	}
}

func TestDenyWinsAcrossPolicies(t *testing.T) {
	w, _ := policy.Parse(`namespace "default" { policy = "write" }
node { policy = "write" }`)
	d, _ := policy.Parse(`namespace "default" { capabilities = ["deny"] }
node { policy = "deny" }`)
	a := policy.Compile([]*policy.Policy{w, d})
	if a.AllowNamespace("default", policy.CapReadJob) || a.AllowNode(false) {
		t.Fatal("deny did not win")
	}
	if !policy.Management.AllowNamespace("x", policy.CapSubmitJob) || !policy.Management.AllowOperator(true) {
		t.Fatal("management must allow everything")
	}
}

func TestParseErrorsNameTheField(t *testing.T) {
	for src, field := range map[string]string{
		`namespace "a" { policy = "rw" }`:                                                      `namespace["a"].policy`,
		`namespace "a" { capabilities = ["fly"] }`:                                             `namespace["a"].capabilities`,
		"namespace \"a\" {\n variables {\n path \"x\" {\n capabilities = [\"eat\"]\n }\n }\n}": `namespace["a"].variables.path["x"].capabilities`,
		`node { policy = "list" }`:                                                             "node.policy",
		`plugin { policy = "scale" }`:                                                          "plugin.policy",
		`namespace "a" { policy = "read" }
namespace "a" { policy = "write" }`: `namespace["a"]`,
	} {
		_, err := policy.Parse(src)
		pe, ok := err.(*policy.Error)
		if !ok || pe.Field != field {
			t.Errorf("Parse(%q) = %v, want an error naming %s", src, err, field)
		}
	}
	for _, src := range []string{"", "   ", "bogus {", `unknown { policy = "read" }`, `{"node": 3}`, strings.Repeat("#", policy.MaxRulesBytes+1)} {
		if _, err := policy.Parse(src); err == nil || !policy.IsError(err) {
			t.Errorf("Parse(%.30q) = %v, want a policy error", src, err)
		}
	}
}

// FuzzParse: no input panics the parser or the compiler, and a policy that
// parses re-parses from its JSON form to the same policy.
func FuzzParse(f *testing.F) {
	f.Add(sample)
	f.Add(sampleJSON)
	f.Add(`namespace "*" { policy = "scale" }`)
	f.Add(`host_volume "prod-*" { capabilities = ["mount-readonly"] }`)
	f.Fuzz(func(t *testing.T, src string) {
		p, err := policy.Parse(src)
		if err != nil {
			return
		}
		a := policy.Compile([]*policy.Policy{p})
		a.AllowNamespace("default", policy.CapReadJob)
		a.AllowVariable("default", "a/b", policy.VarRead)
		b, err := json.Marshal(toJSON(p))
		if err != nil {
			t.Fatal(err)
		}
		q, err := policy.Parse(string(b))
		if err != nil {
			t.Fatalf("re-parse of %s: %v", b, err)
		}
		if !reflect.DeepEqual(normal(p), normal(q)) {
			t.Fatalf("round trip changed the policy:\n%+v\n%+v", p, q)
		}
	})
}

// toJSON renders p in the policy JSON form.
func toJSON(p *policy.Policy) map[string]any {
	out := map[string]any{}
	if len(p.Namespaces) > 0 {
		ns := map[string]any{}
		for _, r := range p.Namespaces {
			m := map[string]any{}
			if r.Policy != "" {
				m["policy"] = r.Policy
			}
			if r.Capabilities != nil {
				m["capabilities"] = r.Capabilities
			}
			if r.Variables != nil {
				paths := map[string]any{}
				for _, pr := range r.Variables.Paths {
					paths[pr.Path] = map[string]any{"capabilities": pr.Capabilities}
				}
				m["variables"] = map[string]any{"path": paths}
			}
			ns[r.Name] = m
		}
		out["namespace"] = ns
	}
	for name, r := range map[string]*policy.Rule{"node": p.Node, "agent": p.Agent, "operator": p.Operator, "quota": p.Quota, "plugin": p.Plugin} {
		if r != nil {
			out[name] = map[string]any{"policy": r.Policy}
		}
	}
	for name, rules := range map[string][]policy.HostVolumeRule{"host_volume": p.HostVolumes} {
		if len(rules) > 0 {
			m := map[string]any{}
			for _, r := range rules {
				m[r.Name] = ruleMap(r.Policy, r.Capabilities)
			}
			out[name] = m
		}
	}
	if len(p.NodePools) > 0 {
		m := map[string]any{}
		for _, r := range p.NodePools {
			m[r.Name] = ruleMap(r.Policy, r.Capabilities)
		}
		out["node_pool"] = m
	}
	return out
}

// normal renders p as JSON with sorted blocks, for comparison.
func normal(p *policy.Policy) string {
	b, _ := json.Marshal(toJSON(p))
	return string(b)
}

// ruleMap renders a rule's policy and capabilities, leaving out the unset.
func ruleMap(policy string, caps []string) map[string]any {
	x := map[string]any{}
	if policy != "" {
		x["policy"] = policy
	}
	if caps != nil {
		x["capabilities"] = caps
	}
	return x
}
