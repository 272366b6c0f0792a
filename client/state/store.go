package state

import (
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// FormatVersion is the version of the records this package writes.
const FormatVersion = 1

// Store is the client's state directory. Build it with Open.
type Store struct {
	dir string
}

// Open opens (creating it if needed) the client state under dataDir.
func Open(dataDir string) (*Store, error) {
	if dataDir == "" {
		return nil, errors.New("client state: data dir is required")
	}
	dir := filepath.Join(dataDir, "client")
	if err := os.MkdirAll(filepath.Join(dir, "allocs"), 0o755); err != nil {
		return nil, fmt.Errorf("client state: %w", err)
	}
	return &Store{dir: dir}, nil
}

// Dir returns the state directory (<data dir>/client).
func (s *Store) Dir() string { return s.dir }

// NodeID returns the node's id, minting and storing one on first use.
func (s *Store) NodeID() (string, error) {
	path := filepath.Join(s.dir, "node-id")
	b, err := os.ReadFile(path)
	if err == nil {
		if id := strings.TrimSpace(string(b)); id != "" {
			return id, nil
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("client state: read node id: %w", err)
	}
	id := newUUID()
	if err := writeAtomic(path, []byte(id+"\n")); err != nil {
		return "", fmt.Errorf("client state: write node id: %w", err)
	}
	return id, nil
}

// newUUID returns a random version 4 UUID, as Nomad's node ids are.
func newUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand panics instead)
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

func (s *Store) allocPath(id string) string {
	return filepath.Join(s.dir, "allocs", id+".json")
}

// validID refuses alloc ids that could escape the directory.
func validID(id string) error {
	if id == "" || strings.ContainsAny(id, `/\`) || id == "." || id == ".." || strings.HasPrefix(id, ".") {
		return fmt.Errorf("client state: invalid alloc id %q", id)
	}
	return nil
}

// PutAlloc stores rec, replacing the allocation's earlier record.
func (s *Store) PutAlloc(rec *Alloc) error {
	id := rec.Alloc.ID
	if err := validID(id); err != nil {
		return err
	}
	rec.Version = FormatVersion
	b, err := json.Marshal(rec)
	if err != nil {
		return fmt.Errorf("client state: encode alloc %s: %w", id, err)
	}
	if err := writeAtomic(s.allocPath(id), b); err != nil {
		return fmt.Errorf("client state: write alloc %s: %w", id, err)
	}
	return nil
}

// DeleteAlloc removes an allocation's record; a missing one is no error.
func (s *Store) DeleteAlloc(id string) error {
	if err := validID(id); err != nil {
		return err
	}
	if err := os.Remove(s.allocPath(id)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("client state: delete alloc %s: %w", id, err)
	}
	return syncDir(filepath.Join(s.dir, "allocs"))
}

// Allocs returns every stored allocation record, by alloc id. Records that
// cannot be read or decoded are left in place and reported in bad, by
// file name; err is for the directory itself.
func (s *Store) Allocs() (recs []*Alloc, bad map[string]error, err error) {
	dir := filepath.Join(s.dir, "allocs")
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, nil, fmt.Errorf("client state: %w", err)
	}
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".json") || strings.HasPrefix(name, ".") {
			continue
		}
		rec, err := readAlloc(filepath.Join(dir, name))
		if err != nil {
			if bad == nil {
				bad = map[string]error{}
			}
			bad[name] = err
			continue
		}
		recs = append(recs, rec)
	}
	slices.SortFunc(recs, func(a, b *Alloc) int { return strings.Compare(a.Alloc.ID, b.Alloc.ID) })
	return recs, bad, nil
}

func readAlloc(path string) (*Alloc, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var rec Alloc
	if err := json.Unmarshal(b, &rec); err != nil {
		return nil, fmt.Errorf("decode: %w", err)
	}
	switch {
	case rec.Version != FormatVersion:
		return nil, fmt.Errorf("format version %d, want %d", rec.Version, FormatVersion)
	case rec.Alloc.ID+".json" != filepath.Base(path):
		return nil, fmt.Errorf("holds alloc %q", rec.Alloc.ID)
	}
	return &rec, nil
}

// writeAtomic replaces path with data durably: temporary file, fsync,
// rename, fsync of the directory.
func writeAtomic(path string, data []byte) error {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer os.Remove(tmp) // after a successful rename, a no-op
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	return syncDir(dir)
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", dir, err)
	}
	return nil
}
