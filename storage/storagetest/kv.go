package storagetest

import (
	"testing"

	"github.com/ordoplane/ordo/storage/kv"
)

// OpenKV opens a state store with the default config in a new temporary
// directory and closes it when the test ends.
func OpenKV(tb testing.TB) *kv.Store {
	tb.Helper()
	s, err := kv.Open(tb.TempDir(), kv.DefaultConfig())
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { s.Close() })
	return s
}
