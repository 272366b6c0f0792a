package main

import (
	"bytes"
	"testing"
	"time"
)

func TestRelativeTime(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		ago  time.Duration
		want string
	}{
		{0, "0s ago"},
		{400 * time.Millisecond, "0s ago"},
		{45 * time.Second, "45s ago"},
		{2 * time.Minute, "2m ago"},
		{2*time.Minute + 3*time.Second, "2m3s ago"},
		{time.Hour + 5*time.Minute + 7*time.Second, "1h5m ago"},
		{time.Hour + 7*time.Second, "1h ago"},
		{49 * time.Hour, "2d1h ago"},
		{400 * 24 * time.Hour, "1y35d ago"},
		{-5 * time.Minute, "5m from now"},
	}
	for _, tt := range tests {
		if got := relativeTime(now.Add(-tt.ago), now); got != tt.want {
			t.Errorf("relativeTime(now-%v) = %q, want %q", tt.ago, got, tt.want)
		}
	}
}

func TestDisplay(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	id := "0b9a3f5e-6f7c-4a11-9d1e-2f3c4d5e6f70"
	terse, verbose := display{now: now}, display{verbose: true, now: now}
	if got := terse.id(id); got != "0b9a3f5e" {
		t.Errorf("short id = %q", got)
	}
	if got := terse.id("web"); got != "web" {
		t.Errorf("short id of a short id = %q", got)
	}
	if got := verbose.id(id); got != id {
		t.Errorf("verbose id = %q", got)
	}
	at := now.Add(-65 * time.Minute)
	if got := terse.whenNS(at.UnixNano()); got != "1h5m ago" {
		t.Errorf("when = %q", got)
	}
	if got := verbose.whenNS(at.UnixNano()); got != "2026-03-01T10:55:00Z" {
		t.Errorf("verbose when = %q", got)
	}
	if got := terse.whenNS(0); got != "" {
		t.Errorf("zero time = %q, want empty", got)
	}
	if got := terse.timestamp(at); got != "2026-03-01T10:55:00Z (1h5m ago)" {
		t.Errorf("timestamp = %q", got)
	}
}

func TestHumanBytes(t *testing.T) {
	tests := []struct {
		n    int64
		want string
	}{
		{0, "0 B"}, {512, "512 B"}, {1536, "1.5 KiB"}, {64 << 20, "64 MiB"}, {5 << 30 / 2, "2.5 GiB"},
		{-1, "unlimited"},
	}
	for _, tt := range tests {
		if got := humanBytes(tt.n); got != tt.want {
			t.Errorf("humanBytes(%d) = %q, want %q", tt.n, got, tt.want)
		}
	}
	if got := humanMiB(256); got != "256 MiB" {
		t.Errorf("humanMiB(256) = %q", got)
	}
	if got := humanMiB(-4096); got != "unlimited" {
		t.Errorf("humanMiB(-4096) = %q", got)
	}
}

func TestOutputFlags(t *testing.T) {
	raw := []byte(`[{"ID":"web","Priority":50,"ModifyTime":1772366400000000000}]`)
	var b bytes.Buffer
	o := &outputFlags{template: `{{range .}}{{.ID}} {{.Priority}} {{.ModifyTime}}{{end}}`}
	if on, err := o.active(); !on || err != nil {
		t.Fatalf("active = %v, %v", on, err)
	}
	if err := o.write(&b, raw); err != nil {
		t.Fatal(err)
	}
	if want := "web 50 1772366400000000000\n"; b.String() != want {
		t.Errorf("-t: got %q, want %q", b.String(), want)
	}
	o.json = true
	if _, err := o.active(); err != errJSONAndTemplate {
		t.Errorf("both: err = %v", err)
	}
	if on, _ := (*outputFlags)(nil).active(); on {
		t.Error("nil flags active")
	}
	b.Reset()
	if err := (&outputFlags{template: "{{.ID"}).write(&b, raw); err == nil {
		t.Error("bad template: no error")
	}
}
