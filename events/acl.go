package events

// The entity kinds of ACL events.
const (
	KindACLPolicy = "acl_policy"
	KindACLToken  = "acl_token"
	KindACLRole   = "acl_role"
)

// ACL token types.
const (
	ACLTokenClient     = "client"
	ACLTokenManagement = "management"
)

// ACLWorkload attaches a policy to a workload (N7): a job in a namespace,
// optionally narrowed to one group and one task of it.
type ACLWorkload struct {
	Namespace string `msgpack:"ns" json:"Namespace"`
	JobID     string `msgpack:"job" json:"JobID"`
	Group     string `msgpack:"grp,omitempty" json:"Group,omitempty"`
	Task      string `msgpack:"task,omitempty" json:"Task,omitempty"`
}

// ACLPolicyUpserted records an ACL policy created or replaced. Rules is the
// policy's source text (HCL or JSON) as the operator wrote it; it was
// parsed and validated before it was logged.
type ACLPolicyUpserted struct {
	Name        string       `msgpack:"name" json:"Name"`
	Description string       `msgpack:"desc,omitempty" json:"Description"`
	Rules       string       `msgpack:"rules" json:"Rules"`
	JobACL      *ACLWorkload `msgpack:"wl,omitempty" json:"JobACL,omitempty"`
}

// EntityKeys implements Payload.
func (p *ACLPolicyUpserted) EntityKeys() []Key {
	return []Key{{Kind: KindACLPolicy, Value: p.Name}}
}

// ACLPolicyDeleted records an ACL policy removed.
type ACLPolicyDeleted struct {
	Name string `msgpack:"name" json:"Name"`
}

// EntityKeys implements Payload.
func (p *ACLPolicyDeleted) EntityKeys() []Key {
	return []Key{{Kind: KindACLPolicy, Value: p.Name}}
}

// ACLTokenUpserted records an ACL token created or updated. The token's
// secret never travels: SecretHash is the hex SHA-256 of the SecretID,
// and even that is redacted outside the cluster. Roles holds role ids.
// ExpirationTime is in Unix nanoseconds, decided from leader time (0: never).
type ACLTokenUpserted struct {
	AccessorID     string   `msgpack:"acc" json:"AccessorID"`
	SecretHash     string   `msgpack:"sh" json:"SecretHash"`
	Name           string   `msgpack:"name,omitempty" json:"Name"`
	Type           string   `msgpack:"type" json:"Type"`
	Policies       []string `msgpack:"pol,omitempty" json:"Policies"`
	Roles          []string `msgpack:"roles,omitempty" json:"Roles"`
	Global         bool     `msgpack:"global,omitempty" json:"Global"`
	CreateTime     int64    `msgpack:"ct" json:"CreateTime"`
	ExpirationTime int64    `msgpack:"exp,omitempty" json:"ExpirationTime"`
}

// EntityKeys implements Payload.
func (p *ACLTokenUpserted) EntityKeys() []Key {
	return []Key{{Kind: KindACLToken, Value: p.AccessorID}}
}

// ACLTokensDeleted records tokens removed, by accessor id: by an operator,
// or because they expired (Expired set; the cutoff is the entry's time).
type ACLTokensDeleted struct {
	AccessorIDs []string `msgpack:"acc" json:"AccessorIDs"`
	Expired     bool     `msgpack:"expired,omitempty" json:"Expired"`
}

// EntityKeys implements Payload.
func (p *ACLTokensDeleted) EntityKeys() []Key {
	keys := make([]Key, len(p.AccessorIDs))
	for i, id := range p.AccessorIDs {
		keys[i] = Key{Kind: KindACLToken, Value: id}
	}
	return keys
}

// ACLRoleUpserted records an ACL role created or updated; Policies are
// policy names.
type ACLRoleUpserted struct {
	ID          string   `msgpack:"id" json:"ID"`
	Name        string   `msgpack:"name" json:"Name"`
	Description string   `msgpack:"desc,omitempty" json:"Description"`
	Policies    []string `msgpack:"pol" json:"Policies"`
}

// EntityKeys implements Payload.
func (p *ACLRoleUpserted) EntityKeys() []Key {
	return []Key{{Kind: KindACLRole, Value: p.ID}}
}

// ACLRoleDeleted records an ACL role removed.
type ACLRoleDeleted struct {
	ID string `msgpack:"id" json:"ID"`
}

// EntityKeys implements Payload.
func (p *ACLRoleDeleted) EntityKeys() []Key {
	return []Key{{Kind: KindACLRole, Value: p.ID}}
}

// ACLBootstrapped records the ACL system bootstrapped: the management token
// AccessorID was created in the same entry. ResetIndex is the reset index
// the operator gave to bootstrap again (0 the first time).
type ACLBootstrapped struct {
	AccessorID string `msgpack:"acc" json:"AccessorID"`
	ResetIndex uint64 `msgpack:"reset,omitempty" json:"ResetIndex"`
}

// EntityKeys implements Payload.
func (p *ACLBootstrapped) EntityKeys() []Key {
	return []Key{{Kind: KindACLToken, Value: p.AccessorID}}
}

func init() {
	Register(Type{Name: "ACLPolicyUpserted", Version: 1, Topic: "ACLPolicy",
		New: func() Payload { return new(ACLPolicyUpserted) }})
	Register(Type{Name: "ACLPolicyDeleted", Version: 1, Topic: "ACLPolicy",
		New: func() Payload { return new(ACLPolicyDeleted) }})
	Register(Type{Name: "ACLTokenUpserted", Version: 1, Topic: "ACLToken",
		New: func() Payload { return new(ACLTokenUpserted) }, Sensitive: []string{"SecretHash"}})
	Register(Type{Name: "ACLTokensDeleted", Version: 1, Topic: "ACLToken",
		New: func() Payload { return new(ACLTokensDeleted) }})
	Register(Type{Name: "ACLRoleUpserted", Version: 1, Topic: "ACLRole",
		New: func() Payload { return new(ACLRoleUpserted) }})
	Register(Type{Name: "ACLRoleDeleted", Version: 1, Topic: "ACLRole",
		New: func() Payload { return new(ACLRoleDeleted) }})
	Register(Type{Name: "ACLBootstrapped", Version: 1, Topic: "ACLToken",
		New: func() Payload { return new(ACLBootstrapped) }})
}
