package taskenv

import (
	"strings"

	"github.com/ordoplane/ordo/events"
)

// Env is a task's environment and the node it runs on: what ${...} in its
// job's strings may name. The zero Env replaces nothing.
type Env struct {
	vars map[string]string
	node *events.Node
}

// New returns an Env of vars (the task's environment variables) on node;
// node may be nil, and vars is not copied.
func New(vars map[string]string, node *events.Node) *Env {
	return &Env{vars: vars, node: node}
}

// Vars returns the task's environment variables. The map is the Env's
// own: the caller must not change it.
func (e *Env) Vars() map[string]string { return e.vars }

// Replace returns s with every ${...} it knows replaced by its value. An
// unknown variable, or a "${" without its "}", is left as written.
func (e *Env) Replace(s string) string {
	if e == nil || !strings.Contains(s, "${") {
		return s
	}
	var b strings.Builder
	for {
		i := strings.Index(s, "${")
		if i < 0 {
			break
		}
		j := strings.IndexByte(s[i+2:], '}')
		if j < 0 {
			break
		}
		b.WriteString(s[:i])
		name := s[i+2 : i+2+j]
		if v, ok := e.lookup(strings.TrimSpace(name)); ok {
			b.WriteString(v)
		} else {
			b.WriteString(s[i : i+3+j])
		}
		s = s[i+3+j:]
	}
	b.WriteString(s)
	return b.String()
}

// lookup returns the value of the variable name, as written between
// "${" and "}".
func (e *Env) lookup(name string) (string, bool) {
	if key, ok := envIndex(name); ok {
		v, ok := e.vars[key]
		return v, ok
	}
	if n := e.node; n != nil {
		switch name {
		case "node.unique.id":
			return n.ID, true
		case "node.unique.name":
			return n.Name, true
		case "node.datacenter":
			return n.Datacenter, true
		case "node.region":
			return "global", true
		case "node.class":
			return n.NodeClass, true
		case "node.pool":
			if n.NodePool == "" {
				return "default", true
			}
			return n.NodePool, true
		}
		if k, ok := strings.CutPrefix(name, "attr."); ok {
			v, ok := n.Attributes[k]
			return v, ok
		}
		if k, ok := strings.CutPrefix(name, "meta."); ok {
			v, ok := n.Meta[k]
			return v, ok
		}
	}
	v, ok := e.vars[name]
	return v, ok
}

// envIndex returns NAME from env["NAME"] (or env.NAME).
func envIndex(name string) (string, bool) {
	if rest, ok := strings.CutPrefix(name, "env["); ok {
		rest, ok = strings.CutSuffix(rest, "]")
		if !ok || len(rest) < 2 || rest[0] != '"' || rest[len(rest)-1] != '"' {
			return "", false
		}
		return rest[1 : len(rest)-1], true
	}
	return strings.CutPrefix(name, "env.")
}

// ReplaceAll returns ss with each string replaced; nil for nil.
func (e *Env) ReplaceAll(ss []string) []string {
	if ss == nil {
		return nil
	}
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = e.Replace(s)
	}
	return out
}

// ReplaceMap returns m with each value replaced (keys are kept); nil for
// nil.
func (e *Env) ReplaceMap(m map[string]string) map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = e.Replace(v)
	}
	return out
}

// ReplaceConfig returns a copy of a driver config with every string in it
// replaced, at any depth; nil for nil.
func (e *Env) ReplaceConfig(cfg map[string]any) map[string]any {
	if cfg == nil {
		return nil
	}
	out := make(map[string]any, len(cfg))
	for k, v := range cfg {
		out[k] = e.replaceValue(v)
	}
	return out
}

func (e *Env) replaceValue(v any) any {
	switch v := v.(type) {
	case string:
		return e.Replace(v)
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = e.replaceValue(x)
		}
		return out
	case []string:
		return e.ReplaceAll(v)
	case map[string]any:
		return e.ReplaceConfig(v)
	case events.TaskConfig:
		return e.ReplaceConfig(v)
	case map[string]string:
		return e.ReplaceMap(v)
	}
	return v
}
