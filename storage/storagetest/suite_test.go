package storagetest_test

import (
	"testing"

	"github.com/hashicorp/raft"

	"github.com/ordoplane/ordo/storage/storagetest"
)

// The suites hold raft's own reference store to the contract they check.
func TestInmemStore(t *testing.T) {
	storagetest.LogStoreSuite(t, func(*testing.T) raft.LogStore { return raft.NewInmemStore() })
	storagetest.StableStoreSuite(t, func(*testing.T) raft.StableStore { return raft.NewInmemStore() })
}

func TestEntryRoundTripsThroughEqualLog(t *testing.T) {
	a, b := storagetest.Entry(3, 2), storagetest.Entry(3, 2)
	if d := storagetest.EqualLog(a, b); d != "" {
		t.Fatalf("equal entries differ: %s", d)
	}
	b.AppendedAt = b.AppendedAt.UTC()
	if d := storagetest.EqualLog(a, b); d != "" {
		t.Fatalf("same instant in another zone differs: %s", d)
	}
	for name, mut := range map[string]func(*raft.Log){
		"Index":      func(l *raft.Log) { l.Index++ },
		"Term":       func(l *raft.Log) { l.Term++ },
		"Type":       func(l *raft.Log) { l.Type++ },
		"Data":       func(l *raft.Log) { l.Data = append(l.Data, 'x') },
		"Extensions": func(l *raft.Log) { l.Extensions = nil },
		"AppendedAt": func(l *raft.Log) { l.AppendedAt = l.AppendedAt.Add(1) },
	} {
		c := storagetest.Entry(3, 2)
		mut(c)
		if storagetest.EqualLog(c, a) == "" {
			t.Errorf("EqualLog misses a change of %s", name)
		}
	}
}
