package mirror

import (
	"github.com/ordoplane/ordo/events"
)

// kindRank orders entity kinds from the most specific to the least: a
// record is keyed by the first kind, in this order, of which the event
// names exactly one entity.
var kindRank = []string{
	events.KindAlloc, events.KindEval, events.KindDeployment, events.KindJob,
	events.KindNode, events.KindNamespace, events.KindServer,
}

// RecordKey returns the Kafka record key of ev: the entity it concerns,
// as "<kind>/<id>" ("job/<namespace>/<id>" for jobs, whose ids are unique
// only within a namespace).
//
// The rule: walk the kinds from the most specific (alloc, eval,
// deployment, job, node, namespace, server) and take the first kind of
// which ev's keys name exactly one entity. An event about one allocation
// is keyed by it; a placement of several allocations for one eval is keyed
// by the eval; a client update of several allocations by the node. Kinds
// the list does not know come after it, in the order the event lists
// them. An event naming several entities of every kind is keyed by its
// first key; one naming none by "type/<Type>".
//
// RecordKey is deterministic: the same event always gets the same key, so
// a re-produced event lands in the same partition.
func RecordKey(ev *events.Event) string {
	if len(ev.Keys) == 0 {
		return "type/" + ev.Type
	}
	for _, kind := range kindRank {
		if v, ok := single(ev.Keys, kind); ok {
			return keyOf(ev, kind, v)
		}
	}
	for _, k := range ev.Keys {
		if v, ok := single(ev.Keys, k.Kind); ok {
			return keyOf(ev, k.Kind, v)
		}
	}
	return keyOf(ev, ev.Keys[0].Kind, ev.Keys[0].Value)
}

// single returns the value of kind when keys name exactly one entity of it
// (repeats of the same value count once).
func single(keys []events.Key, kind string) (string, bool) {
	var v string
	found := false
	for _, k := range keys {
		if k.Kind != kind {
			continue
		}
		if found && k.Value != v {
			return "", false
		}
		v, found = k.Value, true
	}
	return v, found
}

func keyOf(ev *events.Event, kind, v string) string {
	if kind == events.KindJob {
		return kind + "/" + ev.Key(events.KindNamespace) + "/" + v
	}
	return kind + "/" + v
}

// Partition returns the partition of n that key belongs to, as Kafka's
// default partitioner chooses it (murmur2 of the key, sign bit cleared,
// modulo n), so producers and consumers in any language agree.
func Partition(key []byte, n int32) int32 {
	if n <= 0 {
		return 0
	}
	return int32((murmur2(key) & 0x7fffffff) % uint32(n))
}

// murmur2 is the 32-bit MurmurHash2 with Kafka's seed.
func murmur2(data []byte) uint32 {
	const (
		seed uint32 = 0x9747b28c
		m    uint32 = 0x5bd1e995
		r           = 24
	)
	n := len(data)
	h := seed ^ uint32(n)
	for ; len(data) >= 4; data = data[4:] {
		k := uint32(data[0]) | uint32(data[1])<<8 | uint32(data[2])<<16 | uint32(data[3])<<24
		k *= m
		k ^= k >> r
		k *= m
		h *= m
		h ^= k
	}
	switch len(data) {
	case 3:
		h ^= uint32(data[2]) << 16
		fallthrough
	case 2:
		h ^= uint32(data[1]) << 8
		fallthrough
	case 1:
		h ^= uint32(data[0])
		h *= m
	}
	h ^= h >> 13
	h *= m
	h ^= h >> 15
	return h
}
