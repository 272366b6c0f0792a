package launcher_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/commands/launcher"
)

const example = `provider "cheap-cloud" {
  driver   = "sim"
  priority = 50
  pool "main" {
    max_servers     = 10
    max_cores       = 64
    labels          = ["ubuntu-small"]
    node_attributes = { zone = "a" }
  }
  label "ubuntu-small" {
    instance_type = "small"
    min_ready     = 1
  }
  sim {
    instance_types = { small = { cores = 2, ram_mb = 4096 } }
    quota          = { instances = 20, cores = 40 }
  }
}
`

// The example file parses; each bad file is refused with an
// error naming the field.
func TestParseProvider(t *testing.T) {
	cfg, err := launcher.ParseProvider([]byte(example), "cheap-cloud.hcl")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Name != "cheap-cloud" || cfg.Priority != 50 || cfg.Pools[0].MaxCores != 64 || cfg.Pools[0].NodeAttributes["zone"] != "a" ||
		cfg.Labels[0].MinReady != 1 || cfg.Sim.InstanceTypes["small"].RAMMB != 4096 || cfg.Sim.Quota.Cores != 40 {
		t.Fatalf("parsed: %+v", cfg)
	}
	noPrio := strings.Replace(example, "priority = 50", "", 1)
	if cfg, _ := launcher.ParseProvider([]byte(noPrio), "x.hcl"); cfg.Priority != 100 {
		t.Fatalf("default priority %d, want 100 (P11)", cfg.Priority)
	}
	for _, c := range []struct{ from, to, field string }{
		{`labels          = ["ubuntu-small"]`, `labels          = ["gpu"]`, "pool.main.labels"},
		{`driver   = "sim"`, `driver   = "gce"`, "driver"},
		{`instance_type = "small"`, ``, "label.ubuntu-small.instance_type"},
		{`quota          = { instances = 20, cores = 40 }`, `quota = { gpus = 1 }`, "sim.quota"},
		{`max_cores       = 64`, `max_cores       = "lots"`, "x.hcl:6"},
		{`priority = 50`, `priority = -1`, "priority"},
	} {
		src := strings.Replace(example, c.from, c.to, 1)
		_, err := launcher.ParseProvider([]byte(src), "x.hcl")
		var ve *commands.ValidationError
		if !errors.As(err, &ve) || !strings.HasPrefix(ve.Field, c.field) {
			t.Errorf("%s → %s: %v, want a validation error on %s", c.from, c.to, err, c.field)
		}
	}
}

// A static provider's hosts parse; bad hosts are refused naming the host.
func TestParseStaticProvider(t *testing.T) {
	cfg, err := launcher.ParseProvider([]byte(staticExample), "lab.hcl")
	if err != nil {
		t.Fatal(err)
	}
	if h := cfg.Static.Hosts; len(h) != 2 || h[1].Name != "h2" || h[1].Address != "10.0.0.6:2222" || len(h[1].Labels) != 2 {
		t.Fatalf("hosts: %+v", h)
	}
	for _, c := range []struct{ from, to, field string }{
		{`address = "10.0.0.5"`, `address = ""`, "static.host.h1.address"},
		{`host "h2"`, `host "h1"`, "static.host.h1"},
		{`labels  = ["bare"]`, `labels  = []`, "static.host.h1.labels"},
		{`labels = ["bare", "gpu"]`, `labels = ["bare"]`, "static.host.h2.labels"},
		{`host "h1"`, `host "bad name"`, "static.host"},
	} {
		src := strings.Replace(staticExample, c.from, c.to, 1)
		_, err := launcher.ParseProvider([]byte(src), "x.hcl")
		var ve *commands.ValidationError
		if !errors.As(err, &ve) || !strings.HasPrefix(ve.Field, c.field) {
			t.Errorf("%s → %s: %v, want a validation error on %s", c.from, c.to, err, c.field)
		}
	}
}
