package acl

import (
	"errors"
	"fmt"
	"time"

	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	acls "github.com/ordoplane/ordo/projections/acl"
)

// RoleLink links a token to a role by ID or, when ID is empty, by Name.
type RoleLink struct {
	ID   string
	Name string
}

// UpsertToken creates a token (Create set) or updates one. The caller
// mints AccessorID and the secret (NewSecret) and passes only SecretHash.
type UpsertToken struct {
	Create     bool
	AccessorID string
	SecretHash string
	Name       string
	Type       string
	Policies   []string
	Roles      []RoleLink
	Global     bool
	// ExpirationTTL sets the expiry to the leader's now plus the TTL;
	// ExpirationTime sets it outright (both zero: never). Creation only.
	ExpirationTTL  time.Duration
	ExpirationTime time.Time
	// MinTTL and MaxTTL bound the expiry from now when they are set.
	MinTTL, MaxTTL time.Duration

	// decided is the token as decided; read it with Result.
	decided *events.ACLTokenUpserted
}

var _ commands.Command = (*UpsertToken)(nil)

// Validate implements commands.Command.
func (u *UpsertToken) Validate() error {
	switch {
	case u.AccessorID == "":
		return commands.Invalid("AccessorID", "required")
	case u.Create && len(u.SecretHash) != 64:
		return commands.Invalid("SecretID", "missing")
	case len(u.Name) > 256:
		return commands.Invalid("Name", "%d bytes exceeds 256", len(u.Name))
	case u.Type != events.ACLTokenClient && u.Type != events.ACLTokenManagement:
		return commands.Invalid("Type", "%q is not client or management", u.Type)
	case u.Type == events.ACLTokenManagement && (len(u.Policies) > 0 || len(u.Roles) > 0):
		return commands.Invalid("Policies", "a management token links no policies or roles")
	case u.Type == events.ACLTokenClient && len(u.Policies) == 0 && len(u.Roles) == 0:
		return commands.Invalid("Policies", "a client token links at least one policy or role")
	case u.ExpirationTTL < 0:
		return commands.Invalid("ExpirationTTL", "%v is negative", u.ExpirationTTL)
	case u.ExpirationTTL > 0 && !u.ExpirationTime.IsZero():
		return commands.Invalid("ExpirationTTL", "give ExpirationTTL or ExpirationTime, not both")
	case !u.Create && (u.ExpirationTTL != 0 || !u.ExpirationTime.IsZero()):
		return commands.Invalid("ExpirationTTL", "a token's expiry is set at creation only")
	}
	for _, p := range u.Policies {
		if err := ValidName("Policies", p); err != nil {
			return err
		}
	}
	for _, r := range u.Roles {
		if r.ID == "" && r.Name == "" {
			return commands.Invalid("Roles", "a role link needs an ID or a Name")
		}
	}
	return nil
}

// Decide implements commands.Command. Role links resolve to ids, repeats
// removed, and every linked policy and role must exist (N8); the expiry
// is computed from now, the leader's time (N10).
func (u *UpsertToken) Decide(v projections.View, now time.Time, _ commands.IDs) (commands.Decision, error) {
	var pre []events.Precondition
	ev := &events.ACLTokenUpserted{AccessorID: u.AccessorID, Name: u.Name, Type: u.Type, Global: u.Global}
	if u.Create {
		if _, err := v.Get(acls.TableTokens, u.AccessorID); err == nil {
			return commands.Decision{}, commands.Invalid("AccessorID", "token %s already exists", u.AccessorID)
		}
		if _, err := v.Get(acls.TableTokenSecrets, u.SecretHash); err == nil {
			return commands.Decision{}, commands.Invalid("SecretID", "already in use")
		}
		ev.SecretHash, ev.CreateTime = u.SecretHash, now.UnixNano()
		exp := time.Time{}
		if u.ExpirationTTL > 0 {
			exp = now.Add(u.ExpirationTTL)
		} else if !u.ExpirationTime.IsZero() {
			exp = u.ExpirationTime
		}
		if !exp.IsZero() {
			ttl := exp.Sub(now)
			switch {
			case ttl <= 0:
				return commands.Decision{}, commands.Invalid("ExpirationTime", "%s is not in the future", exp.UTC().Format(time.RFC3339))
			case u.MinTTL > 0 && ttl < u.MinTTL:
				return commands.Decision{}, commands.Invalid("ExpirationTTL", "%v is shorter than the minimum %v", ttl.Round(time.Second), u.MinTTL)
			case u.MaxTTL > 0 && ttl > u.MaxTTL:
				return commands.Decision{}, commands.Invalid("ExpirationTTL", "%v is longer than the maximum %v", ttl.Round(time.Second), u.MaxTTL)
			}
			ev.ExpirationTime = exp.UnixNano()
		}
		pre = append(pre, events.Precondition{Table: acls.TableTokens, Key: u.AccessorID, Op: events.Absent},
			events.Precondition{Table: acls.TableTokenSecrets, Key: u.SecretHash, Op: events.Absent})
	} else {
		old, err := acls.GetToken(v, u.AccessorID)
		if errors.Is(err, projections.ErrNotFound) {
			return commands.Decision{}, &commands.NotFoundError{Kind: "ACL token", ID: u.AccessorID}
		} else if err != nil {
			return commands.Decision{}, err
		}
		if old.Type != u.Type {
			return commands.Decision{}, commands.Invalid("Type", "cannot change a %s token into a %s token", old.Type, u.Type)
		}
		ev.SecretHash, ev.CreateTime, ev.ExpirationTime = old.SecretHash, old.CreateTime, old.ExpirationTime
		pre = append(pre, events.Precondition{Table: acls.TableTokens, Key: u.AccessorID, Op: events.ModifyIndex, Index: old.ModifyIndex})
	}
	ev.Policies = dedupe(u.Policies)
	for _, p := range ev.Policies {
		if _, err := v.Get(acls.TablePolicies, p); errors.Is(err, projections.ErrNotFound) {
			return commands.Decision{}, commands.Invalid("Policies", "policy %q does not exist", p)
		} else if err != nil {
			return commands.Decision{}, err
		}
		pre = append(pre, events.Precondition{Table: acls.TablePolicies, Key: p, Op: events.Exists})
	}
	var ids []string
	for _, link := range u.Roles {
		var (
			r   *acls.Role
			err error
		)
		if link.ID != "" {
			r, err = acls.GetRole(v, link.ID)
		} else {
			r, err = acls.RoleByName(v, link.Name)
		}
		if errors.Is(err, projections.ErrNotFound) {
			what := link.ID
			if what == "" {
				what = link.Name
			}
			return commands.Decision{}, commands.Invalid("Roles", "role %q does not exist", what)
		} else if err != nil {
			return commands.Decision{}, fmt.Errorf("resolve role link: %w", err)
		}
		ids = append(ids, r.ID)
	}
	ev.Roles = dedupe(ids)
	for _, id := range ev.Roles {
		pre = append(pre, events.Precondition{Table: acls.TableRoles, Key: id, Op: events.Exists})
	}
	u.decided = ev
	return commands.Decision{Events: []events.Payload{ev}, Preconditions: pre}, nil
}

// Result returns the token as decided (nil before Decide).
func (u *UpsertToken) Result() *events.ACLTokenUpserted { return u.decided }

// DeleteTokens removes tokens by accessor id.
type DeleteTokens struct{ AccessorIDs []string }

var _ commands.Command = DeleteTokens{}

// Validate implements commands.Command.
func (d DeleteTokens) Validate() error {
	if len(d.AccessorIDs) == 0 {
		return commands.Invalid("AccessorIDs", "required")
	}
	for _, id := range d.AccessorIDs {
		if id == "" {
			return commands.Invalid("AccessorIDs", "empty accessor id")
		}
	}
	return nil
}

// Decide implements commands.Command.
func (d DeleteTokens) Decide(v projections.View, _ time.Time, _ commands.IDs) (commands.Decision, error) {
	ids := dedupe(d.AccessorIDs)
	var pre []events.Precondition
	for _, id := range ids {
		if _, err := v.Get(acls.TableTokens, id); errors.Is(err, projections.ErrNotFound) {
			return commands.Decision{}, &commands.NotFoundError{Kind: "ACL token", ID: id}
		} else if err != nil {
			return commands.Decision{}, err
		}
		pre = append(pre, events.Precondition{Table: acls.TableTokens, Key: id, Op: events.Exists})
	}
	return commands.Decision{Events: []events.Payload{&events.ACLTokensDeleted{AccessorIDs: ids}}, Preconditions: pre}, nil
}

// ExpireTokens deletes tokens expired at the leader's now, at most Limit
// (default 1000). The projection deletes only the listed tokens still
// expired at the entry's time, so the cutoff is the entry's leader time,
// never an applying server's clock (N10).
type ExpireTokens struct {
	Limit int

	// n is how many tokens the decision listed; read it with Result.
	n *int
}

var _ commands.Command = (*ExpireTokens)(nil)

// Validate implements commands.Command.
func (*ExpireTokens) Validate() error { return nil }

// Decide implements commands.Command.
func (e *ExpireTokens) Decide(v projections.View, now time.Time, _ commands.IDs) (commands.Decision, error) {
	limit := e.Limit
	if limit <= 0 {
		limit = 1000
	}
	ids, err := acls.ExpiredTokens(v, now.UnixNano(), limit)
	if e.n == nil {
		e.n = new(int)
	}
	*e.n = len(ids)
	if err != nil || len(ids) == 0 {
		return commands.Decision{}, err
	}
	return commands.Decision{Events: []events.Payload{&events.ACLTokensDeleted{AccessorIDs: ids, Expired: true}}}, nil
}

// Result returns how many expired tokens the decision listed.
func (e *ExpireTokens) Result() int {
	if e.n == nil {
		return 0
	}
	return *e.n
}
