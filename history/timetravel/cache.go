package timetravel

import (
	"container/list"
	"context"
	"errors"
	"os"
	"sync"

	"github.com/ordoplane/ordo/storage/kv"
)

// ErrClosed is returned by reads after Close.
var ErrClosed = errors.New("ordo: time travel is closed")

// stateKey names a materialised state: the index, and the projections
// materialised ("" for every one).
type stateKey struct {
	index uint64
	set   string
	// floor is the FSM's last operator restore when it was built: a
	// restore makes every state cached before it stale.
	floor uint64
}

// materialised is one state, materialised in its own scratch store.
type materialised struct {
	key   stateKey
	ready chan struct{} // closed once store or err is set
	store *kv.Store
	dir   string
	err   error
	// Guarded by the cache's mu:
	refs   int           // readers holding it, the materialiser included
	cached bool          // still in the cache; when false the last release destroys it
	elem   *list.Element // position in the LRU list while cached
}

// cache keeps the most recently used materialised states, at most size.
// An entry is reference-counted: eviction takes it out of the cache, and
// the last reader's release closes its store and removes its directory.
// Concurrent requests for the same index share one materialisation.
type cache struct {
	size int
	// building joins the builds in flight; it is added to under mu before
	// close, so waiting after close is safe.
	building sync.WaitGroup
	mu       struct {
		sync.Mutex
		byKey  map[stateKey]*materialised
		lru    *list.List // front: most recently used
		closed bool
	}
}

func newCache(size int) *cache {
	c := &cache{size: size}
	c.mu.byKey = map[stateKey]*materialised{}
	c.mu.lru = list.New()
	return c
}

// get returns the state named key, materialising it with build when no
// cached or in-flight one exists. The caller must call release once. A
// caller whose ctx ends while another builds the state stops waiting;
// the build goes on for the next reader.
func (c *cache) get(ctx context.Context, key stateKey, build func() (*kv.Store, string, error)) (*materialised, func(), error) {
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	c.mu.Lock()
	if c.mu.closed {
		c.mu.Unlock()
		return nil, nil, ErrClosed
	}
	m, ok := c.mu.byKey[key]
	if ok {
		m.refs++
		c.mu.lru.MoveToFront(m.elem)
		c.mu.Unlock()
	} else {
		m = &materialised{key: key, ready: make(chan struct{}), refs: 1, cached: true}
		m.elem = c.mu.lru.PushFront(m)
		c.mu.byKey[key] = m
		victims := c.evictLocked()
		c.building.Add(1)
		c.mu.Unlock()
		destroy(victims)
		m.store, m.dir, m.err = build()
		c.building.Done()
		if m.err != nil {
			c.mu.Lock()
			c.uncacheLocked(m)
			c.mu.Unlock()
		}
		close(m.ready)
	}
	release := c.releaser(m)
	select {
	case <-m.ready:
	case <-ctx.Done():
		release()
		return nil, nil, ctx.Err()
	}
	if m.err != nil {
		release()
		return nil, nil, m.err
	}
	return m, release, nil
}

func (c *cache) releaser(m *materialised) func() {
	var once sync.Once
	return func() {
		once.Do(func() {
			c.mu.Lock()
			m.refs--
			gone := m.refs == 0 && !m.cached
			c.mu.Unlock()
			if gone {
				destroy([]*materialised{m})
			}
		})
	}
}

// evictLocked takes the least recently used entries past size out of the
// cache and returns those no reader holds, for the caller to destroy
// after unlocking.
func (c *cache) evictLocked() []*materialised {
	var victims []*materialised
	for c.mu.lru.Len() > c.size {
		m := c.mu.lru.Back().Value.(*materialised)
		c.uncacheLocked(m)
		if m.refs == 0 {
			victims = append(victims, m)
		}
	}
	return victims
}

func (c *cache) uncacheLocked(m *materialised) {
	if !m.cached {
		return
	}
	m.cached = false
	c.mu.lru.Remove(m.elem)
	m.elem = nil
	delete(c.mu.byKey, m.key)
}

// indexes returns the cached indexes, most recently used first.
func (c *cache) indexes() []uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []uint64
	for e := c.mu.lru.Front(); e != nil; e = e.Next() {
		out = append(out, e.Value.(*materialised).key.index)
	}
	return out
}

// has reports whether the state named key is cached or being built.
func (c *cache) has(key stateKey) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.mu.byKey[key]
	return ok
}

// close refuses later gets and destroys every cached entry no reader
// holds; held ones go when released. It returns before builds in flight
// end: wait for them with c.building.
func (c *cache) close() {
	c.mu.Lock()
	c.mu.closed = true
	var victims []*materialised
	for c.mu.lru.Len() > 0 {
		m := c.mu.lru.Back().Value.(*materialised)
		c.uncacheLocked(m)
		if m.refs == 0 {
			victims = append(victims, m)
		}
	}
	c.mu.Unlock()
	destroy(victims)
}

// destroy closes the entries' stores and removes their directories. An
// entry still being built has nothing yet: it is only uncached, and its
// last release (the builder's) destroys it.
func destroy(ms []*materialised) {
	for _, m := range ms {
		if m.store != nil {
			_ = m.store.Close()
		}
		if m.dir != "" {
			_ = os.RemoveAll(m.dir)
		}
	}
}
