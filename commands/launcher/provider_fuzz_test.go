package launcher_test

import (
	"errors"
	"reflect"
	"testing"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/commands/launcher"
	"github.com/ordoplane/ordo/events"
)

const staticExample = `provider "lab" {
  driver = "static"
  pool "main" {
    labels = ["bare", "gpu"]
  }
  label "bare" {}
  label "gpu" {}
  static {
    host "h1" {
      address = "10.0.0.5"
      labels  = ["bare"]
    }
    host "h2" {
      address = "10.0.0.6:2222"
      labels  = ["bare", "gpu"]
    }
  }
}
`

// FuzzParseProvider: the provider file parser never panics; it either
// refuses a file with a *commands.ValidationError or returns a
// configuration that validates and survives the log's encoding
// unchanged (decode → encode → decode is stable).
func FuzzParseProvider(f *testing.F) {
	for _, s := range []string{example, staticExample, "", "provider {}", `provider "x" { driver = "sim" }`,
		`provider "a" {} provider "b" {}`, `provider "x" { driver = "sim" sim { boot_time = "forever" } }`,
		"provider \"x\" {\n driver = \"sim\"\n priority = 1e300\n}"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		cfg, err := launcher.ParseProvider(src, "fuzz.hcl")
		if err != nil {
			var ve *commands.ValidationError
			if !errors.As(err, &ve) || ve.Field == "" {
				t.Fatalf("error %v (%T): want a validation error naming a field", err, err)
			}
			return
		}
		if err := launcher.ValidateProvider(cfg); err != nil {
			t.Fatalf("parsed a configuration that does not validate: %v", err)
		}
		b, err := events.Marshal(&events.ProviderApplied{Provider: cfg})
		if err != nil {
			t.Fatalf("encode: %v", err)
		}
		var back events.ProviderApplied
		if err := msgpack.Unmarshal(b, &back); err != nil {
			t.Fatalf("decode: %v", err)
		}
		b2, err := events.Marshal(&back)
		if err != nil {
			t.Fatalf("encode again: %v", err)
		}
		if !reflect.DeepEqual(b, b2) {
			t.Fatalf("decode → encode is not stable for %+v", cfg)
		}
	})
}
