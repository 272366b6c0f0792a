// Package variablestest owns test helpers for variables: an AES-256-GCM
// Encrypter over keys held in memory, standing in for the keyring in
// tests and benchmarks. It is imported by tests and tools only.
//
// # Usage
//
//	enc := variablestest.NewEncrypter(t)   // one random active key
//	enc.Rotate(t)                          // a new active key; old ones still decrypt
//
// # Concurrency
//
// An Encrypter is safe for concurrent use.
//
// # Invariants
//
//   - Encrypt seals with a fresh random 96-bit nonce under the active key
//     and returns nonce||ciphertext||tag; Decrypt opens with the key named.
package variablestest

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/ordoplane/ordo/commands/variables"
)

// Encrypter is a real AES-256-GCM variables.Encrypter over in-memory keys.
type Encrypter struct {
	mu struct {
		sync.Mutex
		active string
		keys   map[string]cipher.AEAD
		n      int
	}
}

var _ variables.Encrypter = (*Encrypter)(nil)

// NewEncrypter returns an Encrypter with one random active key.
func NewEncrypter(tb testing.TB) *Encrypter {
	tb.Helper()
	e := &Encrypter{}
	e.mu.keys = map[string]cipher.AEAD{}
	e.Rotate(tb)
	return e
}

// Rotate adds a random key and makes it the active one; it returns its id.
func (e *Encrypter) Rotate(tb testing.TB) string {
	tb.Helper()
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		tb.Fatal(err)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.mu.n++
	id := fmt.Sprintf("test-key-%d", e.mu.n)
	if err := e.addLocked(id, key); err != nil {
		tb.Fatal(err)
	}
	e.mu.active = id
	return id
}

// AddKey adds key (32 bytes) as id and makes it active, for tests that
// need a known key.
func (e *Encrypter) AddKey(id string, key []byte) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if err := e.addLocked(id, key); err != nil {
		return err
	}
	e.mu.active = id
	return nil
}

func (e *Encrypter) addLocked(id string, key []byte) error {
	if len(key) != 32 {
		return fmt.Errorf("key %s: %d bytes, want 32 (AES-256)", id, len(key))
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return err
	}
	e.mu.keys[id] = aead
	return nil
}

// Active returns the active key's id.
func (e *Encrypter) Active() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.mu.active
}

// Encrypt implements variables.Encrypter.
func (e *Encrypter) Encrypt(plaintext, aad []byte) (string, []byte, error) {
	e.mu.Lock()
	id, aead := e.mu.active, e.mu.keys[e.mu.active]
	e.mu.Unlock()
	nonce := make([]byte, aead.NonceSize(), aead.NonceSize()+len(plaintext)+aead.Overhead())
	if _, err := rand.Read(nonce); err != nil {
		return "", nil, err
	}
	return id, aead.Seal(nonce, nonce, plaintext, aad), nil
}

// ErrUnknownKey is Decrypt's error for a key id it does not hold.
var ErrUnknownKey = errors.New("variablestest: unknown key")

// Decrypt implements variables.Encrypter.
func (e *Encrypter) Decrypt(keyID string, ciphertext, aad []byte) ([]byte, error) {
	e.mu.Lock()
	aead, ok := e.mu.keys[keyID]
	e.mu.Unlock()
	if !ok {
		return nil, fmt.Errorf("%w %q", ErrUnknownKey, keyID)
	}
	if len(ciphertext) < aead.NonceSize() {
		return nil, errors.New("variablestest: ciphertext shorter than a nonce")
	}
	ns := aead.NonceSize()
	return aead.Open(nil, ciphertext[:ns], ciphertext[ns:], aad)
}
