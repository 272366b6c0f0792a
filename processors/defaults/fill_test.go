package defaults_test

import (
	"log/slog"
	"testing"
	"time"

	"github.com/ordoplane/ordo/processors/defaults"
)

type inner struct{ Topic string }

type config struct {
	inner
	Interval time.Duration
	Batch    int
	Logger   *slog.Logger
	Types    []string
	hidden   int
}

func TestFillSetsOnlyZeroFields(t *testing.T) {
	def := config{inner: inner{Topic: "t"}, Interval: time.Second, Batch: 10, Logger: slog.Default(), Types: []string{"a"}, hidden: 7}
	cfg := config{Interval: -time.Minute, Types: []string{"b"}}
	defaults.Fill(&cfg, def)
	if cfg.Interval != -time.Minute || cfg.Types[0] != "b" {
		t.Errorf("set fields changed: %+v", cfg)
	}
	if cfg.Batch != 10 || cfg.Logger != slog.Default() {
		t.Errorf("zero fields not filled: %+v", cfg)
	}
	if cfg.hidden != 0 {
		t.Error("an unexported field was filled")
	}
}
