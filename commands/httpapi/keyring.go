package httpapi

import (
	"context"
	"crypto/subtle"
	"errors"
	"net/http"

	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/commands/keyring"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/allocs"
	kp "github.com/ordoplane/ordo/projections/keyring"
	"github.com/ordoplane/ordo/projections/servers"
	"github.com/ordoplane/ordo/storage/keystore"
)

// The headers a server sends when it fetches key material from a peer.
const (
	// ServerIDHeader names the requesting server; it must be a server the
	// log has registered.
	ServerIDHeader = "X-Ordo-Server-ID"
	// ServerTokenHeader carries the cluster's server token when one is
	// configured (KeyringOptions.ServerToken).
	ServerTokenHeader = "X-Ordo-Server-Token"
)

// KeyringOptions wires the root keyring into the API (keyring.go).
type KeyringOptions struct {
	// Keyring rotates, removes, serves material to peers, signs
	// identities; required.
	Keyring *keyring.Keyring
	// ServerToken, when set, is the secret every server presents to fetch
	// key material from a peer; unset, the material endpoint trusts any
	// registered server id (protect the servers' network instead).
	ServerToken string
	// CollectGarbage runs a keyring GC pass now (PUT
	// /v1/operator/keyring/gc) and returns the removed keys' ids; nil
	// answers 501.
	CollectGarbage func(ctx context.Context) ([]string, error)
}

var keyringTables = []string{kp.Table}

func (s *Server) keyringRoutes() {
	if s.cfg.Keyring == nil || s.cfg.Keyring.Keyring == nil {
		return
	}
	s.handle("GET /v1/operator/keyring/keys", s.leaderOnly(endpoint(s.listRootKeys)))
	s.handle("PUT /v1/operator/keyring/rotate", s.leader(endpoint(s.rotateRootKey)))
	s.handle("POST /v1/operator/keyring/rotate", s.leader(endpoint(s.rotateRootKey)))
	s.handle("DELETE /v1/operator/keyring/key/{id}", s.leader(endpoint(s.removeRootKey)))
	s.handle("PUT /v1/operator/keyring/gc", s.leader(endpoint(s.collectRootKeys)))
	// These two authenticate on their own, outside the ACL check: the
	// material is served to registered servers only (with the server token
	// when set) and the JWKS is public, as workload identities' verifiers
	// need it. Local: a server hands the key material it has to another (N5).
	s.handleSelfAuthenticated("GET /v1/operator/keyring/key/{id}", endpoint(s.rootKeyMaterial))
	s.handleSelfAuthenticated("GET /.well-known/jwks.json", endpoint(s.jwks))
	s.handle("GET /v1/allocation/{id}/identity", s.leaderOnly(endpoint(s.allocIdentity)))
}

// handleSelfAuthenticated registers a route that does its own
// authentication, without the ACL check of handle (its routeAccess entry
// is public, which TestEveryRouteHasAccess checks like any route's).
func (s *Server) handleSelfAuthenticated(pattern string, h http.HandlerFunc) {
	s.patterns = append(s.patterns, pattern)
	s.mux.Handle(pattern, s.metrics.instrument(pattern, h))
}

func (s *Server) listRootKeys(w http.ResponseWriter, r *http.Request) error {
	return queryList(s, w, r, keyringTables, kp.List)
}

// rotateRootKey serves PUT /v1/operator/keyring/rotate[?full=true]: the
// leader writes a new key to its keystore, then proposes it as active.
func (s *Server) rotateRootKey(w http.ResponseWriter, r *http.Request) error {
	full, err := queryBool(r, "full")
	if err != nil {
		return err
	}
	if alg := r.URL.Query().Get("algorithm"); alg != "" && alg != keystore.Algorithm {
		return commands.Invalid("algorithm", "%q: root keys are always %s", alg, keystore.Algorithm)
	}
	out, id, err := s.cfg.Keyring.Keyring.Rotate(r.Context(), request(r), full)
	if err != nil {
		return err
	}
	snap := s.cfg.FSM.Store().Snapshot()
	defer snap.Close()
	key, err := kp.Get(projections.NewView(snap), id)
	if err != nil {
		return err
	}
	setIndex(w, out.Index)
	writeJSON(w, http.StatusOK, map[string]any{"Key": key, "Index": out.Index})
	return nil
}

func (s *Server) removeRootKey(w http.ResponseWriter, r *http.Request) error {
	out, err := s.cfg.Keyring.Keyring.Remove(r.Context(), request(r), r.PathValue("id"))
	if err != nil {
		return err
	}
	writeResult(w, out)
	return nil
}

// collectRootKeys runs a keyring GC pass on demand (on the leader).
func (s *Server) collectRootKeys(w http.ResponseWriter, r *http.Request) error {
	gc := s.cfg.Keyring.CollectGarbage
	if gc == nil {
		return notImplemented{errors.New("the keyring GC is not available on this server")}
	}
	removed, err := gc(r.Context())
	if err != nil {
		return err
	}
	if removed == nil {
		removed = []string{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"Removed": removed})
	return nil
}

// rootKeyMaterial serves GET /v1/operator/keyring/key/{id} to other
// servers only: the key's material from this server's keystore.
func (s *Server) rootKeyMaterial(w http.ResponseWriter, r *http.Request) error {
	if err := s.authenticateServer(r); err != nil {
		return err
	}
	id := r.PathValue("id")
	if !keystore.ValidID(id) {
		return commands.Invalid("id", "%q is not a valid key id", id)
	}
	key, err := s.cfg.Keyring.Keyring.Material(id)
	if errors.Is(err, keyring.ErrKeyMissing) {
		return &commands.NotFoundError{Kind: "root key material", ID: id}
	} else if err != nil {
		return err
	}
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusOK, keystore.File{KeyID: key.ID, Algorithm: key.Algorithm, CreateTime: key.CreateTime, Material: key.Material()})
	return nil
}

// errNotServer refuses a material request from anything but a server.
type errNotServer struct{ reason string }

func (e *errNotServer) Error() string {
	return "root key material is served to servers only: " + e.reason
}

// authenticateServer checks a peer's server id (and token, when set).
func (s *Server) authenticateServer(r *http.Request) error {
	if tok := s.cfg.Keyring.ServerToken; tok != "" {
		got := r.Header.Get(ServerTokenHeader)
		if subtle.ConstantTimeCompare([]byte(got), []byte(tok)) != 1 {
			return &commands.ForbiddenError{Reason: (&errNotServer{"wrong or missing " + ServerTokenHeader}).Error()}
		}
	}
	id := r.Header.Get(ServerIDHeader)
	snap := s.cfg.FSM.Store().Snapshot()
	defer snap.Close()
	if id == "" || id == s.cfg.Self.ID {
		return &commands.ForbiddenError{Reason: (&errNotServer{"no other server's " + ServerIDHeader}).Error()}
	}
	if _, err := servers.Get(projections.NewView(snap), id); err != nil {
		return &commands.ForbiddenError{Reason: (&errNotServer{"server " + id + " is not registered"}).Error()}
	}
	return nil
}

// jwks serves the public keys of every root key not deleted.
func (s *Server) jwks(w http.ResponseWriter, _ *http.Request) error {
	set, err := s.cfg.Keyring.Keyring.JWKS()
	if err != nil {
		return err
	}
	w.Header().Set("Cache-Control", "max-age=60")
	writeJSON(w, http.StatusOK, set)
	return nil
}

// allocIdentity serves GET /v1/allocation/{id}/identity?task=: the
// allocation's workload identity, signed with the key it records. The
// token is a bearer secret: never logged.
func (s *Server) allocIdentity(w http.ResponseWriter, r *http.Request) error {
	if node := r.URL.Query().Get("node_id"); node != "" {
		// A client agent asks for an allocation it runs (authz.go nodeAlloc).
		snap := s.cfg.FSM.Store().Snapshot()
		a, err := allocs.Get(projections.NewView(snap), r.PathValue("id"))
		snap.Close()
		switch {
		case errors.Is(err, projections.ErrNotFound):
			return &commands.NotFoundError{Kind: "allocation", ID: r.PathValue("id")}
		case err != nil:
			return err
		case a.NodeID != node || a.Terminal():
			return errPermissionDenied
		}
	}
	tok, kid, err := s.cfg.Keyring.Keyring.SignIdentity(r.PathValue("id"), r.URL.Query().Get("task"))
	if errors.Is(err, keyring.ErrNoSigningKey) || errors.Is(err, keyring.ErrKeyMissing) {
		return &commands.ConflictError{Reason: err.Error()}
	} else if err != nil {
		return err
	}
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusOK, map[string]string{"JWT": tok, "KeyID": kid})
	return nil
}
