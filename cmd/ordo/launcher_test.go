package main

import (
	"strings"
	"testing"
)

// ordo provider pools lists each server's launcher pools from
// GET /v1/components?kind=launcher, one row per pool (P10), with the
// component's liveness as the leader holds it.
func TestProviderPools(t *testing.T) {
	api := &fakeAPI{status: 200, answer: `[{"Kind":"launcher","Server":"srv-1","LastSeen":1600000000000000000,
		"Status":"alive","LastHeartbeat":"2023-11-14T22:13:20Z",
		"Pools":[{"Provider":"cheap","Pool":"main","ConfigIndex":7,"Driver":"sim","Priority":50,"Labels":["small","large"]},
		{"Provider":"lab","Pool":"racks","ConfigIndex":9,"Driver":"static","Priority":100,"Labels":["bare"]}]}]`}
	addr := api.start(t)
	code, out, errOut := runCLI("provider", "pools", "-address", addr)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if api.uri != "/v1/components?kind=launcher" {
		t.Fatalf("request URI %q", api.uri)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 3 || !strings.Contains(lines[0], "Server") {
		t.Fatalf("want a header and two pools:\n%s", out)
	}
	for i, want := range [][]string{{"srv-1", "cheap", "main", "sim", "50", "7", "small,large", "alive", "2023-11-14T22:13:20Z"},
		{"srv-1", "lab", "racks", "static", "100", "9", "bare"}} {
		for _, w := range want {
			if !strings.Contains(lines[i+1], w) {
				t.Fatalf("row %d lacks %q:\n%s", i+1, w, out)
			}
		}
	}
}
