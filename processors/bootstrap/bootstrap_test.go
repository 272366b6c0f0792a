package bootstrap_test

import (
	"testing"

	"github.com/ordoplane/ordo/processors/bootstrap"
)

func TestNewRefusesAConfigThatCannotWork(t *testing.T) {
	if _, err := bootstrap.New(bootstrap.Config{}); err == nil {
		t.Fatal("New accepted a Config without Pipeline and Peers")
	}
	if err := (bootstrap.Config{Retry: -1}).Validate(); err == nil {
		t.Fatal("Validate accepted a negative Retry")
	}
	if d := bootstrap.DefaultConfig(); d.Retry <= 0 || d.Clock == nil || d.Logger == nil {
		t.Fatalf("DefaultConfig = %+v", d)
	}
}
