// Package commandstest holds test helpers for command pipelines.
package commandstest

import (
	"fmt"
	"sync"
	"testing"

	"github.com/ordoplane/ordo/commands"
)

// SequentialIDs returns an id source minting id-00001, id-00002, … in
// order, safe for concurrent use: ids a test can predict, shared by the
// pipelines given it.
func SequentialIDs() func() string {
	var mu sync.Mutex
	n := 0
	return func() string {
		mu.Lock()
		defer mu.Unlock()
		n++
		return fmt.Sprintf("id-%05d", n)
	}
}

// NewPipeline returns the pipeline of cfg, with SequentialIDs when cfg
// sets no IDs, closed when the test ends.
func NewPipeline(t testing.TB, cfg commands.PipelineConfig) *commands.Pipeline {
	t.Helper()
	if cfg.IDs == nil {
		cfg.IDs = SequentialIDs()
	}
	p, err := commands.NewPipeline(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	return p
}
