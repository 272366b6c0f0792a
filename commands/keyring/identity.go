package keyring

import (
	"crypto/ed25519"
	"errors"
	"fmt"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"

	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/allocs"
	"github.com/ordoplane/ordo/projections/jobs"
	"github.com/ordoplane/ordo/projections/keyring"
)

// IdentityAudience is the audience of every workload identity.
const IdentityAudience = "ordo.io"

// IdentityClaims are a workload identity's claims, Nomad's names.
type IdentityClaims struct {
	Namespace    string `json:"nomad_namespace"`
	JobID        string `json:"nomad_job_id"`
	AllocationID string `json:"nomad_allocation_id"`
	TaskGroup    string `json:"nomad_task_group,omitempty"`
	Task         string `json:"nomad_task,omitempty"`
	jwt.Claims
}

// ErrNoSigningKey is returned for an allocation that records no signing
// key (placed before the cluster had a root key).
var ErrNoSigningKey = errors.New("keyring: allocation has no signing key")

// SignIdentity returns the workload identity of task in allocation
// allocID: a JWT signed (EdDSA) by the Ed25519 key derived from the root
// key the allocation records (SigningKeyID), kid that key's id, issued and
// valid from the allocation's create time. Ed25519 signatures are
// deterministic, so every server holding the key signs the same token.
// The token is a bearer secret: callers never log it.
func (k *Keyring) SignIdentity(allocID, task string) (string, string, error) {
	v := k.view()
	a, err := allocs.Get(v, allocID)
	if errors.Is(err, projections.ErrNotFound) {
		return "", "", &commands.NotFoundError{Kind: "allocation", ID: allocID}
	} else if err != nil {
		return "", "", err
	}
	if task != "" && !hasTask(v, &a.Allocation, task) {
		return "", "", commands.Invalid("task", "allocation %s's group %q has no task %q", allocID, a.TaskGroup, task)
	}
	if a.SigningKeyID == "" {
		return "", "", fmt.Errorf("identity of %s: %w", allocID, ErrNoSigningKey)
	}
	key, err := k.material(a.SigningKeyID)
	if err != nil {
		return "", "", fmt.Errorf("identity of %s: %w", allocID, err)
	}
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.EdDSA, Key: key.Signer()},
		(&jose.SignerOptions{}).WithType("JWT").WithHeader(jose.HeaderKey("kid"), key.ID))
	if err != nil {
		return "", "", fmt.Errorf("identity signer: %w", err)
	}
	at := jwt.NewNumericDate(time.Unix(0, a.CreateTime))
	claims := IdentityClaims{Namespace: a.Namespace, JobID: a.JobID, AllocationID: a.ID, TaskGroup: a.TaskGroup, Task: task,
		Claims: jwt.Claims{Subject: fmt.Sprintf("global:%s:%s:%s:%s", a.Namespace, a.JobID, a.TaskGroup, task),
			Audience: jwt.Audience{IdentityAudience}, IssuedAt: at, NotBefore: at}}
	tok, err := jwt.Signed(signer).Claims(claims).Serialize()
	if err != nil {
		return "", "", fmt.Errorf("sign identity of %s: %w", allocID, err)
	}
	return tok, key.ID, nil
}

func hasTask(v projections.View, a *events.Allocation, task string) bool {
	j, err := jobs.Get(v, a.Namespace, a.JobID)
	if err != nil {
		return false
	}
	for _, g := range j.TaskGroups {
		if g.Name != a.TaskGroup {
			continue
		}
		for _, t := range g.Tasks {
			if t.Name == task {
				return true
			}
		}
	}
	return false
}

// VerifyIdentity checks a workload identity: its signature against the
// public key the log records for its kid (a key not deleted), its
// audience and times, and that its allocation is still live. ok is false
// with a nil error for a token that is well formed but not valid; err
// reports a token that does not parse or a failure to read state. It is
// the ACL resolver's WorkloadIdentityVerifier.
func (k *Keyring) VerifyIdentity(token string) (namespace, job, group, task string, ok bool, err error) {
	c, ok, err := k.verify(token)
	if !ok || err != nil {
		return "", "", "", "", ok, err
	}
	return c.Namespace, c.JobID, c.TaskGroup, c.Task, true, nil
}

func (k *Keyring) verify(token string) (*IdentityClaims, bool, error) {
	tok, err := jwt.ParseSigned(token, []jose.SignatureAlgorithm{jose.EdDSA})
	if err != nil {
		return nil, false, fmt.Errorf("parse identity: %w", err)
	}
	if len(tok.Headers) != 1 || tok.Headers[0].KeyID == "" {
		return nil, false, nil
	}
	v := k.view()
	meta, err := keyring.Get(v, tok.Headers[0].KeyID)
	if errors.Is(err, projections.ErrNotFound) {
		return nil, false, nil
	} else if err != nil {
		return nil, false, err
	}
	if len(meta.PublicKey) != ed25519.PublicKeySize {
		return nil, false, nil
	}
	var c IdentityClaims
	if err := tok.Claims(ed25519.PublicKey(meta.PublicKey), &c); err != nil {
		return nil, false, nil // bad signature
	}
	if err := c.Claims.ValidateWithLeeway(jwt.Expected{AnyAudience: jwt.Audience{IdentityAudience}, Time: k.cfg.Clock.Now()}, time.Minute); err != nil {
		return nil, false, nil
	}
	a, err := allocs.Get(v, c.AllocationID)
	if errors.Is(err, projections.ErrNotFound) {
		return nil, false, nil
	} else if err != nil {
		return nil, false, err
	}
	if a.Terminal() || a.SigningKeyID != meta.KeyID || a.Namespace != c.Namespace || a.JobID != c.JobID {
		return nil, false, nil
	}
	return &c, true, nil
}

// JWKS returns the public keys of every root key not deleted, for
// /.well-known/jwks.json. It reads only the log's metadata.
func (k *Keyring) JWKS() (*jose.JSONWebKeySet, error) {
	list, err := keyring.List(k.view())
	if err != nil {
		return nil, err
	}
	set := &jose.JSONWebKeySet{Keys: []jose.JSONWebKey{}}
	for _, m := range list {
		if len(m.PublicKey) != ed25519.PublicKeySize {
			continue
		}
		set.Keys = append(set.Keys, jose.JSONWebKey{Key: ed25519.PublicKey(m.PublicKey), KeyID: m.KeyID,
			Algorithm: string(jose.EdDSA), Use: "sig"})
	}
	return set, nil
}

// ErrIdentityInvalid is returned by Verify for a workload identity that
// does not verify (bad signature, unknown or deleted key, expired, or its
// allocation no longer live).
var ErrIdentityInvalid = errors.New("keyring: workload identity does not verify")

// Verify implements the ACL resolver's WorkloadIdentityVerifier: ok is
// false (and err nil) for a token that is not a JWT at all, so the
// resolver treats it as an ACL secret; err is ErrIdentityInvalid for a JWT
// that does not verify.
func (k *Keyring) Verify(token string) (namespace, job, group, task string, ok bool, err error) {
	if _, perr := jwt.ParseSigned(token, []jose.SignatureAlgorithm{jose.EdDSA}); perr != nil {
		return "", "", "", "", false, nil
	}
	namespace, job, group, task, ok, err = k.VerifyIdentity(token)
	if err != nil {
		return "", "", "", "", true, err
	}
	if !ok {
		return "", "", "", "", true, ErrIdentityInvalid
	}
	return namespace, job, group, task, true, nil
}
