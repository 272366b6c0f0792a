// Package template renders a task's `template` blocks (events.Template)
// into its task directory, as Nomad's client does, with Go's text/template
// and Nomad's functions: env, nomadVar, nomadVarList, nomadVarExists,
// nomadService and nomadServices. It watches what each template read
// (blocking queries on services and variables) and, when a rendered file
// changes, tells its owner which change modes apply (restart, signal,
// script; noop does nothing) after the templates' splay.
//
// # Usage
//
//	m, err := template.New(template.Config{Templates: task.Templates, TaskDir: dir,
//		Namespace: a.Namespace, AllocID: a.ID, Task: task.Name, Env: env.Vars(),
//		Replace: env.Replace, Source: src, OnEvent: record, OnChange: act})
//	go m.Run(ctx)     // the owner joins it
//	<-m.Ready()       // every template rendered once: start the task
//	env := m.Env()    // the variables of env = true templates
//
// A template whose data is not there yet — a variable that does not exist,
// a server that cannot be reached — waits (OnEvent tells "Missing: …" or
// the error), and Ready stays open: the task does not start. A template
// that cannot parse or execute fails (Failed), as Nomad fails the task.
//
// # Concurrency
//
// Run owns one goroutine, and one per watched dependency; it joins them
// before returning. Env, Ready and Failed are safe for concurrent use.
// OnEvent and OnChange are called from Run's goroutine, one at a time.
//
// # Invariants
//
//   - A rendered file is written only when its content changed, through a
//     temporary file renamed into place, so a task never reads half a file.
//   - Destinations and sources stay inside the task directory.
//   - Time (retries, splay) comes from Config.Clock only.
package template
