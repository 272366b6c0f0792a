package events_test

import (
	"strings"
	"testing"

	"github.com/ordoplane/ordo/events"
)

func TestComputedClass(t *testing.T) {
	type in struct {
		dc, class, pool string
		attrs, meta     map[string]string
		drivers         map[string]events.DriverInfo
		hvols           map[string]*events.ClientHostVolume
	}
	cc := func(n in) string {
		return events.ComputedClass(n.dc, n.class, n.pool, n.attrs, n.meta, n.drivers, n.hvols)
	}
	ok := events.DriverInfo{Detected: true, Healthy: true}
	base := in{dc: "dc1", class: "compute", pool: "default",
		attrs:   map[string]string{"kernel.name": "linux", "cpu.arch": "amd64", "unique.hostname": "h1"},
		meta:    map[string]string{"rack": "r1"},
		drivers: map[string]events.DriverInfo{"exec": ok}}
	want := cc(base)
	if !strings.HasPrefix(want, "v1:") || len(want) != len("v1:")+16 {
		t.Fatalf("class %q", want)
	}
	for i := 0; i < 20; i++ { // map order must not matter
		if got := cc(base); got != want {
			t.Fatalf("class changed between calls: %q, %q", got, want)
		}
	}
	same := map[string]in{
		"unique attributes":  {dc: "dc1", class: "compute", pool: "default", attrs: map[string]string{"kernel.name": "linux", "cpu.arch": "amd64", "unique.hostname": "h2", "unique.network.ip-address": "10.0.0.2"}, meta: base.meta, drivers: base.drivers},
		"unique meta":        {dc: "dc1", class: "compute", pool: "default", attrs: base.attrs, meta: map[string]string{"rack": "r1", "unique.serial": "s"}, drivers: base.drivers},
		"empty pool":         {dc: "dc1", class: "compute", attrs: base.attrs, meta: base.meta, drivers: base.drivers},
		"driver health text": {dc: "dc1", class: "compute", pool: "default", attrs: base.attrs, meta: base.meta, drivers: map[string]events.DriverInfo{"exec": {Detected: true, Healthy: true, HealthDescription: "fine", Attributes: map[string]string{"v": "1"}}}},
	}
	for name, n := range same {
		if got := cc(n); got != want {
			t.Errorf("%s: class %q, want %q", name, got, want)
		}
	}
	differ := map[string]in{
		"datacenter":     {dc: "dc2", class: "compute", pool: "default", attrs: base.attrs, meta: base.meta, drivers: base.drivers},
		"node class":     {dc: "dc1", class: "gpu", pool: "default", attrs: base.attrs, meta: base.meta, drivers: base.drivers},
		"pool":           {dc: "dc1", class: "compute", pool: "batch", attrs: base.attrs, meta: base.meta, drivers: base.drivers},
		"attribute":      {dc: "dc1", class: "compute", pool: "default", attrs: map[string]string{"kernel.name": "windows", "cpu.arch": "amd64"}, meta: base.meta, drivers: base.drivers},
		"meta":           {dc: "dc1", class: "compute", pool: "default", attrs: base.attrs, meta: map[string]string{"rack": "r2"}, drivers: base.drivers},
		"meta not attr":  {dc: "dc1", class: "compute", pool: "default", attrs: map[string]string{"kernel.name": "linux", "cpu.arch": "amd64", "rack": "r1"}, drivers: base.drivers},
		"unhealthy":      {dc: "dc1", class: "compute", pool: "default", attrs: base.attrs, meta: base.meta, drivers: map[string]events.DriverInfo{"exec": {Detected: true}}},
		"another driver": {dc: "dc1", class: "compute", pool: "default", attrs: base.attrs, meta: base.meta, drivers: map[string]events.DriverInfo{"exec": ok, "docker": ok}},
		"fields shifted": {dc: "dc1c", class: "ompute", pool: "default", attrs: base.attrs, meta: base.meta, drivers: base.drivers},
		"host volume": {dc: "dc1", class: "compute", pool: "default", attrs: base.attrs, meta: base.meta, drivers: base.drivers,
			hvols: map[string]*events.ClientHostVolume{"data": {Name: "data", Path: "/srv/data"}}},
		"read-only host volume": {dc: "dc1", class: "compute", pool: "default", attrs: base.attrs, meta: base.meta, drivers: base.drivers,
			hvols: map[string]*events.ClientHostVolume{"data": {Name: "data", Path: "/srv/data", ReadOnly: true}}},
	}
	seen := map[string]string{want: "base"}
	for name, n := range differ {
		got := cc(n)
		if other, dup := seen[got]; dup {
			t.Errorf("%s: class %q equals %s's", name, got, other)
		}
		seen[got] = name
	}
}
