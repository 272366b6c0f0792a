package timetravel

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"syscall"
)

// tmpPrefix starts the name of a checkpoint being written; such a
// directory left by a crash is removed at start.
const tmpPrefix = ".tmp-"

// checkpoints is the directory of checkpoints, one sub-directory per
// checkpoint named for the applied index of the state it holds. A
// checkpoint directory is never written once published: readers copy it
// (kv.CopyCheckpoint) before opening. Pruning removes the oldest ones but
// waits for any reader that pinned one to let go.
type checkpoints struct {
	dir string
	mu  struct {
		sync.Mutex
		indexes []uint64       // published, ascending
		pins    map[uint64]int // readers copying a checkpoint
		doomed  map[uint64]bool
	}
}

// openCheckpoints lists dir, creating it, and removes what a crash left
// half-written.
func openCheckpoints(dir string) (*checkpoints, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("checkpoints: %w", err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("checkpoints: %w", err)
	}
	c := &checkpoints{dir: dir}
	c.mu.pins = map[uint64]int{}
	c.mu.doomed = map[uint64]bool{}
	for _, e := range entries {
		idx, err := strconv.ParseUint(e.Name(), 10, 64)
		if err != nil || !e.IsDir() || idx == 0 {
			// A half-written checkpoint, or something that is not ours to keep.
			if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
				return nil, fmt.Errorf("checkpoints: remove %s: %w", e.Name(), err)
			}
			continue
		}
		c.mu.indexes = append(c.mu.indexes, idx)
	}
	slices.Sort(c.mu.indexes)
	return c, nil
}

func (c *checkpoints) path(index uint64) string {
	return filepath.Join(c.dir, strconv.FormatUint(index, 10))
}

// list returns the published checkpoints' indexes, ascending.
func (c *checkpoints) list() []uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.mu.indexes)
}

// newest returns the newest checkpoint's index, 0 when there is none.
func (c *checkpoints) newest() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	if n := len(c.mu.indexes); n > 0 {
		return c.mu.indexes[n-1]
	}
	return 0
}

// has reports whether a checkpoint at index is published.
func (c *checkpoints) has(index uint64) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := slices.BinarySearch(c.mu.indexes, index)
	return ok
}

// publish renames the finished checkpoint in tmp to its place for index.
func (c *checkpoints) publish(tmp string, index uint64) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := os.Rename(tmp, c.path(index)); err != nil {
		return fmt.Errorf("publish checkpoint %d: %w", index, err)
	}
	i, _ := slices.BinarySearch(c.mu.indexes, index)
	c.mu.indexes = slices.Insert(c.mu.indexes, i, index)
	return nil
}

// acquire pins the newest checkpoint at or below index and returns it
// with the function that unpins it; ok is false when there is none.
func (c *checkpoints) acquire(index uint64) (at uint64, path string, release func(), ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	i, found := slices.BinarySearch(c.mu.indexes, index)
	if found {
		i++
	}
	if i == 0 {
		return 0, "", nil, false
	}
	at = c.mu.indexes[i-1]
	c.mu.pins[at]++
	var once sync.Once
	return at, c.path(at), func() { once.Do(func() { c.unpin(at) }) }, true
}

func (c *checkpoints) unpin(at uint64) {
	c.mu.Lock()
	c.mu.pins[at]--
	remove := c.mu.pins[at] == 0 && c.mu.doomed[at]
	if c.mu.pins[at] == 0 {
		delete(c.mu.pins, at)
		delete(c.mu.doomed, at)
	}
	c.mu.Unlock()
	if remove {
		_ = os.RemoveAll(c.path(at))
	}
}

// prune keeps the dense newest checkpoints and, below them, up to sparse
// older ones at least gap entries apart (walking from the newest down);
// it removes the rest. A pinned one goes when its last reader lets go. It
// returns how many it removed.
func (c *checkpoints) prune(dense, sparse int, gap uint64) (int, error) {
	c.mu.Lock()
	var kept, gone []uint64
	n := len(c.mu.indexes)
	last := uint64(0) // the oldest kept so far; 0: none yet
	for i := n - 1; i >= 0; i-- {
		idx := c.mu.indexes[i]
		switch {
		case n-i <= dense:
		case sparse > 0 && (last == 0 || last-idx >= gap):
			sparse--
		default:
			if c.mu.pins[idx] > 0 {
				c.mu.doomed[idx] = true
			} else {
				gone = append(gone, idx)
			}
			continue
		}
		kept = append(kept, idx)
		last = idx
	}
	slices.Reverse(kept)
	c.mu.indexes = kept
	c.mu.Unlock()
	var errs []error
	for _, idx := range gone {
		errs = append(errs, os.RemoveAll(c.path(idx)))
	}
	return len(gone), errors.Join(errs...)
}

// bytes returns the disk space the checkpoints hold, each file counted
// once however many checkpoints link it. Tables still shared with the
// live store are counted too: they are what pruning would not free.
func (c *checkpoints) bytes() int64 {
	type inode struct{ dev, ino uint64 }
	seen := map[inode]bool{}
	var total int64
	_ = filepath.WalkDir(c.dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return nil
		}
		if st, ok := fi.Sys().(*syscall.Stat_t); ok {
			k := inode{uint64(st.Dev), st.Ino}
			if seen[k] {
				return nil
			}
			seen[k] = true
		}
		total += fi.Size()
		return nil
	})
	return total
}
