package keystore

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/ed25519"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
)

// Algorithm is the only algorithm root keys use (events.RootKeyAlgorithm).
const Algorithm = "aes256-gcm"

// KeySize is the size of root key material in bytes (AES-256).
const KeySize = 32

// NonceSize is the size of the random nonce prepended to every ciphertext.
const NonceSize = 12

// identityInfo separates the Ed25519 seed derived from a root key from any
// other use of its material.
const identityInfo = "ordo workload identity ed25519 v1"

// ErrDecrypt is returned when a ciphertext does not open: a wrong key,
// wrong additional data, or tampered bytes.
var ErrDecrypt = errors.New("keystore: ciphertext does not open with this key")

// validID bounds key ids to what is safe as a file name.
var validID = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// ValidID reports whether id can name a root key.
func ValidID(id string) bool { return validID.MatchString(id) }

// Key is one root key: its stable metadata and its material.
type Key struct {
	ID        string
	Algorithm string
	// CreateTime is the leader time the key was created, Unix ns.
	CreateTime int64
	// c holds the secrets behind a pointer, so printing a Key value shows
	// an address, never the material or the cipher's key schedule.
	c *keyCrypto
}

type keyCrypto struct {
	material secret
	aead     cipher.AEAD
	signer   ed25519.PrivateKey
}

// Generate returns a new key of random material.
func Generate(id string, createTime int64) (*Key, error) {
	m := make([]byte, KeySize)
	if _, err := rand.Read(m); err != nil {
		return nil, fmt.Errorf("generate root key %s: %w", id, err)
	}
	return NewKey(id, createTime, m)
}

// NewKey returns the key with material m (KeySize bytes).
func NewKey(id string, createTime int64, m []byte) (*Key, error) {
	if !ValidID(id) {
		return nil, fmt.Errorf("keystore: invalid key id %q", id)
	}
	if len(m) != KeySize {
		return nil, fmt.Errorf("keystore: key %s material is %d bytes, want %d", id, len(m), KeySize)
	}
	block, err := aes.NewCipher(m)
	if err != nil {
		return nil, fmt.Errorf("key %s: %w", id, err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("key %s: %w", id, err)
	}
	seed, err := hkdf.Key(sha256.New, m, []byte(id), identityInfo, ed25519.SeedSize)
	if err != nil {
		return nil, fmt.Errorf("key %s: derive signing key: %w", id, err)
	}
	return &Key{ID: id, Algorithm: Algorithm, CreateTime: createTime,
		c: &keyCrypto{material: secret(append([]byte(nil), m...)), aead: aead, signer: ed25519.NewKeyFromSeed(seed)}}, nil
}

// Material returns a copy of the key material.
func (k *Key) Material() []byte { return append([]byte(nil), k.c.material...) }

// Seal encrypts plaintext with additional data aad: a random 96-bit nonce
// followed by the AES-256-GCM ciphertext and tag.
func (k *Key) Seal(plaintext, aad []byte) ([]byte, error) {
	out := make([]byte, NonceSize, NonceSize+len(plaintext)+k.c.aead.Overhead())
	if _, err := rand.Read(out); err != nil {
		return nil, fmt.Errorf("nonce: %w", err)
	}
	return k.c.aead.Seal(out, out[:NonceSize], plaintext, aad), nil
}

// Open decrypts what Seal returned; ErrDecrypt when it does not open.
func (k *Key) Open(ciphertext, aad []byte) ([]byte, error) {
	if len(ciphertext) < NonceSize+k.c.aead.Overhead() {
		return nil, fmt.Errorf("key %s: ciphertext of %d bytes is too short: %w", k.ID, len(ciphertext), ErrDecrypt)
	}
	out, err := k.c.aead.Open(nil, ciphertext[:NonceSize], ciphertext[NonceSize:], aad)
	if err != nil {
		return nil, fmt.Errorf("key %s: %w", k.ID, ErrDecrypt)
	}
	return out, nil
}

// Signer returns the Ed25519 private key derived from the material
// (HKDF-SHA256, salt the key id); it signs workload identities.
func (k *Key) Signer() ed25519.PrivateKey { return k.c.signer }

// PublicKey returns the public half of Signer, published in the JWKS.
func (k *Key) PublicKey() ed25519.PublicKey { return k.c.signer.Public().(ed25519.PublicKey) }

// String shows the key id only.
func (k *Key) String() string { return "root key " + k.ID }

// GoString shows the key id only.
func (k *Key) GoString() string { return k.String() }

// LogValue implements slog.LogValuer: the key id only.
func (k *Key) LogValue() slog.Value { return slog.StringValue(k.ID) }

// MarshalJSON shows the metadata only, never the material.
func (k *Key) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		KeyID      string
		Algorithm  string
		CreateTime int64
	}{k.ID, k.Algorithm, k.CreateTime})
}

// secret is key material that formats as "<redacted>" however it is
// printed, so not even a Key value printed by accident shows it.
type secret []byte

// Format implements fmt.Formatter.
func (secret) Format(f fmt.State, _ rune) { _, _ = f.Write([]byte("<redacted>")) }
