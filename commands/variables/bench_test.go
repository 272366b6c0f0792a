package variables_test

import (
	"testing"

	"github.com/ordoplane/ordo/commands/variables"
	"github.com/ordoplane/ordo/commands/variables/variablestest"
)

// BenchmarkSealOpen: the AES-256-GCM round trip of a small variable.
func BenchmarkSealOpen(b *testing.B) {
	enc := variablestest.NewEncrypter(b)
	items := variables.Items{"username": "app", "password": "0123456789abcdef0123456789abcdef"}
	for b.Loop() {
		kid, data, err := variables.Seal(enc, "default", "bench/p", items)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := variables.Open(enc, "default", "bench/p", kid, data); err != nil {
			b.Fatal(err)
		}
	}
}
