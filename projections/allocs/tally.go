package allocs

import (
	"fmt"
	"slices"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
)

// tally gathers what one event changes in the rows that count
// allocations — a node's usage (UsageTable) and a signing key's live
// count (SigningKeyLiveTable) — so that each such row is read and written
// once per event, however many of its allocations the event changes: a
// plan places hundreds of allocations on a few nodes, all signed by one
// key, and writing those rows once per allocation was most of what
// applying it wrote. flush leaves the rows the changes one at a time
// would have left, create and modify indexes included, and marks the
// same tables changed.
type tally struct {
	usage map[string]*counted[Usage]
	nodes []string // usage keys, in the order first changed
	live  map[string]*counted[int]
	keys  []string // signing key ids, in the order first changed
}

// counted is a row of a tally: its value as the event's changes so far
// leave it.
type counted[T any] struct {
	v T
	// had: the row existed before the event; has: it exists now;
	// dropped: the event removed it at some point; wrote: the event
	// wrote it at some point.
	had, has, dropped, wrote bool
}

func newTally() *tally {
	return &tally{usage: map[string]*counted[Usage]{}, live: map[string]*counted[int]{}}
}

// nodeUsage returns node's usage row as the event has left it so far.
func (t *tally) nodeUsage(tx *projections.Tx, node string) (*counted[Usage], error) {
	if c, ok := t.usage[node]; ok {
		return c, nil
	}
	c := &counted[Usage]{}
	was, _, err := projections.LookupValue(tx, &usageCodec, UsageTable, node)
	if err != nil {
		return nil, err
	}
	if was != nil {
		c.v, c.had, c.has = *was, true, true
		c.v.Ports = slices.Clone(was.Ports) // the writer may share was
	}
	t.usage[node] = c
	t.nodes = append(t.nodes, node)
	return c, nil
}

// addUsage adds d and n allocations to node's usage, and moves it from
// holding the ports drop to holding add; the row goes when no allocation
// is left.
func (t *tally) addUsage(tx *projections.Tx, node string, d events.Resources, n int, drop, add []int) error {
	c, err := t.nodeUsage(tx, node)
	if err != nil {
		return err
	}
	u := &c.v
	u.Resources.CPU += d.CPU
	u.Resources.MemoryMB += d.MemoryMB
	u.Resources.DiskMB += d.DiskMB
	u.Allocs += n
	for _, p := range drop {
		if i, ok := slices.BinarySearch(u.Ports, p); ok {
			u.Ports = slices.Delete(u.Ports, i, i+1)
		}
	}
	for _, p := range add {
		i, _ := slices.BinarySearch(u.Ports, p)
		u.Ports = slices.Insert(u.Ports, i, p)
	}
	if len(u.Ports) == 0 {
		u.Ports = nil
	}
	if u.Allocs == 0 {
		c.drop(Usage{})
	} else {
		c.write()
	}
	return nil
}

// addSigned adds d to the live count of signing key keyID; the row goes
// at zero or below.
func (t *tally) addSigned(tx *projections.Tx, keyID string, d int) error {
	c, ok := t.live[keyID]
	if !ok {
		n, index, err := LiveSignedBy(tx.View, keyID)
		if err != nil {
			return err
		}
		c = &counted[int]{v: n, had: index > 0, has: index > 0}
		t.live[keyID] = c
		t.keys = append(t.keys, keyID)
	}
	c.v += d
	if c.v <= 0 {
		c.drop(0)
	} else {
		c.write()
	}
	return nil
}

// drop records that the row was removed, its value now zero.
func (c *counted[T]) drop(zero T) {
	if c.has {
		c.dropped = true
	}
	c.v, c.has = zero, false
}

func (c *counted[T]) write() { c.has, c.wrote = true, true }

// flush writes the tallied rows, in the order first changed.
func (t *tally) flush(tx *projections.Tx) error {
	for _, node := range t.nodes {
		c := t.usage[node]
		if err := flushRow(tx, UsageTable, node, c, func() error {
			u := c.v
			return projections.PutValue(tx, &usageCodec, UsageTable, node, &u)
		}); err != nil {
			return err
		}
	}
	for _, keyID := range t.keys {
		c := t.live[keyID]
		if err := flushRow(tx, SigningKeyLiveTable, keyID, c, func() error {
			b, err := msgpack.Marshal(c.v)
			if err != nil {
				return fmt.Errorf("encode signing count: %w", err)
			}
			return tx.Put(SigningKeyLiveTable, keyID, b)
		}); err != nil {
			return err
		}
	}
	return nil
}

// flushRow writes c's row at key in table with put, or removes it: a row
// removed and written again during the event is removed first (so it is
// created anew at this entry), and one written and removed again is
// written first (so the table counts as changed), as the changes one at
// a time would have done.
func flushRow[T any](tx *projections.Tx, table, key string, c *counted[T], put func() error) error {
	if !c.wrote && !c.dropped {
		return nil
	}
	if c.had && c.dropped {
		if _, err := tx.Delete(table, key); err != nil {
			return err
		}
	}
	if c.has || !c.had {
		if err := put(); err != nil {
			return err
		}
	}
	if !c.has && !c.had {
		_, err := tx.Delete(table, key)
		return err
	}
	return nil
}
