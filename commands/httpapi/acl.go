package httpapi

import (
	"encoding/json"
	"errors"
	"net/http"
	"time"

	"github.com/ordoplane/ordo/api"
	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/commands/acl"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	acls "github.com/ordoplane/ordo/projections/acl"
)

// ACLOptions turns on ACL enforcement (Config.ACL).
type ACLOptions struct {
	// Resolver resolves request tokens; required.
	Resolver *acl.Resolver
	// ResetIndex reads the bootstrap reset index the operator wrote on
	// this server (the data dir's acl-bootstrap-reset file); 0 when none.
	// Nil: bootstrap cannot be reset.
	ResetIndex func() (uint64, error)
	// MinTokenTTL and MaxTokenTTL bound token expiry TTLs (Nomad's
	// token_min_expiration_ttl and token_max_expiration_ttl); 0: no bound.
	MinTokenTTL, MaxTokenTTL time.Duration
}

var (
	aclPolicyTables = []string{acls.TablePolicies}
	aclTokenTables  = []string{acls.TableTokens, acls.TableRoles}
	aclRoleTables   = []string{acls.TableRoles}
)

func (s *Server) aclRoutes() {
	for _, m := range []string{"PUT", "POST"} {
		s.handle(m+" /v1/acl/bootstrap", s.leader(endpoint(s.aclBootstrap)))
		s.handle(m+" /v1/acl/policy/{name}", s.leader(endpoint(s.aclApplyPolicy)))
		s.handle(m+" /v1/acl/token", s.leader(endpoint(s.aclCreateToken)))
		s.handle(m+" /v1/acl/token/{accessor}", s.leader(endpoint(s.aclUpdateToken)))
		s.handle(m+" /v1/acl/role", s.leader(endpoint(s.aclUpsertRole)))
		s.handle(m+" /v1/acl/role/{id}", s.leader(endpoint(s.aclUpsertRole)))
	}
	s.handle("GET /v1/acl/policies", s.leader(endpoint(s.aclListPolicies)))
	s.handle("GET /v1/acl/policy/{name}", s.leader(endpoint(s.aclGetPolicy)))
	s.handle("DELETE /v1/acl/policy/{name}", s.leader(endpoint(s.aclDeletePolicy)))
	s.handle("GET /v1/acl/tokens", s.leader(endpoint(s.aclListTokens)))
	s.handle("GET /v1/acl/token/self", endpoint(s.aclTokenSelf))
	s.handle("GET /v1/acl/token/{accessor}", s.leader(endpoint(s.aclGetToken)))
	s.handle("DELETE /v1/acl/token/{accessor}", s.leader(endpoint(s.aclDeleteToken)))
	s.handle("GET /v1/acl/roles", s.leader(endpoint(s.aclListRoles)))
	s.handle("GET /v1/acl/role/{id}", s.leader(endpoint(s.aclGetRole)))
	s.handle("GET /v1/acl/role/name/{name}", s.leader(endpoint(s.aclGetRoleByName)))
	s.handle("DELETE /v1/acl/role/{id}", s.leader(endpoint(s.aclDeleteRole)))
}

// errACLDisabled answers the ACL endpoints of an agent without ACLs.
var errACLDisabled = commands.Invalid("acl", "ACL support disabled")

func (s *Server) aclEnabled(w http.ResponseWriter) bool {
	if s.cfg.ACL == nil {
		writeError(w, errACLDisabled)
		return false
	}
	return true
}

// tokenJSON renders t; secret is set only in the answer of a creation.
func tokenJSON(v projections.View, t *acls.Token, secret string) api.ACLToken {
	out := api.ACLToken{AccessorID: t.AccessorID, SecretID: secret, Name: t.Name, Type: t.Type,
		Policies: t.Policies, Roles: []api.ACLRoleLink{}, Global: t.Global,
		CreateTime: time.Unix(0, t.CreateTime).UTC(), CreateIndex: t.CreateIndex, ModifyIndex: t.ModifyIndex}
	if out.Policies == nil {
		out.Policies = []string{}
	}
	for _, id := range t.Roles {
		link := api.ACLRoleLink{ID: id}
		if r, err := acls.GetRole(v, id); err == nil {
			link.Name = r.Name
		}
		out.Roles = append(out.Roles, link)
	}
	if t.ExpirationTime != 0 {
		e := time.Unix(0, t.ExpirationTime).UTC()
		out.ExpirationTime = &e
		out.ExpirationTTL = e.Sub(out.CreateTime).String()
	}
	return out
}

// readToken is a token write's answer: the token as the write's own entry
// left it (commands.Answered); a retry of an applied write (no rows)
// reads it as it is now.
func (s *Server) readToken(out commands.Outcome, accessor, secret string) (api.ACLToken, error) {
	snap := s.cfg.FSM.Store().Snapshot()
	defer snap.Close()
	v := projections.NewView(snap)
	var t *acls.Token
	var err error
	if row, ok := out.Answered(acls.TableTokens, accessor); ok && row.Found {
		t, err = acls.TokenFromRow(v, row.Row)
	} else {
		t, err = acls.GetToken(v, accessor)
	}
	if err != nil {
		return api.ACLToken{}, err
	}
	return tokenJSON(v, t, secret), nil
}

func (s *Server) aclBootstrap(w http.ResponseWriter, r *http.Request) error {
	if !s.aclEnabled(w) {
		return nil
	}
	var body struct{ BootstrapSecret string }
	if r.ContentLength != 0 {
		if err := commands.DecodeJSON(r.Body, s.cfg.BodyLimit, &body); err != nil {
			return err
		}
	}
	secret := body.BootstrapSecret
	if secret != "" && (len(secret) < 16 || len(secret) > 128) {
		return commands.Invalid("BootstrapSecret", "must be 16 to 128 characters")
	}
	accessor, err := acl.NewSecret()
	if err == nil && secret == "" {
		secret, err = acl.NewSecret()
	}
	if err != nil {
		return err
	}
	var reset uint64
	if s.cfg.ACL.ResetIndex != nil {
		if reset, err = s.cfg.ACL.ResetIndex(); err != nil {
			return err
		}
	}
	out, err := s.cfg.Pipeline.Run(r.Context(), "acl.bootstrap", request(r),
		acl.Bootstrap{AccessorID: accessor, SecretHash: acl.HashSecret(secret), ResetIndex: reset})
	if err != nil {
		return err
	}
	s.cfg.Logger.Info("ACL bootstrapped", "accessor_id", accessor, "index", out.Index)
	return s.answerToken(w, out, accessor, secret)
}

func (s *Server) answerToken(w http.ResponseWriter, out commands.Outcome, accessor, secret string) error {
	t, err := s.readToken(out, accessor, secret)
	if err != nil {
		return err
	}
	setIndex(w, out.Index)
	writeJSON(w, http.StatusOK, t)
	return nil
}

// aclListPolicies answers ?prefix and ?filter (queryList).
func (s *Server) aclListPolicies(w http.ResponseWriter, r *http.Request) error {
	return queryList(s, w, r, aclPolicyTables, listShapes(r, acls.ListPolicies, func(p *acls.Policy) api.ACLPolicy {
		return api.ACLPolicy{Name: p.Name, Description: p.Description, JobACL: p.JobACL, CreateIndex: p.CreateIndex, ModifyIndex: p.ModifyIndex}
	}))
}

func (s *Server) aclGetPolicy(w http.ResponseWriter, r *http.Request) error {
	name := r.PathValue("name")
	s.query(w, r, aclPolicyTables, func(v projections.View) (any, error) {
		p, err := acls.GetPolicy(v, name)
		if errors.Is(err, projections.ErrNotFound) {
			return nil, &commands.NotFoundError{Kind: "ACL policy", ID: name}
		} else if err != nil {
			return nil, err
		}
		return policyJSON(p), nil // nomadstream.go
	})
	return nil
}

func (s *Server) aclApplyPolicy(w http.ResponseWriter, r *http.Request) error {
	if !s.aclEnabled(w) {
		return nil
	}
	var body struct {
		Name, Description, Rules string
		JobACL                   *events.ACLWorkload
	}
	if err := commands.DecodeJSON(r.Body, s.cfg.BodyLimit, &body); err != nil {
		return err
	}
	if err := pathValue(r, "name", "Name", &body.Name); err != nil {
		return err
	}
	if body.JobACL != nil && body.JobACL.Namespace == "" {
		body.JobACL.Namespace = "default"
	}
	out, err := s.cfg.Pipeline.Run(r.Context(), "acl.policy.apply", request(r),
		acl.ApplyPolicy{Name: body.Name, Description: body.Description, Rules: body.Rules, JobACL: body.JobACL})
	if err != nil {
		return err
	}
	writeResult(w, out)
	return nil
}

func (s *Server) aclDeletePolicy(w http.ResponseWriter, r *http.Request) error {
	out, err := s.cfg.Pipeline.Run(r.Context(), "acl.policy.delete", request(r), acl.DeletePolicy{Name: r.PathValue("name")})
	if err != nil {
		return err
	}
	writeResult(w, out)
	return nil
}

// aclListTokens answers ?prefix and ?filter (queryList).
func (s *Server) aclListTokens(w http.ResponseWriter, r *http.Request) error {
	return queryList(s, w, r, aclTokenTables, func(v projections.View) ([]api.ACLToken, error) {
		return listShapes(r, acls.ListTokens, func(t *acls.Token) api.ACLToken { return tokenJSON(v, t, "") })(v)
	})
}

func (s *Server) aclGetToken(w http.ResponseWriter, r *http.Request) error {
	accessor := r.PathValue("accessor")
	s.query(w, r, aclTokenTables, func(v projections.View) (any, error) {
		t, err := acls.GetToken(v, accessor)
		if errors.Is(err, projections.ErrNotFound) {
			return nil, &commands.NotFoundError{Kind: "ACL token", ID: accessor}
		} else if err != nil {
			return nil, err
		}
		return tokenJSON(v, t, ""), nil
	})
	return nil
}

// aclTokenSelf answers the caller's own token (without its secret).
func (s *Server) aclTokenSelf(w http.ResponseWriter, r *http.Request) error {
	if !s.aclEnabled(w) {
		return nil
	}
	id := identityOf(r)
	if id == nil || id.Token == nil {
		return acl.ErrTokenNotFound
	}
	s.query(w, r, aclTokenTables, func(v projections.View) (any, error) {
		t, err := acls.GetToken(v, id.Token.AccessorID)
		if errors.Is(err, projections.ErrNotFound) {
			return nil, acl.ErrTokenNotFound
		} else if err != nil {
			return nil, err
		}
		return tokenJSON(v, t, ""), nil
	})
	return nil
}

// tokenRequest is the body of a token create or update: api.ACLToken.
type tokenRequest struct {
	AccessorID     string
	Name           string
	Type           string
	Policies       []string
	Roles          []api.ACLRoleLink
	Global         bool
	ExpirationTime *time.Time
	ExpirationTTL  json.RawMessage
}

func (b *tokenRequest) command(create bool, o *ACLOptions) (*acl.UpsertToken, error) {
	cmd := &acl.UpsertToken{Create: create, AccessorID: b.AccessorID, Name: b.Name, Type: b.Type,
		Policies: b.Policies, Global: b.Global, MinTTL: o.MinTokenTTL, MaxTTL: o.MaxTokenTTL}
	if cmd.Type == "" {
		cmd.Type = events.ACLTokenClient
	}
	for _, l := range b.Roles {
		cmd.Roles = append(cmd.Roles, acl.RoleLink{ID: l.ID, Name: l.Name})
	}
	if b.ExpirationTime != nil && !b.ExpirationTime.IsZero() {
		cmd.ExpirationTime = *b.ExpirationTime
	}
	if len(b.ExpirationTTL) > 0 && string(b.ExpirationTTL) != "null" {
		var s string
		var n int64
		switch {
		case json.Unmarshal(b.ExpirationTTL, &s) == nil:
			if s != "" {
				d, err := time.ParseDuration(s)
				if err != nil {
					return nil, commands.Invalid("ExpirationTTL", "%q is not a duration", s)
				}
				cmd.ExpirationTTL = d
			}
		case json.Unmarshal(b.ExpirationTTL, &n) == nil:
			cmd.ExpirationTTL = time.Duration(n)
		default:
			return nil, commands.Invalid("ExpirationTTL", "%s is not a duration", b.ExpirationTTL)
		}
	}
	return cmd, nil
}

func (s *Server) aclCreateToken(w http.ResponseWriter, r *http.Request) error {
	if !s.aclEnabled(w) {
		return nil
	}
	var body tokenRequest
	if err := commands.DecodeJSON(r.Body, s.cfg.BodyLimit, &body); err != nil {
		return err
	}
	if body.AccessorID != "" {
		return commands.Invalid("AccessorID", "is minted by the server")
	}
	accessor, err := acl.NewSecret()
	if err != nil {
		return err
	}
	secret, err := acl.NewSecret()
	if err != nil {
		return err
	}
	body.AccessorID = accessor
	cmd, err := body.command(true, s.cfg.ACL)
	if err != nil {
		return err
	}
	cmd.SecretHash = acl.HashSecret(secret)
	out, err := s.cfg.Pipeline.Run(r.Context(), "acl.token.create", request(r), cmd)
	if err != nil {
		return err
	}
	return s.answerToken(w, out, accessor, secret)
}

func (s *Server) aclUpdateToken(w http.ResponseWriter, r *http.Request) error {
	if !s.aclEnabled(w) {
		return nil
	}
	var body tokenRequest
	if err := commands.DecodeJSON(r.Body, s.cfg.BodyLimit, &body); err != nil {
		return err
	}
	if err := pathValue(r, "accessor", "AccessorID", &body.AccessorID); err != nil {
		return err
	}
	cmd, err := body.command(false, s.cfg.ACL)
	if err != nil {
		return err
	}
	out, err := s.cfg.Pipeline.Run(r.Context(), "acl.token.update", request(r), cmd)
	if err != nil {
		return err
	}
	return s.answerToken(w, out, body.AccessorID, "")
}

func (s *Server) aclDeleteToken(w http.ResponseWriter, r *http.Request) error {
	out, err := s.cfg.Pipeline.Run(r.Context(), "acl.token.delete", request(r),
		acl.DeleteTokens{AccessorIDs: []string{r.PathValue("accessor")}})
	if err != nil {
		return err
	}
	writeResult(w, out)
	return nil
}

func roleJSON(r *acls.Role) api.ACLRole {
	out := api.ACLRole{ID: r.ID, Name: r.Name, Description: r.Description, Policies: []api.ACLRolePolicyLink{},
		CreateIndex: r.CreateIndex, ModifyIndex: r.ModifyIndex}
	for _, p := range r.Policies {
		out.Policies = append(out.Policies, api.ACLRolePolicyLink{Name: p})
	}
	return out
}

// aclListRoles answers ?prefix and ?filter (queryList).
func (s *Server) aclListRoles(w http.ResponseWriter, r *http.Request) error {
	return queryList(s, w, r, aclRoleTables, listShapes(r, acls.ListRoles, roleJSON))
}

func (s *Server) aclGetRole(w http.ResponseWriter, r *http.Request) error {
	return s.answerRole(w, r, r.PathValue("id"), acls.GetRole)
}

func (s *Server) aclGetRoleByName(w http.ResponseWriter, r *http.Request) error {
	return s.answerRole(w, r, r.PathValue("name"), acls.RoleByName)
}

// answerRole answers the role get finds by key, 404 naming key when there
// is none.
func (s *Server) answerRole(w http.ResponseWriter, r *http.Request, key string, get func(projections.View, string) (*acls.Role, error)) error {
	s.query(w, r, aclRoleTables, func(v projections.View) (any, error) {
		ro, err := get(v, key)
		if errors.Is(err, projections.ErrNotFound) {
			return nil, &commands.NotFoundError{Kind: "ACL role", ID: key}
		} else if err != nil {
			return nil, err
		}
		return roleJSON(ro), nil
	})
	return nil
}

func (s *Server) aclUpsertRole(w http.ResponseWriter, r *http.Request) error {
	if !s.aclEnabled(w) {
		return nil
	}
	var body api.ACLRole
	if err := commands.DecodeJSON(r.Body, s.cfg.BodyLimit, &body); err != nil {
		return err
	}
	if err := pathValue(r, "id", "ID", &body.ID); err != nil {
		return err
	}
	cmd := &acl.UpsertRole{ID: body.ID, Name: body.Name, Description: body.Description}
	for _, p := range body.Policies {
		cmd.Policies = append(cmd.Policies, p.Name)
	}
	out, err := s.cfg.Pipeline.Run(r.Context(), "acl.role.upsert", request(r), cmd)
	if err != nil {
		return err
	}
	var ro *acls.Role
	if row, ok := out.Answered(acls.TableRoles, cmd.Result()); ok && row.Found {
		ro, err = acls.RoleFromRow(row.Row) // as this write left it
	} else {
		snap := s.cfg.FSM.Store().Snapshot()
		ro, err = acls.GetRole(projections.NewView(snap), cmd.Result())
		snap.Close()
	}
	if err != nil {
		return err
	}
	setIndex(w, out.Index)
	writeJSON(w, http.StatusOK, roleJSON(ro))
	return nil
}

func (s *Server) aclDeleteRole(w http.ResponseWriter, r *http.Request) error {
	out, err := s.cfg.Pipeline.Run(r.Context(), "acl.role.delete", request(r), acl.DeleteRole{ID: r.PathValue("id")})
	if err != nil {
		return err
	}
	writeResult(w, out)
	return nil
}
