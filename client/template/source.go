package template

import (
	"context"
	"time"

	"github.com/ordoplane/ordo/events"
)

// Source reads what templates read from the servers. With index > 0 a
// read is a blocking query: it answers once the data moved past index, or
// after wait. The index it returns is the one to pass next.
type Source interface {
	// Variable returns the variable at path in q's namespace; nil (and
	// no error) when there is none.
	Variable(ctx context.Context, q Query, path string, index uint64, wait time.Duration) (*Variable, uint64, error)
	// Variables lists the metadata of the variables whose path starts
	// with prefix.
	Variables(ctx context.Context, q Query, prefix string, index uint64, wait time.Duration) ([]VariableMeta, uint64, error)
	// Service returns the registrations of service name.
	Service(ctx context.Context, q Query, name string, index uint64, wait time.Duration) ([]events.ServiceRegistration, uint64, error)
	// Services lists the services of q's namespace.
	Services(ctx context.Context, q Query, index uint64, wait time.Duration) ([]ServiceStub, uint64, error)
	// Identity returns the workload identity (a JWT) of task in
	// allocation allocID, which variable reads present.
	Identity(ctx context.Context, allocID, task string) (string, error)
}

// Query is who reads, and where.
type Query struct {
	Namespace string
	// Token is the workload identity the read presents; "" for none.
	Token string
}

// Variable is a variable with its items.
type Variable struct {
	Namespace, Path string
	ModifyIndex     uint64
	Items           map[string]string
}

// VariableMeta is what nomadVarList gives of each variable: Nomad's
// variable metadata.
type VariableMeta struct {
	Namespace, Path          string
	CreateIndex, ModifyIndex uint64
	CreateTime, ModifyTime   int64
}

// ServiceStub is one service of nomadServices: its name and the tags of
// its instances.
type ServiceStub struct {
	Name string
	Tags []string
}

// Service is one instance of nomadService, with the fields Nomad's
// templates read: .Address, .Port, .Tags, .ID …
type Service struct {
	ID, Name, Namespace, NodeID, Datacenter, JobID, AllocID string
	Tags                                                    []string
	Address                                                 string
	Port                                                    int
}

func serviceOf(r events.ServiceRegistration) Service {
	return Service{ID: r.ID, Name: r.ServiceName, Namespace: r.Namespace, NodeID: r.NodeID, Datacenter: r.Datacenter,
		JobID: r.JobID, AllocID: r.AllocID, Tags: r.Tags, Address: r.Address, Port: r.Port}
}
