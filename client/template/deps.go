package template

import (
	"context"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"time"

	"github.com/ordoplane/ordo/clock"
)

// depKind is what a dependency reads.
type depKind uint8

const (
	depVar depKind = iota + 1
	depVarList
	depService
	depServices
)

// dep is one thing templates read, kept fresh by a watcher.
type dep struct {
	kind depKind
	ns   string
	arg  string // path, prefix or service name
	// has is set once a read answered; data is its answer (a *Variable,
	// nil when absent; []VariableMeta; []Service; []ServiceStub), err the
	// last read's error.
	has  bool
	data any
	err  error
}

func (d *dep) label() string {
	switch d.kind {
	case depVar:
		return fmt.Sprintf("nomad.var.block(%s@%s.global)", d.arg, d.ns)
	case depVarList:
		return fmt.Sprintf("nomad.var.list(%s@%s.global)", d.arg, d.ns)
	case depService:
		return fmt.Sprintf("nomad.service(%s@%s.global)", d.arg, d.ns)
	}
	return fmt.Sprintf("nomad.services(@%s.global)", d.ns)
}

// pass is one execution of a template: the reasons it must wait.
type pass struct {
	ctx context.Context
	// missing is nil while everything read was there.
	missing []string
}

// get returns what a dependency last read, starting its watcher on first
// use; ok is false (and the pass waits) when it has not answered yet.
func (m *Manager) get(kind depKind, ns, arg string) (data any, ok bool) {
	key := fmt.Sprintf("%d\x00%s\x00%s", kind, ns, arg)
	m.mu.Lock()
	d := m.mu.deps[key]
	if d == nil {
		d = &dep{kind: kind, ns: ns, arg: arg}
		m.mu.deps[key] = d
		if m.cfg.Source == nil {
			d.err = ErrNoSource
		} else {
			ctx := m.cur.ctx
			m.wg.Go(func() { m.watch(ctx, d) })
		}
	}
	has, data, err := d.has, d.data, d.err
	m.mu.Unlock()
	if !has {
		reason := ""
		if err != nil {
			reason = fmt.Sprintf("%s: %v", d.label(), err)
		}
		m.cur.missing = append(m.cur.missing, reason)
		return nil, false
	}
	return data, true
}

// watch keeps d fresh with blocking queries until ctx ends, backing off
// after failed reads.
func (m *Manager) watch(ctx context.Context, d *dep) {
	var (
		index    uint64
		failures int
	)
	for ctx.Err() == nil {
		data, next, err := m.fetch(ctx, d, index)
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			failures++
			m.mu.Lock()
			d.err = err
			m.mu.tokenOK = false // a refused read fetches the identity again
			has := d.has
			m.mu.Unlock()
			if !has {
				m.notify() // the wait's reason changed
			}
			m.cfg.Logger.Warn("template read failed", "read", d.label(), "err", err, "failures", failures)
			if !m.sleep(ctx, m.backoff(failures)) {
				return
			}
			continue
		}
		failures = 0
		m.mu.Lock()
		changed := !d.has || !sameData(d.data, data)
		d.has, d.data, d.err = true, data, nil
		m.mu.Unlock()
		if changed {
			m.notify()
		}
		if next == 0 || next < index {
			// Nothing to block on: read again after a pause.
			if !m.sleep(ctx, m.cfg.RetryMin) {
				return
			}
			next = 0
		}
		index = next
	}
}

// fetch reads d once, blocking past index.
func (m *Manager) fetch(ctx context.Context, d *dep, index uint64) (any, uint64, error) {
	src := m.cfg.Source
	q := Query{Namespace: d.ns, Token: m.token(ctx)}
	wait := m.cfg.Wait
	switch d.kind {
	case depVar:
		m.mu.Lock()
		absent := d.has && d.data == (*Variable)(nil)
		m.mu.Unlock()
		if absent {
			// Block on the list of its path until it appears.
			metas, next, err := src.Variables(ctx, q, d.arg, index, wait)
			if err != nil {
				return nil, 0, err
			}
			if !slices.ContainsFunc(metas, func(v VariableMeta) bool { return v.Path == d.arg }) {
				return (*Variable)(nil), next, nil
			}
			index = 0
		}
		v, next, err := src.Variable(ctx, q, d.arg, index, wait)
		if err != nil {
			return nil, 0, err
		}
		if v != nil {
			return v, next, nil
		}
		// Absent: the next read blocks on the list of its path, from the
		// list's index now (it names the path if it appeared meanwhile).
		metas, next, err := src.Variables(ctx, q, d.arg, 0, wait)
		if err != nil {
			return nil, 0, err
		}
		if slices.ContainsFunc(metas, func(v VariableMeta) bool { return v.Path == d.arg }) {
			return m.fetch(ctx, d, 0)
		}
		return (*Variable)(nil), next, nil
	case depVarList:
		return wrap(src.Variables(ctx, q, d.arg, index, wait))
	case depService:
		regs, next, err := src.Service(ctx, q, d.arg, index, wait)
		if err != nil {
			return nil, 0, err
		}
		out := make([]Service, len(regs))
		for i, r := range regs {
			out[i] = serviceOf(r)
		}
		return out, next, nil
	default:
		return wrap(src.Services(ctx, q, index, wait))
	}
}

func wrap[T any](v T, next uint64, err error) (any, uint64, error) {
	if err != nil {
		return nil, 0, err
	}
	return v, next, nil
}

// sameData compares two answers; variables by their items.
func sameData(a, b any) bool {
	va, oka := a.(*Variable)
	vb, okb := b.(*Variable)
	if oka && okb {
		if va == nil || vb == nil {
			return va == vb
		}
		return maps.Equal(va.Items, vb.Items)
	}
	return reflect.DeepEqual(a, b)
}

// token returns the workload identity variable reads present; "" when
// it cannot be had (the reads then go without, as with ACLs off).
func (m *Manager) token(ctx context.Context) string {
	m.mu.Lock()
	if m.mu.tokenOK {
		t := m.mu.token
		m.mu.Unlock()
		return t
	}
	m.mu.Unlock()
	tok, err := m.cfg.Source.Identity(ctx, m.cfg.AllocID, m.cfg.Task)
	if err != nil {
		m.cfg.Logger.Debug("no workload identity for templates", "err", err)
		tok = ""
	}
	m.mu.Lock()
	m.mu.token, m.mu.tokenOK = tok, true
	m.mu.Unlock()
	return tok
}

func (m *Manager) backoff(n int) time.Duration {
	return clock.Backoff(n, m.cfg.RetryMin, m.cfg.RetryMax)
}

func (m *Manager) sleep(ctx context.Context, d time.Duration) bool {
	return clock.Sleep(ctx, m.cfg.Clock, d)
}
