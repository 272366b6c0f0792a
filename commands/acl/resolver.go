package acl

import (
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ordoplane/ordo/clock"
	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/commands/acl/policy"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	acls "github.com/ordoplane/ordo/projections/acl"
	"github.com/ordoplane/ordo/storage/kv"
)

// WorkloadIdentityVerifier verifies a workload identity token (a JWT
// signed by the keyring) and returns the workload it names. ok is false
// for a token that is not a workload identity at all (the resolver then
// treats it as an ACL secret); err is set for one that is but does not
// verify.
type WorkloadIdentityVerifier interface {
	Verify(token string) (namespace, job, group, task string, ok bool, err error)
}

// AnonymousPolicy names the policy requests without a token get.
const AnonymousPolicy = "anonymous"

// AnonymousActor is the actor recorded for requests without a token.
const AnonymousActor = "anonymous"

// Identity is who a request is and what it may do.
type Identity struct {
	// ACL answers the capability checks.
	ACL *policy.ACL
	// Token is the caller's token; nil for anonymous and workload callers.
	Token *acls.Token
	// Workload is set for a workload identity.
	Workload *events.ACLWorkload
}

// Actor is what the audit trail records for the caller: the token's
// AccessorID, "workload:<ns>/<job>/<group>/<task>" or "anonymous".
func (id *Identity) Actor() string {
	switch {
	case id == nil:
		return AnonymousActor
	case id.Token != nil:
		return id.Token.AccessorID
	case id.Workload != nil:
		w := id.Workload
		return "workload:" + w.Namespace + "/" + w.JobID + "/" + w.Group + "/" + w.Task
	}
	return AnonymousActor
}

// ErrTokenNotFound is a secret no live token has (Nomad's wording).
var ErrTokenNotFound = &commands.ForbiddenError{Reason: "ACL token not found"}

// ErrTokenExpired is a token past its expiration time, not yet reaped.
var ErrTokenExpired = &commands.ForbiddenError{Reason: "ACL token expired"}

// ResolverConfig configures a Resolver.
type ResolverConfig struct {
	// Store is read through snapshots; required.
	Store *kv.Store
	// Applied returns the applied index; required. The cache is checked
	// against the ACL tables' indexes only when it moved.
	Applied func() uint64
	// Verifier verifies workload identities; nil: none are accepted.
	Verifier WorkloadIdentityVerifier
	// Clock tells whether a cached token has expired; default clock.System{}.
	Clock clock.Clock
	// MaxAge bounds how long an entry is served from the cache (Nomad's
	// token_ttl); default 30s. The table indexes invalidate sooner.
	MaxAge time.Duration
	// MaxEntries bounds the cache; default 4096 (it is emptied when full).
	MaxEntries int
	// Logger; default slog.Default(). Only accessor ids are logged.
	Logger *slog.Logger
	// Registerer receives the cache metrics; nil registers none.
	Registerer prometheus.Registerer
}

type cached struct {
	id      *Identity
	expires int64 // token expiration, Unix nanoseconds; 0: never
	born    time.Time
}

// Resolver turns tokens into Identities, caching by the secret's hash.
type Resolver struct {
	cfg     ResolverConfig
	hits    prometheus.Counter
	misses  prometheus.Counter
	cleared prometheus.Counter
	// policies survives the identity cache's invalidations: it is keyed
	// by the policies' modify indexes.
	policies *policyCache

	mu struct {
		sync.Mutex
		applied uint64    // applied index the cache was last checked at
		tables  [3]uint64 // indexes of the policies, tokens and roles tables
		entries map[string]cached
	}
}

// NewResolver returns a Resolver.
func NewResolver(cfg ResolverConfig) (*Resolver, error) {
	if cfg.Store == nil || cfg.Applied == nil {
		return nil, errors.New("acl: resolver needs Store and Applied")
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.System{}
	}
	if cfg.MaxAge <= 0 {
		cfg.MaxAge = 30 * time.Second
	}
	if cfg.MaxEntries <= 0 {
		cfg.MaxEntries = 4096
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	r := &Resolver{cfg: cfg, policies: newPolicyCache(),
		hits:    prometheus.NewCounter(prometheus.CounterOpts{Name: "ordo_acl_resolver_cache_hits_total", Help: "Token resolutions answered from the ACL cache."}),
		misses:  prometheus.NewCounter(prometheus.CounterOpts{Name: "ordo_acl_resolver_cache_misses_total", Help: "Token resolutions that read the ACL tables."}),
		cleared: prometheus.NewCounter(prometheus.CounterOpts{Name: "ordo_acl_resolver_cache_invalidations_total", Help: "Times the ACL cache was emptied because an ACL table changed."}),
	}
	r.mu.entries = map[string]cached{}
	if cfg.Registerer != nil {
		for _, c := range []prometheus.Collector{r.hits, r.misses, r.cleared} {
			if err := cfg.Registerer.Register(c); err != nil {
				return nil, fmt.Errorf("acl: register resolver metrics: %w", err)
			}
		}
	}
	return r, nil
}

// Close unregisters the resolver's metrics.
func (r *Resolver) Close() {
	if r.cfg.Registerer != nil {
		r.cfg.Registerer.Unregister(r.hits)
		r.cfg.Registerer.Unregister(r.misses)
		r.cfg.Registerer.Unregister(r.cleared)
	}
}

var watched = [3]string{acls.TablePolicies, acls.TableTokens, acls.TableRoles}

// Resolve returns the identity of secret: "" is anonymous (the anonymous
// policy, when it exists); a workload identity JWT resolves to its
// workload's policies (N7); anything else must be a live token's SecretID.
func (r *Resolver) Resolve(secret string) (*Identity, error) {
	key := ""
	if secret != "" {
		key = HashSecret(secret)
	}
	now := r.cfg.Clock.Now()
	applied := r.cfg.Applied()
	r.mu.Lock()
	if applied != r.mu.applied {
		if err := r.checkTablesLocked(applied); err != nil {
			r.mu.Unlock()
			return nil, err
		}
	}
	if c, ok := r.mu.entries[key]; ok && now.Sub(c.born) < r.cfg.MaxAge {
		r.mu.Unlock()
		r.hits.Inc()
		if c.expires != 0 && now.UnixNano() >= c.expires {
			return nil, ErrTokenExpired
		}
		return c.id, nil
	}
	r.mu.Unlock()
	r.misses.Inc()

	c, err := r.load(secret, key)
	if err != nil {
		return nil, err
	}
	c.born = now
	r.mu.Lock()
	if r.mu.applied == applied { // no table moved while loading
		if len(r.mu.entries) >= r.cfg.MaxEntries {
			clear(r.mu.entries)
		}
		r.mu.entries[key] = c
	}
	r.mu.Unlock()
	if c.expires != 0 && now.UnixNano() >= c.expires {
		return nil, ErrTokenExpired
	}
	return c.id, nil
}

// checkTablesLocked empties the cache when an ACL table's index moved.
func (r *Resolver) checkTablesLocked(applied uint64) error {
	snap := r.cfg.Store.Snapshot()
	defer snap.Close()
	v := projections.NewView(snap)
	var now [3]uint64
	for i, t := range watched {
		idx, err := v.TableIndex(t)
		if err != nil {
			return fmt.Errorf("acl: read %s index: %w", t, err)
		}
		now[i] = idx
	}
	if now != r.mu.tables {
		r.mu.tables = now
		if len(r.mu.entries) > 0 {
			clear(r.mu.entries)
			r.cleared.Inc()
		}
	}
	r.mu.applied = applied
	return nil
}

// load builds the identity of secret from the tables.
func (r *Resolver) load(secret, key string) (cached, error) {
	snap := r.cfg.Store.Snapshot()
	defer snap.Close()
	v := projections.NewView(snap)
	if secret == "" {
		acl, err := r.compile(v, []string{AnonymousPolicy}, nil)
		return cached{id: &Identity{ACL: acl}}, err
	}
	if r.cfg.Verifier != nil && strings.Count(secret, ".") == 2 {
		ns, job, group, task, ok, err := r.cfg.Verifier.Verify(secret)
		if err != nil {
			return cached{}, &commands.ForbiddenError{Reason: "workload identity does not verify: " + err.Error()}
		}
		if ok {
			return r.workload(v, ns, job, group, task)
		}
	}
	t, err := acls.TokenBySecretHash(v, key)
	if errors.Is(err, projections.ErrNotFound) {
		return cached{}, ErrTokenNotFound
	} else if err != nil {
		return cached{}, fmt.Errorf("acl: resolve token: %w", err)
	}
	if t.Type == events.ACLTokenManagement {
		return cached{id: &Identity{ACL: policy.Management, Token: t}, expires: t.ExpirationTime}, nil
	}
	acl, err := r.compile(v, t.Policies, t.Roles)
	if err != nil {
		return cached{}, fmt.Errorf("acl: token %s: %w", t.AccessorID, err)
	}
	return cached{id: &Identity{ACL: acl, Token: t}, expires: t.ExpirationTime}, nil
}

// workload resolves a verified workload to the policies attached to it,
// found through the (namespace, job) index (N7).
func (r *Resolver) workload(v projections.View, ns, job, group, task string) (cached, error) {
	pols, err := acls.WorkloadPolicies(v, ns, job, group, task)
	if err != nil {
		return cached{}, fmt.Errorf("acl: workload %s/%s policies: %w", ns, job, err)
	}
	good := make([]*acls.Policy, 0, len(pols)+1)
	for _, p := range append([]*acls.Policy{implicitWorkloadPolicy(ns, job, group, task)}, pols...) {
		if _, err := r.policies.parse(p); err != nil {
			r.cfg.Logger.Warn("stored ACL policy does not parse", "policy", p.Name, "err", err)
			continue
		}
		good = append(good, p)
	}
	acl, err := r.policies.compile(good)
	if err != nil {
		return cached{}, fmt.Errorf("acl: workload %s/%s: %w", ns, job, err)
	}
	return cached{id: &Identity{ACL: acl,
		Workload: &events.ACLWorkload{Namespace: ns, JobID: job, Group: group, Task: task}}}, nil
}

// implicitWorkloadPolicy is what every workload may do without a policy
// attached, as in Nomad: read its job's variables at nomad/jobs/<job>,
// nomad/jobs/<job>/<group> and nomad/jobs/<job>/<group>/<task>, and list
// nomad/jobs, in its namespace (its templates' nomadVar).
func implicitWorkloadPolicy(ns, job, group, task string) *acls.Policy {
	q := func(s string) string { // an HCL string: no template sequences
		return strings.NewReplacer("${", "$${", "%{", "%%{").Replace(strconv.Quote(s))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "namespace %s {\n  variables {\n", q(ns))
	fmt.Fprintf(&b, "    path %s { capabilities = [\"list\"] }\n", q("nomad/jobs"))
	for _, p := range []string{"nomad/jobs/" + job, "nomad/jobs/" + job + "/" + group, "nomad/jobs/" + job + "/" + group + "/" + task} {
		fmt.Fprintf(&b, "    path %s { capabilities = [\"read\", \"list\"] }\n", q(p))
	}
	b.WriteString("  }\n}\n")
	// The name keys the policy caches: unique per workload, never stored.
	return &acls.Policy{Name: "\x00workload:" + ns + "/" + job + "/" + group + "/" + task, Rules: b.String()}
}

// compile loads the named policies and those of the roles (missing ones
// are skipped: a deleted policy grants nothing) and compiles them through
// the policy cache, which parses only policies changed since it saw them.
func (r *Resolver) compile(v projections.View, names, roles []string) (*policy.ACL, error) {
	all := append([]string(nil), names...)
	for _, id := range roles {
		ro, err := acls.GetRole(v, id)
		if errors.Is(err, projections.ErrNotFound) {
			continue
		} else if err != nil {
			return nil, err
		}
		all = append(all, ro.Policies...)
	}
	var pols []*acls.Policy
	for _, n := range dedupe(all) {
		p, err := acls.GetPolicy(v, n)
		if errors.Is(err, projections.ErrNotFound) {
			continue
		} else if err != nil {
			return nil, err
		}
		pols = append(pols, p)
	}
	return r.policies.compile(pols)
}
