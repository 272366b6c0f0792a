package variables

import (
	"encoding/json"
	"errors"
	"fmt"
)

// Encrypter encrypts variable items with the active root key.
type Encrypter interface {
	Encrypt(plaintext, aad []byte) (keyID string, ciphertext []byte, err error)
	Decrypt(keyID string, ciphertext, aad []byte) ([]byte, error)
}

// ErrNoEncrypter is returned when variables are used on a server that has
// no keyring to encrypt them with.
var ErrNoEncrypter = errors.New("ordo: variables are unavailable: this server has no keyring to encrypt them with")

// ErrKeyring wraps the keyring's failure to encrypt or decrypt (no
// active key yet, key material not replicated here, a ciphertext that does
// not open); the API answers 503.
var ErrKeyring = errors.New("ordo: the keyring could not seal or open the variable")

// Items are a variable's key/value pairs, Nomad's VariableItems.
type Items map[string]string

// AAD is the additional authenticated data that binds a variable's
// ciphertext to its namespace and path.
func AAD(ns, path string) []byte {
	return []byte("ordo/variable\x00" + ns + "\x00" + path)
}

// Seal encrypts items for the variable at path in namespace ns and returns
// the id of the key used and the ciphertext.
func Seal(enc Encrypter, ns, path string, items Items) (keyID string, data []byte, err error) {
	if enc == nil {
		return "", nil, ErrNoEncrypter
	}
	plain, err := json.Marshal(items) // map keys sorted
	if err != nil {
		return "", nil, fmt.Errorf("encode items of %q: %w", path, err)
	}
	keyID, data, err = enc.Encrypt(plain, AAD(ns, path))
	clear(plain)
	if err != nil {
		return "", nil, fmt.Errorf("%w: encrypt variable %q: %w", ErrKeyring, path, err)
	}
	return keyID, data, nil
}

// Open decrypts the items of the variable at path in namespace ns.
func Open(enc Encrypter, ns, path, keyID string, data []byte) (Items, error) {
	if enc == nil {
		return nil, ErrNoEncrypter
	}
	plain, err := enc.Decrypt(keyID, data, AAD(ns, path))
	if err != nil {
		return nil, fmt.Errorf("%w: decrypt variable %q with key %s: %w", ErrKeyring, path, keyID, err)
	}
	var items Items
	err = json.Unmarshal(plain, &items)
	clear(plain)
	if err != nil {
		return nil, fmt.Errorf("decode items of %q: %w", path, err)
	}
	return items, nil
}
