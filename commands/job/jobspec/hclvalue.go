package jobspec

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"regexp"
	"sort"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"
)

// value evaluates attribute name of c, recording where it is written. It
// returns false when the attribute is absent or null, or on an error.
func (d *decoder) value(c *hcl.BodyContent, path, name string) (*hcl.Attribute, cty.Value, bool) {
	a, ok := c.Attributes[name]
	if !ok || d.failed() {
		return nil, cty.NilVal, false
	}
	field := path + "." + name
	d.record(field, a.Range)
	v, diags := d.eval(a.Expr)
	if d.diag(field, diags) {
		return nil, cty.NilVal, false
	}
	if !v.IsWhollyKnown() {
		d.fail(field, a.Expr.Range(), "value is not known when the jobspec is parsed")
		return nil, cty.NilVal, false
	}
	if v.IsNull() {
		return nil, cty.NilVal, false
	}
	return a, v, true
}

func (d *decoder) convert(field string, a *hcl.Attribute, v cty.Value, want cty.Type, what string) (cty.Value, bool) {
	v, err := convert.Convert(v, want)
	if err != nil {
		d.fail(field, a.Expr.Range(), "want %s: %v", what, err)
		return cty.NilVal, false
	}
	if v.IsNull() {
		return cty.NilVal, false
	}
	return v, true
}

func (d *decoder) str(c *hcl.BodyContent, path, name string) *string {
	a, v, ok := d.value(c, path, name)
	if !ok {
		return nil
	}
	if v, ok = d.convert(path+"."+name, a, v, cty.String, "a string"); !ok {
		return nil
	}
	s := v.AsString()
	return &s
}

func (d *decoder) bool(c *hcl.BodyContent, path, name string) *bool {
	a, v, ok := d.value(c, path, name)
	if !ok {
		return nil
	}
	if v, ok = d.convert(path+"."+name, a, v, cty.Bool, "true or false"); !ok {
		return nil
	}
	b := v.True()
	return &b
}

func (d *decoder) int(c *hcl.BodyContent, path, name string) *int {
	a, v, ok := d.value(c, path, name)
	if !ok {
		return nil
	}
	field := path + "." + name
	if v, ok = d.convert(field, a, v, cty.Number, "a whole number"); !ok {
		return nil
	}
	n, ok := wholeNumber(v.AsBigFloat())
	if !ok {
		d.fail(field, a.Expr.Range(), "want a whole number, not %s", v.AsBigFloat().Text('g', 10))
		return nil
	}
	i := int(n)
	return &i
}

// wholeNumber returns f as an int64 when it is integral and within ±2^53,
// so that it survives JSON and int on any platform alike.
func wholeNumber(f *big.Float) (int64, bool) {
	if !f.IsInt() {
		return 0, false
	}
	n, acc := f.Int64()
	if acc != big.Exact || n > 1<<53 || n < -(1<<53) {
		return 0, false
	}
	return n, true
}

func (d *decoder) duration(c *hcl.BodyContent, path, name string) *time.Duration {
	a, v, ok := d.value(c, path, name)
	if !ok {
		return nil
	}
	field := path + "." + name
	if v, ok = d.convert(field, a, v, cty.String, `a duration such as "30s"`); !ok {
		return nil
	}
	dur, err := time.ParseDuration(v.AsString())
	if err != nil {
		d.fail(field, a.Expr.Range(), `want a duration such as "30s" or "1h30m": %v`, err)
		return nil
	}
	return &dur
}

func (d *decoder) strList(c *hcl.BodyContent, path, name string) []string {
	a, v, ok := d.value(c, path, name)
	if !ok {
		return nil
	}
	field := path + "." + name
	if v, ok = d.convert(field, a, v, cty.List(cty.String), "a list of strings"); !ok {
		return nil
	}
	out := make([]string, 0, v.LengthInt())
	for it := v.ElementIterator(); it.Next(); {
		_, e := it.Element()
		if e.IsNull() {
			d.fail(field, a.Expr.Range(), "holds null")
			return nil
		}
		out = append(out, e.AsString())
	}
	return out
}

// strMap reads a block of name = "value" attributes, such as meta or env.
func (d *decoder) strMap(b *hcl.Block, path string) map[string]string {
	attrs, diags := b.Body.JustAttributes()
	if d.diag(path, diags) {
		return nil
	}
	out := make(map[string]string, len(attrs))
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
		if v, ok := d.convert(field, a, v, cty.String, "a string"); ok {
			out[a.Name] = v.AsString()
		}
		if d.failed() {
			return nil
		}
	}
	return out
}

func sortedAttrs(attrs hcl.Attributes) []*hcl.Attribute {
	out := make([]*hcl.Attribute, 0, len(attrs))
	for _, a := range attrs {
		out = append(out, a)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Range.Start.Byte < out[j].Range.Start.Byte })
	return out
}

// config reads a task's driver configuration, which ordo does not check:
// attributes become JSON-shaped values, and nested blocks lists of objects
// under their type (mount { … } mount { … } is "mount": [{…}, {…}]).
func (d *decoder) config(body hcl.Body, path string) map[string]any {
	return d.freeform(body, path, false)
}

// freeform reads a body ordo does not check into JSON-shaped values; with
// labels, a labelled block `check "cpu" { … }` becomes
// "check": [{"cpu": [{…}]}], as Nomad's scaling policies take them.
func (d *decoder) freeform(body hcl.Body, path string, labels bool) map[string]any {
	sb, ok := body.(*hclsyntax.Body)
	if !ok {
		d.fail(path, body.MissingItemRange(), "config must be written in HCL native syntax")
		return nil
	}
	out := map[string]any{}
	names := make([]string, 0, len(sb.Attributes))
	for name := range sb.Attributes {
		names = append(names, name)
	}
	sort.Slice(names, func(i, j int) bool {
		return sb.Attributes[names[i]].SrcRange.Start.Byte < sb.Attributes[names[j]].SrcRange.Start.Byte
	})
	for _, name := range names {
		a := sb.Attributes[name]
		field := path + "." + name
		d.record(field, a.SrcRange)
		v, diags := d.eval(a.Expr)
		if d.diag(field, diags) {
			return nil
		}
		x, err := goValue(v)
		if err != nil {
			d.fail(field, a.Expr.Range(), "%v", err)
			return nil
		}
		out[name] = x
	}
	for _, blk := range sb.Blocks {
		field := path + "." + blk.Type
		switch {
		case len(blk.Labels) > 0 && !labels:
			d.fail(field, blk.LabelRanges[0], "config blocks take no labels")
			return nil
		case sb.Attributes[blk.Type] != nil:
			d.fail(field, blk.TypeRange, "%s is both an attribute and a block", blk.Type)
			return nil
		}
		d.record(field, blk.TypeRange)
		var m any = d.freeform(blk.Body, field, labels)
		if d.failed() {
			return nil
		}
		for i := len(blk.Labels) - 1; i >= 0; i-- {
			m = map[string]any{blk.Labels[i]: []any{m}}
		}
		list, _ := out[blk.Type].([]any)
		out[blk.Type] = append(list, m)
	}
	return out
}

// goValue converts a known value to the JSON-shaped form of events.TaskConfig.
func goValue(v cty.Value) (any, error) {
	if v.IsNull() {
		return nil, nil
	}
	if !v.IsWhollyKnown() {
		return nil, errors.New("value is not known when the jobspec is parsed")
	}
	t := v.Type()
	switch {
	case t == cty.String:
		return v.AsString(), nil
	case t == cty.Bool:
		return v.True(), nil
	case t == cty.Number:
		f := v.AsBigFloat()
		if n, acc := f.Int64(); f.IsInt() && acc == big.Exact {
			return n, nil
		}
		x, _ := f.Float64()
		if math.IsInf(x, 0) {
			return nil, fmt.Errorf("number %s is out of range", f.Text('g', 10))
		}
		return x, nil
	case t.IsListType() || t.IsTupleType() || t.IsSetType():
		out := make([]any, 0, v.LengthInt())
		for it := v.ElementIterator(); it.Next(); {
			_, e := it.Element()
			x, err := goValue(e)
			if err != nil {
				return nil, err
			}
			out = append(out, x)
		}
		return out, nil
	case t.IsMapType() || t.IsObjectType():
		out := make(map[string]any, v.LengthInt())
		for it := v.ElementIterator(); it.Next(); {
			k, e := it.Element()
			x, err := goValue(e)
			if err != nil {
				return nil, err
			}
			out[k.AsString()] = x
		}
		return out, nil
	}
	return nil, fmt.Errorf("unsupported value of type %s", t.FriendlyName())
}

// runtimeRoot reports whether a variable is interpolated at run time by the
// scheduler or the client, so the parser keeps ${…} as text: attr, node,
// meta, env, unique, device, and environment variables (NOMAD_*, or any
// name starting with a capital letter or underscore).
func runtimeRoot(root string) bool {
	switch root {
	case "attr", "node", "meta", "env", "unique", "device":
		return true
	}
	return envName.MatchString(root)
}

// envName is an environment variable's name as tasks see them, such as
// NOMAD_ALLOC_DIR or NOMAD_META_owner.
var envName = regexp.MustCompile(`^[A-Z_][A-Za-z0-9_]*$`)

// eval evaluates expr with no functions, binding each runtime variable it
// references to its own text, so "${attr.kernel.name}" stays as written.
func (d *decoder) eval(expr hcl.Expression) (cty.Value, hcl.Diagnostics) {
	vars := expr.Variables()
	if len(vars) == 0 {
		return expr.Value(nil)
	}
	tree := map[string]any{}
	for _, t := range vars {
		root := t.RootName()
		r := t.SourceRange()
		if !runtimeRoot(root) {
			return cty.DynamicVal, hcl.Diagnostics{{
				Severity: hcl.DiagError,
				Summary:  "Unknown variable",
				Detail: fmt.Sprintf("%q is not interpolated at run time (attr, node, meta, env, unique, NOMAD_*); "+
					"jobspec variables, locals and functions are not supported", root),
				Subject: r.Ptr(),
			}}
		}
		keys := []string{root}
		for _, step := range t[1:] {
			switch s := step.(type) {
			case hcl.TraverseAttr:
				keys = append(keys, s.Name)
			case hcl.TraverseIndex:
				k, err := convert.Convert(s.Key, cty.String)
				if err != nil || k.IsNull() || !k.IsKnown() {
					return cty.DynamicVal, hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Invalid index",
						Detail: "runtime variables take string keys", Subject: r.Ptr()}}
				}
				keys = append(keys, k.AsString())
			default:
				return cty.DynamicVal, hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Invalid reference",
					Detail: "unsupported traversal of a runtime variable", Subject: r.Ptr()}}
			}
		}
		insert(tree, keys, "${"+d.text(r)+"}")
	}
	ctx := &hcl.EvalContext{Variables: map[string]cty.Value{}}
	for k, v := range tree {
		ctx.Variables[k] = ctyTree(v)
	}
	return expr.Value(ctx)
}

// insert puts text at keys in the tree of nested maps; a deeper reference
// wins over a shorter one that is its prefix.
func insert(m map[string]any, keys []string, text string) {
	k := keys[0]
	if len(keys) == 1 {
		if _, deeper := m[k].(map[string]any); !deeper {
			m[k] = text
		}
		return
	}
	child, ok := m[k].(map[string]any)
	if !ok {
		child = map[string]any{}
		m[k] = child
	}
	insert(child, keys[1:], text)
}

func ctyTree(v any) cty.Value {
	if s, ok := v.(string); ok {
		return cty.StringVal(s)
	}
	m := v.(map[string]any)
	attrs := make(map[string]cty.Value, len(m))
	for k, e := range m {
		attrs[k] = ctyTree(e)
	}
	return cty.ObjectVal(attrs)
}
