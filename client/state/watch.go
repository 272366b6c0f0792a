package state

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// watchIndexFile holds the highest index of the servers' allocation list
// the client has acted on (client/watch-index).
const watchIndexFile = "watch-index"

// WatchIndex returns the highest index of the servers' list of the node's
// allocations that the client acted on, as PutWatchIndex stored it; 0
// when none was stored. A restarted client compares the servers' first
// answers with it, so an answer older than what it already acted on
// removes nothing.
func (s *Store) WatchIndex() (uint64, error) {
	b, err := os.ReadFile(filepath.Join(s.dir, watchIndexFile))
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("client state: read watch index: %w", err)
	}
	n, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("client state: watch index %q: %w", strings.TrimSpace(string(b)), err)
	}
	return n, nil
}

// PutWatchIndex durably stores index as the watch index.
func (s *Store) PutWatchIndex(index uint64) error {
	if err := writeAtomic(filepath.Join(s.dir, watchIndexFile), []byte(strconv.FormatUint(index, 10)+"\n")); err != nil {
		return fmt.Errorf("client state: write watch index: %w", err)
	}
	return nil
}
