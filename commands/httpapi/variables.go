package httpapi

import (
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/ordoplane/ordo/api"
	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/commands/acl/policy"
	"github.com/ordoplane/ordo/commands/namespace"
	"github.com/ordoplane/ordo/commands/variables"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/namespaces"
	pv "github.com/ordoplane/ordo/projections/variables"
)

// Variables (Nomad's variables API): items are sealed here, at the edge,
// before the command is proposed, and opened here when read; only
// ciphertext reaches the log. With no Encrypter configured every variable
// endpoint answers 503.
//
// ACLs: authz.go's table checks the path value "path" in ?namespace (which
// is also the namespace a put writes to: a body naming another is
// refused); lists are filtered item by item and a cas conflict shows items
// only to a caller who may read them.

var variableTables = []string{pv.Table}

func (s *Server) variableRoutes() {
	s.handle("GET /v1/vars", s.leader(endpoint(s.listVariables)))
	s.handle("GET /v1/var/{path...}", s.leader(endpoint(s.getVariable)))
	s.handle("PUT /v1/var/{path...}", s.leader(endpoint(s.putVariable)))
	s.handle("POST /v1/var/{path...}", s.leader(endpoint(s.putVariable)))
	s.handle("DELETE /v1/var/{path...}", s.leader(endpoint(s.deleteVariable)))
}

func metadataJSON(v *pv.Variable) *api.Variable {
	return &api.Variable{Namespace: v.Namespace, Path: v.Path, CreateIndex: v.CreateIndex, ModifyIndex: v.ModifyIndex,
		CreateTime: v.CreateTime, ModifyTime: v.ModifyTime}
}

// variableTarget returns the namespace (the namespace parameter, default
// "default") and the variable path of a /v1/var/ request, validated.
func variableTarget(r *http.Request) (ns, path string, err error) {
	ns = r.URL.Query().Get("namespace")
	if ns == "" {
		ns = namespaces.Default
	} else if err := namespace.ValidName("namespace", ns); err != nil {
		return "", "", err
	}
	path = r.PathValue("path")
	return ns, path, variables.ValidPath("path", path)
}

// noEncrypter answers 503 when the server cannot encrypt or decrypt.
func (s *Server) noEncrypter(w http.ResponseWriter) bool {
	if s.cfg.Encrypter != nil {
		return false
	}
	writeVariableError(w, variables.ErrNoEncrypter)
	return true
}

// writeVariableError is writeError, with the keyring's failures (no
// encrypter, no active key, material not here yet) as 503: the request
// was fine and may succeed once the keyring is ready.
func writeVariableError(w http.ResponseWriter, err error) {
	if errors.Is(err, variables.ErrNoEncrypter) || errors.Is(err, variables.ErrKeyring) {
		writeJSON(w, http.StatusServiceUnavailable, api.ErrorBody{Error: err.Error(), Status: http.StatusServiceUnavailable})
		return
	}
	writeError(w, err)
}

// varToken is a variable's page token, "<namespace>.<path>"; namespaces
// have no dots, so the first one ends the namespace.
func varToken(ns, path string) string { return ns + "." + path }

func varTokenKey(token string) (string, bool) {
	ns, path, ok := strings.Cut(token, ".")
	if !ok || namespace.ValidName("next_token", ns) != nil || variables.ValidPath("next_token", path) != nil {
		return "", false
	}
	return pv.Key(ns, path), true
}

// listVariables lists variables' metadata (never items) by namespace then
// path, paged with next_token "<namespace>.<path>", as Nomad's GET /v1/vars.
func (s *Server) listVariables(w http.ResponseWriter, r *http.Request) error {
	pq, err := parsePage(r, varTokenKey)
	if err != nil {
		writeVariableError(w, err)
		return nil
	}
	if pq.namespace != pv.AllNamespaces {
		if err := namespace.ValidName("namespace", pq.namespace); err != nil {
			writeVariableError(w, err)
			return nil
		}
	}
	s.queryPage(w, r, variableTables, func(v projections.View) (any, error) {
		p := newPager(pq)
		err := pv.Scan(v, pv.Query{Namespace: pq.namespace, Prefix: pq.prefix, From: pq.from, Reverse: pq.reverse},
			func(vr *pv.Variable) error {
				if !s.ACLAllowsVariable(r, vr.Namespace, vr.Path, policy.VarList) {
					return nil
				}
				return p.addToken(varToken(vr.Namespace, vr.Path), metadataJSON(vr))
			})
		return p.result(err)
	})
	return nil
}

// getVariable answers the variable with its items decrypted; a blocking
// query waits on the variables table.
func (s *Server) getVariable(w http.ResponseWriter, r *http.Request) error {
	if s.noEncrypter(w) {
		return nil
	}
	ns, path, err := variableTarget(r)
	if err != nil {
		writeVariableError(w, err)
		return nil
	}
	res, index, err := s.answer(w, r, variableTables, func(v projections.View) (any, error) {
		vr, err := pv.Get(v, ns, path)
		if errors.Is(err, projections.ErrNotFound) {
			return nil, &commands.NotFoundError{Kind: "variable", ID: path}
		} else if err != nil {
			return nil, err
		}
		return s.openVariable(vr)
	})
	if errors.Is(err, variables.ErrKeyring) && isFollowerRead(r) {
		s.fwd.forward(w, r) // the key has not reached this server yet
		return nil
	}
	if err != nil {
		writeVariableError(w, err)
		return nil
	}
	setIndex(w, index)
	writeJSON(w, http.StatusOK, res)
	return nil
}

// openVariable returns vr with its items decrypted.
func (s *Server) openVariable(vr *pv.Variable) (*api.Variable, error) {
	items, err := variables.Open(s.cfg.Encrypter, vr.Namespace, vr.Path, vr.KeyID, vr.Data)
	if err != nil {
		return nil, err
	}
	out := metadataJSON(vr)
	out.Items = items
	return out, nil
}

// variableBody is a put's body: Nomad's api.Variable. Path and Namespace
// may be empty; when set they must match the request's.
type variableBody struct {
	Namespace string
	Path      string
	Items     variables.Items
}

func parseCAS(r *http.Request) (*uint64, error) {
	v, ok := r.URL.Query()["cas"]
	if !ok {
		return nil, nil
	}
	n, err := strconv.ParseUint(v[0], 10, 64)
	if err != nil {
		return nil, commands.Invalid("cas", "%q is not a non-negative integer", v[0])
	}
	return &n, nil
}

// refuseLocks answers 400 to Nomad's variable lock operations, which ordo
// does not have.
func refuseLocks(r *http.Request) error {
	for _, op := range []string{"lock-acquire", "lock-release", "lock-renew"} {
		if r.URL.Query().Has(op) {
			return commands.Invalid(op, "variable locks are not supported")
		}
	}
	return nil
}

// putVariable creates or replaces a variable (?cas=N: only if its modify
// index is N, 0 for absent) and answers it as written; a cas mismatch
// answers 409 with the current variable, as Nomad does.
func (s *Server) putVariable(w http.ResponseWriter, r *http.Request) error {
	if s.noEncrypter(w) {
		return nil
	}
	cmd, items, err := s.decodeVariablePut(r)
	if err != nil {
		writeVariableError(w, err)
		return nil
	}
	out, err := s.cfg.Pipeline.Run(r.Context(), "variable.put", request(r), cmd)
	if err != nil {
		s.variableError(w, r, cmd.Namespace, cmd.Path, err)
		return nil
	}
	res, err := writtenVariable(out, cmd.Namespace, cmd.Path)
	if err != nil {
		writeVariableError(w, err)
		return nil
	}
	s.cfg.Logger.Debug("variable written", "namespace", cmd.Namespace, "path", cmd.Path, "key_id", cmd.KeyID, "index", out.Index)
	res.Items = items
	setIndex(w, out.Index)
	writeJSON(w, http.StatusOK, res)
	return nil
}

// writtenVariable is a put's answer: the variable as the put's own entry
// wrote it (commands.Answered), never read again afterwards, when a later
// write may have replaced it. A retry of an applied put (Duplicate) has
// no rows: it is answered with the index the put committed at.
func writtenVariable(out commands.Outcome, ns, path string) (*api.Variable, error) {
	key := pv.Key(ns, path)
	if r, ok := out.Answered(pv.Table, key); ok && r.Found {
		vr, err := pv.FromRow(key, r.Row)
		if err != nil {
			return nil, err
		}
		return metadataJSON(vr), nil
	}
	return &api.Variable{Namespace: ns, Path: path, ModifyIndex: out.Index}, nil
}

// decodeVariablePut validates a put and seals its items: what it returns
// carries only ciphertext, besides the items to answer with.
func (s *Server) decodeVariablePut(r *http.Request) (variables.Put, variables.Items, error) {
	if err := refuseLocks(r); err != nil {
		return variables.Put{}, nil, err
	}
	cas, err := parseCAS(r)
	if err != nil {
		return variables.Put{}, nil, err
	}
	path := r.PathValue("path")
	if err := variables.ValidPath("path", path); err != nil {
		return variables.Put{}, nil, err
	}
	var body variableBody
	if err := commands.DecodeJSON(r.Body, s.cfg.BodyLimit, &body); err != nil {
		return variables.Put{}, nil, err
	}
	if body.Path != "" && strings.Trim(body.Path, "/") != path {
		return variables.Put{}, nil, commands.Invalid("Path", "%q does not match the path in the URL, %q", body.Path, path)
	}
	// The namespace is the parameter's (default "default"), the one ACLs
	// check; a body naming another is refused rather than followed.
	ns := requestNamespace(r)
	if body.Namespace != "" && body.Namespace != ns {
		return variables.Put{}, nil, commands.Invalid("Namespace", "%q does not match the namespace parameter, %q (set ?namespace=)", body.Namespace, ns)
	}
	if err := namespace.ValidName("namespace", ns); err != nil {
		return variables.Put{}, nil, err
	}
	if err := variables.ValidItems(body.Items); err != nil {
		return variables.Put{}, nil, err
	}
	keyID, data, err := variables.Seal(s.cfg.Encrypter, ns, path, body.Items)
	if err != nil {
		return variables.Put{}, nil, err
	}
	return variables.Put{Namespace: ns, Path: path, CAS: cas, KeyID: keyID, Data: data}, body.Items, nil
}

// deleteVariable removes a variable (?cas=N: only at modify index N).
func (s *Server) deleteVariable(w http.ResponseWriter, r *http.Request) error {
	if s.noEncrypter(w) {
		return nil
	}
	if err := refuseLocks(r); err != nil {
		writeVariableError(w, err)
		return nil
	}
	ns, path, err := variableTarget(r)
	if err != nil {
		writeVariableError(w, err)
		return nil
	}
	cas, err := parseCAS(r)
	if err != nil {
		writeVariableError(w, err)
		return nil
	}
	out, err := s.cfg.Pipeline.Run(r.Context(), "variable.delete", request(r), variables.Delete{Namespace: ns, Path: path, CAS: cas})
	if err != nil {
		s.variableError(w, r, ns, path, err)
		return nil
	}
	writeResult(w, out)
	return nil
}

// variableError answers a failed write; a cas mismatch with 409 and the
// current variable (or an empty one when there is none), which the
// nomad/api client returns as ErrCASConflict. Its items are shown only to
// a caller who may read the variable.
func (s *Server) variableError(w http.ResponseWriter, r *http.Request, ns, path string, err error) {
	if !variables.IsCASConflict(err) {
		writeVariableError(w, err)
		return
	}
	snap := s.cfg.FSM.Store().Snapshot()
	defer snap.Close()
	v := projections.NewView(snap)
	cur := &api.Variable{Namespace: ns, Path: path}
	vr, gerr := pv.Get(v, ns, path)
	switch {
	case gerr == nil && !s.ACLAllowsVariable(r, ns, path, policy.VarRead):
		cur = metadataJSON(vr)
	case gerr == nil:
		if cur, gerr = s.openVariable(vr); gerr != nil {
			writeVariableError(w, gerr)
			return
		}
	case !errors.Is(gerr, projections.ErrNotFound):
		writeVariableError(w, gerr)
		return
	}
	idx, _ := v.AppliedIndex()
	setIndex(w, idx)
	// The current variable, as Nomad answers, with ordo's Error and Status
	// beside it (clients decoding a Variable ignore them).
	writeJSON(w, http.StatusConflict, struct {
		*api.Variable
		Error  string
		Status int
	}{cur, err.Error(), http.StatusConflict})
}
