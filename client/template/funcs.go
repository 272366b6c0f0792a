package template

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"maps"
	"slices"
	"sort"
	"strings"
	gotemplate "text/template"

	"github.com/Masterminds/sprig/v3"
)

// funcs are the functions templates call: Nomad's (env, nomadVar,
// nomadVarList, nomadVarExists, nomadService, nomadServices), a few of
// consul-template's string helpers, built on the standard library, and
// the sprig library's functions prefixed sprig_ (as consul-template
// names them) — but for sprig_env and sprig_expandenv, which would read
// the client agent's environment rather than the task's.
func (m *Manager) funcs() gotemplate.FuncMap {
	fm := m.ownFuncs()
	for name, f := range sprig.TxtFuncMap() {
		if name != "env" && name != "expandenv" {
			fm["sprig_"+name] = f
		}
	}
	return fm
}

func (m *Manager) ownFuncs() gotemplate.FuncMap {
	return gotemplate.FuncMap{
		"env":            func(name string) string { return m.cfg.Env[name] },
		"nomadVar":       m.nomadVar,
		"nomadVarExists": m.nomadVarExists,
		"nomadVarList":   m.nomadVarList,
		"nomadService":   m.nomadService,
		"nomadServices":  m.nomadServices,

		"toLower":    strings.ToLower,
		"toUpper":    strings.ToUpper,
		"trimSpace":  strings.TrimSpace,
		"split":      func(sep, s string) []string { return strings.Split(s, sep) },
		"join":       func(sep string, ss []string) string { return strings.Join(ss, sep) },
		"replaceAll": func(old, new, s string) string { return strings.ReplaceAll(s, old, new) },
		"contains":   contains,
		"containsAny": func(needles, hay []string) bool {
			return slices.ContainsFunc(needles, func(n string) bool { return slices.Contains(hay, n) })
		},
		"toJSON":       toJSON,
		"parseJSON":    parseJSON,
		"base64Encode": func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) },
		"base64Decode": func(s string) (string, error) {
			b, err := base64.StdEncoding.DecodeString(s)
			return string(b), err
		},
	}
}

// splitNS reads "path@namespace"; the task's namespace when none is named.
func (m *Manager) splitNS(s string) (string, string) {
	if i := strings.LastIndexByte(s, '@'); i >= 0 {
		return s[:i], strings.TrimSuffix(s[i+1:], ".global")
	}
	return s, m.cfg.Namespace
}

func (m *Manager) variable(s string, block bool) (*Variable, bool) {
	path, ns := m.splitNS(s)
	data, ok := m.get(depVar, ns, path)
	if !ok {
		return nil, false
	}
	v, _ := data.(*Variable)
	if v == nil && block {
		m.cur.missing = append(m.cur.missing, fmt.Sprintf("nomad.var.block(%s@%s.global)", path, ns))
		return nil, false
	}
	return v, true
}

// nomadVar returns the items of the variable at path ("path@namespace"):
// {{ with nomadVar "nomad/jobs/web" }}{{ .password }}{{ end }}. A
// variable that does not exist makes the template wait for it.
func (m *Manager) nomadVar(path string) map[string]string {
	v, ok := m.variable(path, true)
	if !ok || v == nil {
		return map[string]string{}
	}
	return maps.Clone(v.Items)
}

// nomadVarExists reports whether the variable at path exists.
func (m *Manager) nomadVarExists(path string) bool {
	v, _ := m.variable(path, false)
	return v != nil
}

// nomadVarList lists the variables under prefix (all with none).
func (m *Manager) nomadVarList(prefix ...string) ([]VariableMeta, error) {
	if len(prefix) > 1 {
		return nil, fmt.Errorf("nomadVarList takes at most one prefix, got %d", len(prefix))
	}
	p := ""
	if len(prefix) == 1 {
		p = prefix[0]
	}
	p, ns := m.splitNS(p)
	data, ok := m.get(depVarList, ns, p)
	if !ok {
		return nil, nil
	}
	return slices.Clone(data.([]VariableMeta)), nil
}

// nomadService returns the instances of a service: nomadService "name"
// or "tag.name" (only instances with that tag), or nomadService count
// key "name": count instances chosen by rendezvous hashing on key, so
// each key keeps its choice while the instances stay.
func (m *Manager) nomadService(args ...any) ([]Service, error) {
	var (
		count int
		key   string
		q     string
	)
	switch len(args) {
	case 1:
		q, _ = args[0].(string)
	case 3:
		c, ok := args[0].(int)
		if !ok {
			return nil, fmt.Errorf("nomadService: count %v is not an integer", args[0])
		}
		count = c
		key = fmt.Sprint(args[1])
		q, _ = args[2].(string)
	default:
		return nil, fmt.Errorf("nomadService takes a name, or a count, a key and a name; got %d arguments", len(args))
	}
	if q == "" {
		return nil, fmt.Errorf("nomadService: the service name must be a non-empty string")
	}
	q, ns := m.splitNS(q)
	tag := ""
	if i := strings.IndexByte(q, '.'); i >= 0 {
		tag, q = q[:i], q[i+1:]
	}
	data, ok := m.get(depService, ns, q)
	if !ok {
		return nil, nil
	}
	var out []Service
	for _, s := range data.([]Service) {
		if tag == "" || slices.Contains(s.Tags, tag) {
			s.Tags = slices.Clone(s.Tags)
			out = append(out, s)
		}
	}
	if count > 0 && count < len(out) {
		score := func(s Service) uint64 {
			h := fnv.New64a()
			h.Write([]byte(key + "\x00" + s.ID))
			return h.Sum64()
		}
		sort.SliceStable(out, func(i, j int) bool { return score(out[i]) > score(out[j]) })
		out = out[:count]
	}
	return out, nil
}

// nomadServices lists the services of the task's namespace (or
// "@namespace"): each with .Name and .Tags.
func (m *Manager) nomadServices(ns ...string) []ServiceStub {
	n := m.cfg.Namespace
	if len(ns) > 0 {
		_, n = m.splitNS(ns[0])
	}
	data, ok := m.get(depServices, n, "")
	if !ok {
		return nil
	}
	return slices.Clone(data.([]ServiceStub))
}

// contains reports whether hay (a list or a string) holds needle, as
// consul-template's: {{ if .Tags | contains "prod" }}.
func contains(needle string, hay any) (bool, error) {
	switch h := hay.(type) {
	case []string:
		return slices.Contains(h, needle), nil
	case string:
		return strings.Contains(h, needle), nil
	case []any:
		return slices.ContainsFunc(h, func(v any) bool { return fmt.Sprint(v) == needle }), nil
	}
	return false, fmt.Errorf("contains: cannot search a %T", hay)
}

func toJSON(v any) (string, error) {
	b, err := json.Marshal(v)
	return string(b), err
}

func parseJSON(s string) (any, error) {
	var v any
	if s == "" {
		return map[string]any{}, nil
	}
	err := json.Unmarshal([]byte(s), &v)
	return v, err
}
