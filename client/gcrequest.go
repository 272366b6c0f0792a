package client

import (
	"errors"
	"fmt"

	"github.com/ordoplane/ordo/client/allocrunner"
)

var (
	// ErrUnknownAlloc is returned by CollectAlloc for an allocation this
	// client does not hold.
	ErrUnknownAlloc = errors.New("client: allocation not found on this client")
	// ErrAllocNotTerminal is returned by CollectAlloc for an allocation
	// whose tasks are not all dead: stop it first.
	ErrAllocNotTerminal = errors.New("client: allocation is not terminal")
	// ErrAllocUnreported is returned by CollectAlloc for a terminal
	// allocation whose final state the servers have not acknowledged yet.
	ErrAllocUnreported = errors.New("client: allocation's final state is not yet reported to the servers")
)

// CollectAlloc removes terminal allocation id's directory and record now
// (GET /v1/client/allocation/{id}/gc), as the client's garbage collector
// would later.
func (c *Client) CollectAlloc(id string) error {
	c.mu.Lock()
	e, ok := c.mu.runners[id]
	var err error
	switch {
	case !ok:
		err = ErrUnknownAlloc
	case !e.r.Terminal() || !isDone(e.r):
		err = ErrAllocNotTerminal
	case c.mu.dirty[id] && !e.refused && !e.removing:
		err = ErrAllocUnreported
	default:
		c.forgetLocked([]*allocrunner.Runner{e.r})
	}
	c.mu.Unlock()
	if err != nil {
		return fmt.Errorf("collect allocation %s: %w", id, err)
	}
	c.removeAll([]*allocrunner.Runner{e.r})
	return nil
}

// CollectAll removes every terminal allocation whose final state the
// servers have (GET /v1/client/gc) and returns how many it removed.
func (c *Client) CollectAll() int {
	c.mu.Lock()
	var rs []*allocrunner.Runner
	for id, e := range c.mu.runners {
		if e.r.Terminal() && isDone(e.r) && (!c.mu.dirty[id] || e.refused || e.removing) {
			rs = append(rs, e.r)
		}
	}
	c.forgetLocked(rs)
	c.mu.Unlock()
	c.removeAll(rs)
	return len(rs)
}
