package events

import "time"

// The change modes of a template: what the client does to the task when a
// rendered template changes.
const (
	TemplateChangeRestart = "restart"
	TemplateChangeSignal  = "signal"
	TemplateChangeNoop    = "noop"
	TemplateChangeScript  = "script"
)

// Template is a task's `template` block, shaped like Nomad's api.Template:
// the client renders EmbeddedTmpl (or the file at SourcePath) into
// DestPath in the task directory before the task starts, and again when
// what it reads changes.
type Template struct {
	SourcePath   string        `msgpack:"src,omitempty" json:"SourcePath"`
	DestPath     string        `msgpack:"dst" json:"DestPath"`
	EmbeddedTmpl string        `msgpack:"data,omitempty" json:"EmbeddedTmpl"`
	ChangeMode   string        `msgpack:"cm,omitempty" json:"ChangeMode"`
	ChangeSignal string        `msgpack:"cs,omitempty" json:"ChangeSignal"`
	ChangeScript *ChangeScript `msgpack:"csc,omitempty" json:"ChangeScript"`
	Splay        time.Duration `msgpack:"splay,omitempty" json:"Splay"`
	// Perms is the rendered file's mode in octal ("0644").
	Perms      string `msgpack:"perms,omitempty" json:"Perms"`
	LeftDelim  string `msgpack:"ld,omitempty" json:"LeftDelim"`
	RightDelim string `msgpack:"rd,omitempty" json:"RightDelim"`
	// Envvars makes the rendered file KEY=value lines added to the task's
	// environment.
	Envvars       bool `msgpack:"env,omitempty" json:"Envvars"`
	ErrMissingKey bool `msgpack:"emk,omitempty" json:"ErrMissingKey"`
}

// ChangeScript is the script a template with change_mode "script" runs in
// the task when it re-renders.
type ChangeScript struct {
	Command     string        `msgpack:"cmd" json:"Command"`
	Args        []string      `msgpack:"args,omitempty" json:"Args"`
	Timeout     time.Duration `msgpack:"to,omitempty" json:"Timeout"`
	FailOnError bool          `msgpack:"foe,omitempty" json:"FailOnError"`
}
