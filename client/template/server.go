package template

import (
	"context"
	"time"

	"github.com/ordoplane/ordo/client/serverapi"
	"github.com/ordoplane/ordo/events"
)

// ServerSource is the Source of a client agent: the servers' API through
// client/serverapi, identities fetched as the node NodeID.
type ServerSource struct {
	API    *serverapi.Client
	NodeID string
}

var _ Source = (*ServerSource)(nil)

// Variable implements Source.
func (s *ServerSource) Variable(ctx context.Context, q Query, path string, index uint64, wait time.Duration) (*Variable, uint64, error) {
	v, next, err := s.API.Variable(ctx, q.Namespace, path, q.Token, index, wait)
	if err != nil || v == nil {
		return nil, next, err
	}
	return &Variable{Namespace: v.Namespace, Path: v.Path, ModifyIndex: v.ModifyIndex, Items: v.Items}, next, nil
}

// Variables implements Source.
func (s *ServerSource) Variables(ctx context.Context, q Query, prefix string, index uint64, wait time.Duration) ([]VariableMeta, uint64, error) {
	list, next, err := s.API.Variables(ctx, q.Namespace, prefix, q.Token, index, wait)
	if err != nil {
		return nil, 0, err
	}
	out := make([]VariableMeta, len(list))
	for i, v := range list {
		out[i] = VariableMeta{Namespace: v.Namespace, Path: v.Path, CreateIndex: v.CreateIndex, ModifyIndex: v.ModifyIndex,
			CreateTime: v.CreateTime, ModifyTime: v.ModifyTime}
	}
	return out, next, nil
}

// Service implements Source.
func (s *ServerSource) Service(ctx context.Context, q Query, name string, index uint64, wait time.Duration) ([]events.ServiceRegistration, uint64, error) {
	return s.API.Service(ctx, q.Namespace, name, index, wait)
}

// Services implements Source.
func (s *ServerSource) Services(ctx context.Context, q Query, index uint64, wait time.Duration) ([]ServiceStub, uint64, error) {
	list, next, err := s.API.Services(ctx, q.Namespace, q.Token, index, wait)
	if err != nil {
		return nil, 0, err
	}
	out := make([]ServiceStub, len(list))
	for i, st := range list {
		out[i] = ServiceStub{Name: st.ServiceName, Tags: st.Tags}
	}
	return out, next, nil
}

// Identity implements Source.
func (s *ServerSource) Identity(ctx context.Context, allocID, task string) (string, error) {
	return s.API.AllocIdentity(ctx, s.NodeID, allocID, task)
}
