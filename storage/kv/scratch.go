package kv

import (
	"fmt"
	"os"
	"path/filepath"
)

// scratchDir is the directory, inside a store's, of its scratch stores.
const scratchDir = "scratch"

// scratchCacheBytes is a scratch store's block cache: its writer keeps
// what it reads back in memory, and a scan reads each block once.
const scratchCacheBytes = 16 << 20

// OpenScratch opens a new, empty store inside s's directory for work that
// ends with s's process: an online rebuild builds its projections there,
// away from the live store's LSM, and moves the result in with Replace.
// It writes no write-ahead log (what it holds is lost at a crash, which a
// rebuild restarts anyway) and has the Bulk shape. Closing it deletes
// it, and opening s deletes any scratch store a stop left.
func (s *Store) OpenScratch() (*Store, error) {
	return OpenScratchIn(filepath.Join(s.dir, scratchDir))
}

// OpenScratchIn opens a new, empty scratch store (see OpenScratch) in a
// directory of its own under parent (the system's temporary directory
// when empty), deleted when closed; nothing deletes one a crash left.
func OpenScratchIn(parent string) (*Store, error) {
	if parent == "" {
		parent = os.TempDir()
	}
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return nil, fmt.Errorf("scratch store: %w", err)
	}
	dir, err := os.MkdirTemp(parent, "")
	if err != nil {
		return nil, fmt.Errorf("scratch store: %w", err)
	}
	st, err := Open(dir, Config{CacheBytes: scratchCacheBytes, DisableWAL: true, Bulk: true})
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	st.removeOnClose = true
	return st, nil
}

// removeScratch deletes the scratch stores in dir, a store's directory.
func removeScratch(dir string) error {
	return os.RemoveAll(filepath.Join(dir, scratchDir))
}

// ScratchStores returns the directories of the scratch stores in dir, a
// store's directory: those open, or those a stop left until the store
// opens again.
func ScratchStores(dir string) ([]string, error) {
	entries, err := os.ReadDir(filepath.Join(dir, scratchDir))
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("scratch stores: %w", err)
	}
	var out []string
	for _, e := range entries {
		out = append(out, filepath.Join(dir, scratchDir, e.Name()))
	}
	return out, nil
}
