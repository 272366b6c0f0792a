package acl

import (
	"errors"
	"fmt"
	"strings"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
)

// The projection's tables.
const (
	// TablePolicies holds one row per policy, keyed by name.
	TablePolicies = "acl_policies"
	// TableWorkloadPolicies indexes workload-attached policies by
	// namespace, job and policy name (N7).
	TableWorkloadPolicies = "acl_policy_workloads"
	// TableTokens holds one row per token, keyed by accessor id.
	TableTokens = "acl_tokens"
	// TableTokenSecrets maps a secret's SHA-256 (hex) to its accessor id.
	TableTokenSecrets = "acl_token_secrets"
	// TableTokenExpiry indexes expiring tokens by expiration time.
	TableTokenExpiry = "acl_token_expiry"
	// TableRoles holds one row per role, keyed by id.
	TableRoles = "acl_roles"
	// TableRoleNames maps a role's name to its id.
	TableRoleNames = "acl_role_names"
	// TableBootstrap holds the bootstrap row.
	TableBootstrap = "acl_bootstrap"
)

// BootstrapKey is the key of the bootstrap row in TableBootstrap; the row's
// ModifyIndex is the index bootstrap last happened at (Nomad's reset index).
const BootstrapKey = "bootstrap"

// sep separates the parts of composite index keys; names never hold it.
const sep = "\x00"

// Projection maintains the ACL tables.
type Projection struct{}

var _ projections.Projection = Projection{}

// Name implements projections.Projection.
func (Projection) Name() string { return "acl" }

// Version implements projections.Projection.
func (Projection) Version() int { return 1 }

// Tables implements projections.Projection.
func (Projection) Tables() []string {
	return []string{TablePolicies, TableWorkloadPolicies, TableTokens, TableTokenSecrets,
		TableTokenExpiry, TableRoles, TableRoleNames, TableBootstrap}
}

// Apply implements projections.Projection.
func (Projection) Apply(tx *projections.Tx, ev *events.Event) error {
	p, err := events.DecodeIf(ev, "ACLPolicyUpserted", "ACLPolicyDeleted", "ACLTokenUpserted", "ACLTokensDeleted",
		"ACLRoleUpserted", "ACLRoleDeleted", "ACLBootstrapped")
	if p == nil || err != nil {
		return err
	}
	switch p := p.(type) {
	case *events.ACLPolicyUpserted:
		if err := dropWorkloadIndex(tx, p.Name); err != nil {
			return err
		}
		if p.JobACL != nil {
			if err := tx.PutIndex(TableWorkloadPolicies, workloadKey(p.JobACL.Namespace, p.JobACL.JobID, p.Name)); err != nil {
				return err
			}
		}
		return putMsgpack(tx, TablePolicies, p.Name, p)
	case *events.ACLPolicyDeleted:
		if err := dropWorkloadIndex(tx, p.Name); err != nil {
			return err
		}
		_, err := tx.Delete(TablePolicies, p.Name)
		return err
	case *events.ACLTokenUpserted:
		if err := dropTokenIndexes(tx, p.AccessorID); err != nil {
			return err
		}
		if err := tx.Put(TableTokenSecrets, p.SecretHash, []byte(p.AccessorID)); err != nil {
			return err
		}
		if p.ExpirationTime != 0 {
			if err := tx.Put(TableTokenExpiry, expiryKey(p.ExpirationTime, p.AccessorID), []byte(p.AccessorID)); err != nil {
				return err
			}
		}
		return putMsgpack(tx, TableTokens, p.AccessorID, p)
	case *events.ACLTokensDeleted:
		for _, id := range p.AccessorIDs {
			if p.Expired {
				// N10: the cutoff is the entry's leader time, the same on
				// every server; a token extended since the decision stays.
				t, err := GetToken(tx.View, id)
				if errors.Is(err, projections.ErrNotFound) {
					continue
				} else if err != nil {
					return err
				}
				if t.ExpirationTime == 0 || t.ExpirationTime > tx.Time() {
					continue
				}
			}
			if err := dropTokenIndexes(tx, id); err != nil {
				return err
			}
			if _, err := tx.Delete(TableTokens, id); err != nil {
				return err
			}
		}
		return nil
	case *events.ACLRoleUpserted:
		if old, err := GetRole(tx.View, p.ID); err == nil && old.Name != p.Name {
			if _, err := tx.Delete(TableRoleNames, old.Name); err != nil {
				return err
			}
		} else if err != nil && !errors.Is(err, projections.ErrNotFound) {
			return err
		}
		if err := tx.Put(TableRoleNames, p.Name, []byte(p.ID)); err != nil {
			return err
		}
		return putMsgpack(tx, TableRoles, p.ID, p)
	case *events.ACLRoleDeleted:
		if old, err := GetRole(tx.View, p.ID); err == nil {
			if _, err := tx.Delete(TableRoleNames, old.Name); err != nil {
				return err
			}
		}
		_, err := tx.Delete(TableRoles, p.ID)
		return err
	case *events.ACLBootstrapped:
		return putMsgpack(tx, TableBootstrap, BootstrapKey, p)
	}
	return nil
}

func putMsgpack(tx *projections.Tx, table, key string, v any) error {
	b, err := msgpack.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode %s row %q: %w", table, key, err)
	}
	return tx.Put(table, key, b)
}

func workloadKey(ns, job, policy string) string { return ns + sep + job + sep + policy }

func expiryKey(unixNano int64, accessor string) string {
	return fmt.Sprintf("%020d%s%s", unixNano, sep, accessor)
}

// dropWorkloadIndex removes the policy's workload index row, if any.
func dropWorkloadIndex(tx *projections.Tx, name string) error {
	old, err := GetPolicy(tx.View, name)
	if errors.Is(err, projections.ErrNotFound) {
		return nil
	} else if err != nil {
		return err
	}
	if old.JobACL == nil {
		return nil
	}
	_, err = tx.Delete(TableWorkloadPolicies, workloadKey(old.JobACL.Namespace, old.JobACL.JobID, name))
	return err
}

// dropTokenIndexes removes the secret and expiry index rows of the token
// stored under accessor, if any.
func dropTokenIndexes(tx *projections.Tx, accessor string) error {
	r, err := tx.Get(TableTokens, accessor)
	if errors.Is(err, projections.ErrNotFound) {
		return nil
	} else if err != nil {
		return err
	}
	var old events.ACLTokenUpserted
	if err := msgpack.Unmarshal(r.Value, &old); err != nil {
		return fmt.Errorf("decode token row %q: %w", accessor, err)
	}
	if _, err := tx.Delete(TableTokenSecrets, old.SecretHash); err != nil {
		return err
	}
	if old.ExpirationTime != 0 {
		if _, err := tx.Delete(TableTokenExpiry, expiryKey(old.ExpirationTime, accessor)); err != nil {
			return err
		}
	}
	return nil
}

// Policy is an ACL policy as readers see it.
type Policy struct {
	Name        string
	Description string
	Rules       string
	JobACL      *events.ACLWorkload
	CreateIndex uint64
	ModifyIndex uint64
}

// GetPolicy returns the policy called name, or projections.ErrNotFound.
func GetPolicy(v projections.View, name string) (*Policy, error) {
	r, err := v.Get(TablePolicies, name)
	if err != nil {
		return nil, err
	}
	return policyFromRow(r)
}

func policyFromRow(r projections.Row) (*Policy, error) {
	var p events.ACLPolicyUpserted
	if err := msgpack.Unmarshal(r.Value, &p); err != nil {
		return nil, fmt.Errorf("decode policy row: %w", err)
	}
	return &Policy{Name: p.Name, Description: p.Description, Rules: p.Rules, JobACL: p.JobACL,
		CreateIndex: r.CreateIndex, ModifyIndex: r.ModifyIndex}, nil
}

// ListPolicies returns the policies whose name starts with prefix, by name.
func ListPolicies(v projections.View, prefix string) ([]*Policy, error) {
	var out []*Policy
	err := v.Scan(TablePolicies, prefix, false, func(_ string, r projections.Row) error {
		p, err := policyFromRow(r)
		if err == nil {
			out = append(out, p)
		}
		return err
	})
	return out, err
}

// WorkloadPolicies returns the policies attached to a workload of job in
// namespace that apply to group and task (N7): a policy attached to the
// job applies to all its groups, one attached to a group to all its tasks.
// It reads the (namespace, job) index, never scanning every policy.
func WorkloadPolicies(v projections.View, namespace, job, group, task string) ([]*Policy, error) {
	var out []*Policy
	prefix := namespace + sep + job + sep
	err := v.Scan(TableWorkloadPolicies, prefix, false, func(key string, _ projections.Row) error {
		p, err := GetPolicy(v, strings.TrimPrefix(key, prefix))
		if err != nil {
			return fmt.Errorf("workload index names policy %q: %w", strings.TrimPrefix(key, prefix), err)
		}
		w := p.JobACL
		if w == nil || w.Group != "" && w.Group != group || w.Task != "" && w.Task != task {
			return nil
		}
		out = append(out, p)
		return nil
	})
	return out, err
}

// Token is an ACL token as readers see it; it never holds the secret.
type Token struct {
	AccessorID     string
	SecretHash     string `json:"-"`
	Name           string
	Type           string
	Policies       []string
	Roles          []string // role ids still present
	Global         bool
	CreateTime     int64 // Unix nanoseconds, leader time
	ExpirationTime int64 // Unix nanoseconds; 0: never
	CreateIndex    uint64
	ModifyIndex    uint64
}

// GetToken returns the token with accessor id, or projections.ErrNotFound.
// Links to roles deleted since the token was written are dropped (N8).
func GetToken(v projections.View, accessor string) (*Token, error) {
	r, err := v.Get(TableTokens, accessor)
	if err != nil {
		return nil, err
	}
	return tokenFromRow(v, r)
}

// TokenFromRow decodes token row r, such as a write's answered row
// (fsm.AnsweredRow); v drops links to roles it no longer has.
func TokenFromRow(v projections.View, r projections.Row) (*Token, error) { return tokenFromRow(v, r) }

func tokenFromRow(v projections.View, r projections.Row) (*Token, error) {
	var p events.ACLTokenUpserted
	if err := msgpack.Unmarshal(r.Value, &p); err != nil {
		return nil, fmt.Errorf("decode token row: %w", err)
	}
	t := &Token{AccessorID: p.AccessorID, SecretHash: p.SecretHash, Name: p.Name, Type: p.Type,
		Policies: p.Policies, Global: p.Global, CreateTime: p.CreateTime,
		ExpirationTime: p.ExpirationTime, CreateIndex: r.CreateIndex, ModifyIndex: r.ModifyIndex}
	for _, id := range p.Roles {
		if _, err := v.Get(TableRoles, id); errors.Is(err, projections.ErrNotFound) {
			continue
		} else if err != nil {
			return nil, err
		}
		t.Roles = append(t.Roles, id)
	}
	return t, nil
}

// TokenBySecretHash returns the token whose secret hashes to hash, or
// projections.ErrNotFound.
func TokenBySecretHash(v projections.View, hash string) (*Token, error) {
	r, err := v.Get(TableTokenSecrets, hash)
	if err != nil {
		return nil, err
	}
	return GetToken(v, string(r.Value))
}

// ListTokens returns the tokens whose accessor id starts with prefix.
func ListTokens(v projections.View, prefix string) ([]*Token, error) {
	var out []*Token
	err := v.Scan(TableTokens, prefix, false, func(_ string, r projections.Row) error {
		t, err := tokenFromRow(v, r)
		if err == nil {
			out = append(out, t)
		}
		return err
	})
	return out, err
}

// ExpiredTokens returns the accessor ids of tokens whose expiration time
// is at or before cutoff (Unix nanoseconds), oldest first, at most limit.
func ExpiredTokens(v projections.View, cutoff int64, limit int) ([]string, error) {
	var out []string
	bound := fmt.Sprintf("%020d", cutoff)
	errStop := errors.New("stop")
	err := v.Scan(TableTokenExpiry, "", false, func(key string, r projections.Row) error {
		if key[:20] > bound || len(out) >= limit {
			return errStop
		}
		out = append(out, string(r.Value))
		return nil
	})
	if errors.Is(err, errStop) {
		err = nil
	}
	return out, err
}

// Role is an ACL role as readers see it.
type Role struct {
	ID          string
	Name        string
	Description string
	Policies    []string
	CreateIndex uint64
	ModifyIndex uint64
}

// GetRole returns the role with id, or projections.ErrNotFound.
func GetRole(v projections.View, id string) (*Role, error) {
	r, err := v.Get(TableRoles, id)
	if err != nil {
		return nil, err
	}
	return roleFromRow(r)
}

// RoleByName returns the role called name, or projections.ErrNotFound.
func RoleByName(v projections.View, name string) (*Role, error) {
	r, err := v.Get(TableRoleNames, name)
	if err != nil {
		return nil, err
	}
	return GetRole(v, string(r.Value))
}

// RoleFromRow decodes role row r, such as a write's answered row.
func RoleFromRow(r projections.Row) (*Role, error) { return roleFromRow(r) }

func roleFromRow(r projections.Row) (*Role, error) {
	var p events.ACLRoleUpserted
	if err := msgpack.Unmarshal(r.Value, &p); err != nil {
		return nil, fmt.Errorf("decode role row: %w", err)
	}
	return &Role{ID: p.ID, Name: p.Name, Description: p.Description, Policies: p.Policies,
		CreateIndex: r.CreateIndex, ModifyIndex: r.ModifyIndex}, nil
}

// ListRoles returns the roles whose id starts with prefix.
func ListRoles(v projections.View, prefix string) ([]*Role, error) {
	var out []*Role
	err := v.Scan(TableRoles, prefix, false, func(_ string, r projections.Row) error {
		ro, err := roleFromRow(r)
		if err == nil {
			out = append(out, ro)
		}
		return err
	})
	return out, err
}

// Bootstrap returns the index ACLs were last bootstrapped at (0: never)
// and the bootstrap token's accessor id.
func Bootstrap(v projections.View) (index uint64, accessor string, err error) {
	r, err := v.Get(TableBootstrap, BootstrapKey)
	if errors.Is(err, projections.ErrNotFound) {
		return 0, "", nil
	} else if err != nil {
		return 0, "", err
	}
	var p events.ACLBootstrapped
	if err := msgpack.Unmarshal(r.Value, &p); err != nil {
		return 0, "", fmt.Errorf("decode bootstrap row: %w", err)
	}
	return r.ModifyIndex, p.AccessorID, nil
}
