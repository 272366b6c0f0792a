package api

import (
	"time"

	"github.com/ordoplane/ordo/events"
)

// ACLToken is an ACL token as the /v1/acl endpoints answer it (Nomad's
// api.ACLToken). SecretID is set only in the answer of a creation and of
// /v1/acl/token/self.
type ACLToken struct {
	AccessorID     string
	SecretID       string
	Name           string
	Type           string
	Policies       []string
	Roles          []ACLRoleLink
	Global         bool
	CreateTime     time.Time
	ExpirationTime *time.Time `json:",omitempty"`
	ExpirationTTL  string     `json:",omitempty"`
	CreateIndex    uint64
	ModifyIndex    uint64
}

// ACLRoleLink names a role a token holds, by id or name.
type ACLRoleLink struct {
	ID   string
	Name string
}

// ACLPolicy is an ACL policy (Nomad's api.ACLPolicy); lists leave Rules
// out. It is also the body of PUT /v1/acl/policy/:name.
type ACLPolicy struct {
	Name        string
	Description string
	Rules       string `json:",omitempty"`
	JobACL      *events.ACLWorkload
	CreateIndex uint64
	ModifyIndex uint64
}

// ACLRole is an ACL role (Nomad's api.ACLRole); also the body of a role
// create or update.
type ACLRole struct {
	ID          string
	Name        string
	Description string
	Policies    []ACLRolePolicyLink
	CreateIndex uint64
	ModifyIndex uint64
}

// ACLRolePolicyLink names a policy a role grants.
type ACLRolePolicyLink struct{ Name string }
