// Package templatetest is an in-memory template.Source for tests: its
// variables and services change when the test says, and its blocking
// reads wake when they do.
package templatetest

import (
	"context"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/ordoplane/ordo/client/template"
	"github.com/ordoplane/ordo/events"
)

// Source is an in-memory template.Source. The zero value is not usable:
// build it with New.
type Source struct {
	mu      sync.Mutex
	index   uint64
	wake    chan struct{}
	vars    map[string]map[string]string // ns/path → items
	svcs    map[string][]events.ServiceRegistration
	fail    error
	reads   int
	tokens  []string
	Token   string
	IDError error
}

var _ template.Source = (*Source)(nil)

// New returns an empty Source at index 1.
func New() *Source {
	return &Source{index: 1, wake: make(chan struct{}), vars: map[string]map[string]string{},
		svcs: map[string][]events.ServiceRegistration{}}
}

func (s *Source) bumpLocked() {
	s.index++
	close(s.wake)
	s.wake = make(chan struct{})
}

// PutVar sets the variable at ns/path.
func (s *Source) PutVar(ns, path string, items map[string]string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.vars[ns+"/"+path] = maps.Clone(items)
	s.bumpLocked()
}

// DeleteVar deletes the variable at ns/path.
func (s *Source) DeleteVar(ns, path string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.vars, ns+"/"+path)
	s.bumpLocked()
}

// SetService sets the registrations of service name in ns.
func (s *Source) SetService(ns, name string, regs ...events.ServiceRegistration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.svcs[ns+"/"+name] = regs
	s.bumpLocked()
}

// Fail makes every read fail with err (nil: succeed again).
func (s *Source) Fail(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fail = err
	s.bumpLocked()
}

// Tokens returns the tokens the reads presented.
func (s *Source) Tokens() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.tokens)
}

// block waits until the index passes index (when > 0) or ctx ends.
func (s *Source) block(ctx context.Context, q template.Query, index uint64) error {
	s.mu.Lock()
	s.reads++
	s.tokens = append(s.tokens, q.Token)
	for index > 0 && s.index <= index {
		w := s.wake
		s.mu.Unlock()
		select {
		case <-w:
		case <-ctx.Done():
			s.mu.Lock()
			return ctx.Err()
		}
		s.mu.Lock()
	}
	return s.fail
}

// Variable implements template.Source.
func (s *Source) Variable(ctx context.Context, q template.Query, path string, index uint64, _ time.Duration) (*template.Variable, uint64, error) {
	err := s.block(ctx, q, index)
	defer s.mu.Unlock()
	if err != nil {
		return nil, 0, err
	}
	items, ok := s.vars[q.Namespace+"/"+path]
	if !ok {
		return nil, 0, nil
	}
	return &template.Variable{Namespace: q.Namespace, Path: path, ModifyIndex: s.index, Items: maps.Clone(items)}, s.index, nil
}

// Variables implements template.Source.
func (s *Source) Variables(ctx context.Context, q template.Query, prefix string, index uint64, _ time.Duration) ([]template.VariableMeta, uint64, error) {
	err := s.block(ctx, q, index)
	defer s.mu.Unlock()
	if err != nil {
		return nil, 0, err
	}
	var out []template.VariableMeta
	for k := range s.vars {
		ns, path, _ := strings.Cut(k, "/")
		if ns == q.Namespace && strings.HasPrefix(path, prefix) {
			out = append(out, template.VariableMeta{Namespace: ns, Path: path})
		}
	}
	slices.SortFunc(out, func(a, b template.VariableMeta) int { return strings.Compare(a.Path, b.Path) })
	return out, s.index, nil
}

// Service implements template.Source.
func (s *Source) Service(ctx context.Context, q template.Query, name string, index uint64, _ time.Duration) ([]events.ServiceRegistration, uint64, error) {
	err := s.block(ctx, q, index)
	defer s.mu.Unlock()
	if err != nil {
		return nil, 0, err
	}
	return slices.Clone(s.svcs[q.Namespace+"/"+name]), s.index, nil
}

// Services implements template.Source.
func (s *Source) Services(ctx context.Context, q template.Query, index uint64, _ time.Duration) ([]template.ServiceStub, uint64, error) {
	err := s.block(ctx, q, index)
	defer s.mu.Unlock()
	if err != nil {
		return nil, 0, err
	}
	var out []template.ServiceStub
	for k, regs := range s.svcs {
		ns, name, _ := strings.Cut(k, "/")
		if ns != q.Namespace || len(regs) == 0 {
			continue
		}
		st := template.ServiceStub{Name: name}
		for _, r := range regs {
			for _, t := range r.Tags {
				if !slices.Contains(st.Tags, t) {
					st.Tags = append(st.Tags, t)
				}
			}
		}
		out = append(out, st)
	}
	slices.SortFunc(out, func(a, b template.ServiceStub) int { return strings.Compare(a.Name, b.Name) })
	return out, s.index, nil
}

// Identity implements template.Source: Token, or IDError.
func (s *Source) Identity(context.Context, string, string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.Token, s.IDError
}
