package keystore

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
)

// ErrNotFound is returned for a key this server's keystore lacks.
var ErrNotFound = errors.New("keystore: key not found")

// File is the on-disk form of a key: stable metadata and the material,
// base64-encoded (encoding/json's form of []byte). Fields that change, such
// as the key's state, are not here: they live in the log.
type File struct {
	KeyID      string
	Algorithm  string
	CreateTime int64
	Material   []byte
}

// Store is a directory of key files.
type Store struct {
	dir string
	mu  struct {
		sync.Mutex
		cache map[string]*Key
	}
}

// Open returns the store in dir, creating it (mode 0700) if needed.
func Open(dir string) (*Store, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("keystore dir: %w", err)
	}
	s := &Store{dir: dir}
	s.mu.cache = map[string]*Key{}
	return s, nil
}

// Dir returns the store's directory.
func (s *Store) Dir() string { return s.dir }

func (s *Store) path(id string) string { return filepath.Join(s.dir, id+".json") }

// Put writes k atomically: a temporary file, synced, renamed over the
// key's file, then the directory synced.
func (s *Store) Put(k *Key) error {
	b, err := json.MarshalIndent(File{KeyID: k.ID, Algorithm: k.Algorithm, CreateTime: k.CreateTime, Material: k.Material()}, "", "  ")
	if err != nil {
		return fmt.Errorf("encode key %s: %w", k.ID, err)
	}
	tmp, err := os.CreateTemp(s.dir, "."+k.ID+".tmp-*")
	if err != nil {
		return fmt.Errorf("write key %s: %w", k.ID, err)
	}
	defer os.Remove(tmp.Name()) // after a successful rename: nothing there
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return fmt.Errorf("write key %s: %w", k.ID, err)
	}
	if _, err := tmp.Write(append(b, '\n')); err != nil {
		tmp.Close()
		return fmt.Errorf("write key %s: %w", k.ID, err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("sync key %s: %w", k.ID, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write key %s: %w", k.ID, err)
	}
	if err := os.Rename(tmp.Name(), s.path(k.ID)); err != nil {
		return fmt.Errorf("install key %s: %w", k.ID, err)
	}
	if err := syncDir(s.dir); err != nil {
		return fmt.Errorf("sync keystore dir: %w", err)
	}
	s.mu.Lock()
	s.mu.cache[k.ID] = k
	s.mu.Unlock()
	return nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// Get returns the key id, ErrNotFound when this server has no file for it.
func (s *Store) Get(id string) (*Key, error) {
	if !ValidID(id) {
		return nil, fmt.Errorf("key %q: %w", id, ErrNotFound)
	}
	s.mu.Lock()
	k, ok := s.mu.cache[id]
	s.mu.Unlock()
	if ok {
		return k, nil
	}
	b, err := os.ReadFile(s.path(id))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("key %s: %w", id, ErrNotFound)
	} else if err != nil {
		return nil, fmt.Errorf("read key %s: %w", id, err)
	}
	var f File
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("decode key file %s: %w", id, err)
	}
	if f.KeyID != id {
		return nil, fmt.Errorf("key file %s holds key %q", id, f.KeyID)
	}
	k, err = NewKey(f.KeyID, f.CreateTime, f.Material)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.mu.cache[id] = k
	s.mu.Unlock()
	return k, nil
}

// Has reports whether the store holds key id.
func (s *Store) Has(id string) bool {
	_, err := s.Get(id)
	return err == nil
}

// Delete removes key id's file; a missing file is not an error.
func (s *Store) Delete(id string) error {
	if !ValidID(id) {
		return fmt.Errorf("keystore: invalid key id %q", id)
	}
	s.mu.Lock()
	delete(s.mu.cache, id)
	s.mu.Unlock()
	if err := os.Remove(s.path(id)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("remove key %s: %w", id, err)
	}
	return syncDir(s.dir)
}

// IDs returns the ids of the keys on disk, sorted.
func (s *Store) IDs() ([]string, error) {
	ents, err := os.ReadDir(s.dir)
	if err != nil {
		return nil, fmt.Errorf("list keystore: %w", err)
	}
	var out []string
	for _, e := range ents {
		name := e.Name()
		if e.IsDir() || strings.HasPrefix(name, ".") || !strings.HasSuffix(name, ".json") {
			continue
		}
		out = append(out, strings.TrimSuffix(name, ".json"))
	}
	sort.Strings(out)
	return out, nil
}
