package jobspec

import (
	"fmt"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/hcl/v2"

	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/events"
)

// Templates: a task's `template { data | source, destination, change_mode,
// change_signal, change_script { … }, splay, perms, left_delimiter,
// right_delimiter, env, error_on_missing_key }` blocks, in HCL and
// Nomad's JSON (Task.Templates). The client renders them; the parser
// keeps their text as written (${…} included).

type specTemplate struct {
	SourcePath    *string           `json:"SourcePath"`
	DestPath      *string           `json:"DestPath"`
	EmbeddedTmpl  *string           `json:"EmbeddedTmpl"`
	ChangeMode    *string           `json:"ChangeMode"`
	ChangeSignal  *string           `json:"ChangeSignal"`
	ChangeScript  *specChangeScript `json:"ChangeScript"`
	Splay         *time.Duration    `json:"Splay"`
	Perms         *string           `json:"Perms"`
	LeftDelim     *string           `json:"LeftDelim"`
	RightDelim    *string           `json:"RightDelim"`
	Envvars       *bool             `json:"Envvars"`
	ErrMissingKey *bool             `json:"ErrMissingKey"`
}

type specChangeScript struct {
	Command     *string        `json:"Command"`
	Args        []string       `json:"Args"`
	Timeout     *time.Duration `json:"Timeout"`
	FailOnError *bool          `json:"FailOnError"`
}

// The template defaults, as Nomad's.
const (
	DefaultTemplateSplay       = 5 * time.Second
	DefaultTemplatePerms       = "0644"
	DefaultLeftDelim           = "{{"
	DefaultRightDelim          = "}}"
	DefaultChangeScriptTimeout = 5 * time.Second
)

var templateSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: "data"}, {Name: "source"}, {Name: "destination"}, {Name: "change_mode"}, {Name: "change_signal"},
		{Name: "splay"}, {Name: "perms"}, {Name: "left_delimiter"}, {Name: "right_delimiter"}, {Name: "env"},
		{Name: "error_on_missing_key"},
	},
	Blocks: []hcl.BlockHeaderSchema{{Type: "change_script"}},
}

var changeScriptSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{{Name: "command"}, {Name: "args"}, {Name: "timeout"}, {Name: "fail_on_error"}},
}

func templatePath(task string, i int) string { return fmt.Sprintf("%s.template[%d]", task, i) }

// templates reads a task's template blocks.
func (d *decoder) templates(c *hcl.BodyContent, task string) []*specTemplate {
	var out []*specTemplate
	for i, b := range c.Blocks.OfType("template") {
		p := templatePath(task, i)
		d.record(p, b.DefRange)
		tc := d.content(b.Body, p, templateSchema)
		if tc == nil {
			return out
		}
		t := &specTemplate{
			EmbeddedTmpl: d.str(tc, p, "data"), SourcePath: d.str(tc, p, "source"), DestPath: d.str(tc, p, "destination"),
			ChangeMode: d.str(tc, p, "change_mode"), ChangeSignal: d.str(tc, p, "change_signal"),
			Splay: d.duration(tc, p, "splay"), Perms: d.str(tc, p, "perms"),
			LeftDelim: d.str(tc, p, "left_delimiter"), RightDelim: d.str(tc, p, "right_delimiter"),
			Envvars: d.bool(tc, p, "env"), ErrMissingKey: d.bool(tc, p, "error_on_missing_key"),
		}
		if sb := d.single(tc, p, "change_script"); sb != nil {
			sp := p + ".change_script"
			if sc := d.content(sb.Body, sp, changeScriptSchema); sc != nil {
				t.ChangeScript = &specChangeScript{Command: d.str(sc, sp, "command"), Args: d.strList(sc, sp, "args"),
					Timeout: d.duration(sc, sp, "timeout"), FailOnError: d.bool(sc, sp, "fail_on_error")}
			}
		}
		out = append(out, t)
	}
	return out
}

// canonicalTemplates fills in a task's template defaults: change_mode
// restart, splay 5s, perms 0644 (written with four octal digits),
// delimiters {{ and }}, a change script's timeout 5s; a change signal is
// written as its SIG… name.
func canonicalTemplates(in []*specTemplate) []events.Template {
	var out []events.Template
	for _, t := range in {
		if t == nil {
			t = &specTemplate{}
		}
		tm := events.Template{
			SourcePath: or(t.SourcePath, ""), DestPath: or(t.DestPath, ""), EmbeddedTmpl: or(t.EmbeddedTmpl, ""),
			ChangeMode: or(t.ChangeMode, events.TemplateChangeRestart), ChangeSignal: or(t.ChangeSignal, ""),
			Splay: or(t.Splay, DefaultTemplateSplay), Perms: or(t.Perms, DefaultTemplatePerms),
			LeftDelim: or(t.LeftDelim, DefaultLeftDelim), RightDelim: or(t.RightDelim, DefaultRightDelim),
			Envvars: or(t.Envvars, false), ErrMissingKey: or(t.ErrMissingKey, false),
		}
		if tm.ChangeMode == "" {
			tm.ChangeMode = events.TemplateChangeRestart
		}
		if tm.Perms == "" {
			tm.Perms = DefaultTemplatePerms
		}
		if n, err := strconv.ParseUint(tm.Perms, 8, 12); err == nil {
			tm.Perms = fmt.Sprintf("%04o", n)
		}
		if tm.LeftDelim == "" {
			tm.LeftDelim = DefaultLeftDelim
		}
		if tm.RightDelim == "" {
			tm.RightDelim = DefaultRightDelim
		}
		if tm.ChangeSignal != "" {
			if sig, _, ok := events.KillSignal(tm.ChangeSignal); ok {
				tm.ChangeSignal = sig
			}
		}
		if s := t.ChangeScript; s != nil {
			tm.ChangeScript = &events.ChangeScript{Command: or(s.Command, ""), Args: emptyNilSlice(s.Args),
				Timeout: or(s.Timeout, DefaultChangeScriptTimeout), FailOnError: or(s.FailOnError, false)}
		}
		out = append(out, tm)
	}
	return out
}

// validateTemplates checks a task's templates.
func validateTemplates(tp string, ts []events.Template) error {
	dests := map[string]int{}
	for i := range ts {
		t := &ts[i]
		p := templatePath(tp, i)
		switch {
		case t.EmbeddedTmpl == "" && t.SourcePath == "":
			return commands.Invalid(p+".data", "a template needs data or a source")
		case t.EmbeddedTmpl != "" && t.SourcePath != "":
			return commands.Invalid(p+".source", "set data or source, not both")
		case t.DestPath == "":
			return commands.Invalid(p+".destination", "a template needs a destination")
		}
		if err := validDestination(t.DestPath); err != nil {
			return commands.Invalid(p+".destination", "%q %v", t.DestPath, err)
		}
		if j, ok := dests[path.Clean(t.DestPath)]; ok {
			return commands.Invalid(p+".destination", "%q is also the destination of template[%d]", t.DestPath, j)
		}
		dests[path.Clean(t.DestPath)] = i
		switch t.ChangeMode {
		case "", events.TemplateChangeRestart, events.TemplateChangeNoop:
		case events.TemplateChangeSignal:
			if t.ChangeSignal == "" {
				return commands.Invalid(p+".change_signal", "change_mode \"signal\" needs a change_signal such as \"SIGHUP\"")
			}
		case events.TemplateChangeScript:
			if t.ChangeScript == nil || t.ChangeScript.Command == "" {
				return commands.Invalid(p+".change_script.command", "change_mode \"script\" needs a change_script with a command")
			}
		default:
			return commands.Invalid(p+".change_mode", "%q is not one of restart, signal, noop, script", t.ChangeMode)
		}
		switch {
		case t.ChangeSignal != "" && t.ChangeMode != events.TemplateChangeSignal:
			return commands.Invalid(p+".change_signal", "is only used with change_mode \"signal\", not %q", t.ChangeMode)
		case t.ChangeSignal != "" && !validKillSignal(t.ChangeSignal):
			return commands.Invalid(p+".change_signal", "%q is not SIGHUP, SIGINT, SIGQUIT, SIGKILL, SIGUSR1, SIGUSR2 or SIGTERM", t.ChangeSignal)
		case t.ChangeScript != nil && t.ChangeScript.Timeout < 0:
			return commands.Invalid(p+".change_script.timeout", "%v is negative", t.ChangeScript.Timeout)
		case t.Splay < 0:
			return commands.Invalid(p+".splay", "%v is negative", t.Splay)
		}
		if _, err := strconv.ParseUint(t.Perms, 8, 12); err != nil && t.Perms != "" {
			return commands.Invalid(p+".perms", "%q is not a file mode in octal such as \"0644\"", t.Perms)
		}
	}
	return nil
}

// validDestination refuses a destination outside the task directory: an
// absolute path or one with a ".." segment. A destination may start with
// a directory variable (${NOMAD_TASK_DIR}, ${NOMAD_SECRETS_DIR},
// ${NOMAD_ALLOC_DIR}), which the client interpolates.
func validDestination(dest string) error {
	rest := dest
	for _, v := range []string{"${NOMAD_TASK_DIR}", "${NOMAD_SECRETS_DIR}", "${NOMAD_ALLOC_DIR}"} {
		if strings.HasPrefix(dest, v) {
			rest = strings.TrimPrefix(dest[len(v):], "/")
			if rest == "" {
				return fmt.Errorf("names a directory, not a file in it")
			}
			break
		}
	}
	switch {
	case strings.HasPrefix(rest, "/"):
		return fmt.Errorf("is absolute; write it relative to the task directory, such as local/app.conf or secrets/app.env")
	case strings.ContainsRune(rest, 0):
		return fmt.Errorf("holds a null character")
	}
	for _, seg := range strings.Split(rest, "/") {
		if seg == ".." {
			return fmt.Errorf("leaves the task directory (\"..\")")
		}
	}
	switch path.Clean(rest) {
	case ".", "local", "secrets", "alloc", "tmp", "private":
		return fmt.Errorf("names a directory of the task, not a file in it")
	}
	if strings.HasSuffix(rest, "/") {
		return fmt.Errorf("names a directory, not a file in it")
	}
	return nil
}
