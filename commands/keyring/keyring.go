package keyring

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/segmentio/ksuid"

	"github.com/ordoplane/ordo/clock"
	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/keyring"
	"github.com/ordoplane/ordo/storage/keystore"
	"github.com/ordoplane/ordo/storage/kv"
)

// Encrypter encrypts variable items with the active root key. It is the
// interface the variables engine codes against; *Keyring implements it.
type Encrypter interface {
	Encrypt(plaintext, aad []byte) (keyID string, ciphertext []byte, err error)
	Decrypt(keyID string, ciphertext, aad []byte) ([]byte, error)
}

var _ Encrypter = (*Keyring)(nil)

// ErrKeyMissing is returned when the key a ciphertext names is not (yet)
// in this server's keystore; replication fetches it.
var ErrKeyMissing = errors.New("keyring: root key not in this server's keystore")

// Config configures a Keyring.
type Config struct {
	// Keystore holds this server's key material; required.
	Keystore *keystore.Store
	// Store is read for key metadata; required.
	Store *kv.Store
	// Pipeline runs rotate and remove; nil makes the Keyring read-only
	// (encrypt, decrypt, identities).
	Pipeline *commands.Pipeline
	// Clock stamps new keys' create time; default clock.System{}.
	Clock clock.Clock
	// IDs mints key ids; default ksuid.
	IDs func() string
	// Logger; default slog.Default().
	Logger *slog.Logger
}

// Keyring is a server's root keyring: metadata from the log, material
// from the keystore. It encrypts and decrypts variables, rotates and
// removes keys (on the leader) and signs and verifies workload identities.
type Keyring struct {
	cfg Config
}

// New returns a Keyring.
func New(cfg Config) (*Keyring, error) {
	if cfg.Keystore == nil || cfg.Store == nil {
		return nil, errors.New("keyring: Keystore and Store are required")
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.System{}
	}
	if cfg.IDs == nil {
		cfg.IDs = func() string { return ksuid.New().String() }
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	return &Keyring{cfg: cfg}, nil
}

// Keystore returns the keystore.
func (k *Keyring) Keystore() *keystore.Store { return k.cfg.Keystore }

func (k *Keyring) view() projections.View { return projections.NewView(k.cfg.Store) }

// Encrypt implements Encrypter: AES-256-GCM under the active root key, a
// random 96-bit nonce prepended to the ciphertext.
func (k *Keyring) Encrypt(plaintext, aad []byte) (string, []byte, error) {
	meta, err := keyring.Active(k.view())
	if err != nil {
		return "", nil, fmt.Errorf("encrypt: %w", err)
	}
	key, err := k.material(meta.KeyID)
	if err != nil {
		return "", nil, fmt.Errorf("encrypt: %w", err)
	}
	ct, err := key.Seal(plaintext, aad)
	if err != nil {
		return "", nil, fmt.Errorf("encrypt with %s: %w", meta.KeyID, err)
	}
	return meta.KeyID, ct, nil
}

// Decrypt implements Encrypter.
func (k *Keyring) Decrypt(keyID string, ciphertext, aad []byte) ([]byte, error) {
	key, err := k.material(keyID)
	if err != nil {
		return nil, fmt.Errorf("decrypt: %w", err)
	}
	return key.Open(ciphertext, aad)
}

// material returns key id from the keystore, ErrKeyMissing when absent.
func (k *Keyring) material(id string) (*keystore.Key, error) {
	key, err := k.cfg.Keystore.Get(id)
	if errors.Is(err, keystore.ErrNotFound) {
		return nil, fmt.Errorf("key %s: %w", id, ErrKeyMissing)
	}
	return key, err
}

// Rotate generates a new root key, writes it to this (the leader's)
// keystore and then proposes its metadata as the active key; full also
// re-encrypts every variable (N12). It returns the new key's id.
func (k *Keyring) Rotate(ctx context.Context, req commands.Request, full bool) (commands.Outcome, string, error) {
	return k.rotate(ctx, req, Rotate{Full: full})
}

// Initialize creates the first root key when none is active; a leader
// runs it when it gains leadership. It returns the active key's id.
func (k *Keyring) Initialize(ctx context.Context) (string, error) {
	if act, err := keyring.Active(k.view()); err == nil {
		return act.KeyID, nil
	}
	_, id, err := k.rotate(ctx, commands.Request{Actor: "system:leader"}, Rotate{IfNone: true})
	if err != nil {
		return "", err
	}
	act, err := keyring.Active(k.view())
	if err != nil {
		return "", err
	}
	if act.KeyID != id {
		_ = k.cfg.Keystore.Delete(id) // another key won; this one was never recorded
	}
	return act.KeyID, nil
}

func (k *Keyring) rotate(ctx context.Context, req commands.Request, c Rotate) (commands.Outcome, string, error) {
	if k.cfg.Pipeline == nil {
		return commands.Outcome{}, "", errors.New("keyring: read-only keyring cannot rotate")
	}
	key, err := keystore.Generate(k.cfg.IDs(), k.cfg.Clock.Now().UnixNano())
	if err != nil {
		return commands.Outcome{}, "", err
	}
	if err := k.cfg.Keystore.Put(key); err != nil {
		return commands.Outcome{}, "", err
	}
	c.KeyID, c.CreateTime, c.PublicKey = key.ID, key.CreateTime, key.PublicKey()
	out, err := k.cfg.Pipeline.Run(ctx, "keyring.rotate", req, c)
	if err != nil {
		if commands.Status(err) < 500 {
			// Refused for sure (a racing rotation): the key was never recorded.
			_ = k.cfg.Keystore.Delete(key.ID)
		}
		// Otherwise the outcome is unknown; an unrecorded file is harmless.
		return out, "", fmt.Errorf("rotate: %w", err)
	}
	k.cfg.Logger.Info("root key rotated", "key_id", key.ID, "full", c.Full)
	return out, key.ID, nil
}

// Remove deletes a root key's metadata (refusing the active key); every
// server removes the key's file once the delete applies.
func (k *Keyring) Remove(ctx context.Context, req commands.Request, id string) (commands.Outcome, error) {
	if k.cfg.Pipeline == nil {
		return commands.Outcome{}, errors.New("keyring: read-only keyring cannot remove keys")
	}
	return k.cfg.Pipeline.Run(ctx, "keyring.remove", req, Remove{KeyID: id})
}

// Material returns key id's material for another server (the replication
// endpoint); ErrKeyMissing when this server lacks it.
func (k *Keyring) Material(id string) (*keystore.Key, error) { return k.material(id) }

// Pinned is an Encrypter fixed to the key that was active when Pin made
// it, for a batch of encryptions that should not read the keyring for
// each one (a full rotation's page). Its KeyID and ModifyIndex let a
// command refuse the batch if the key stopped being active since.
type Pinned struct {
	k *Keyring
	// KeyID and ModifyIndex are the pinned key's id and its row's modify
	// index when it was pinned.
	KeyID       string
	ModifyIndex uint64
	key         *keystore.Key
}

// Pin returns an Encrypter that encrypts with the key active now.
func (k *Keyring) Pin() (*Pinned, error) {
	meta, err := keyring.Active(k.view())
	if err != nil {
		return nil, fmt.Errorf("pin: %w", err)
	}
	key, err := k.material(meta.KeyID)
	if err != nil {
		return nil, fmt.Errorf("pin: %w", err)
	}
	return &Pinned{k: k, KeyID: meta.KeyID, ModifyIndex: meta.ModifyIndex, key: key}, nil
}

// Encrypt implements Encrypter with the pinned key.
func (p *Pinned) Encrypt(plaintext, aad []byte) (string, []byte, error) {
	ct, err := p.key.Seal(plaintext, aad)
	if err != nil {
		return "", nil, fmt.Errorf("encrypt with %s: %w", p.KeyID, err)
	}
	return p.KeyID, ct, nil
}

// Decrypt implements Encrypter with any key of the keystore.
func (p *Pinned) Decrypt(keyID string, ciphertext, aad []byte) ([]byte, error) {
	return p.k.Decrypt(keyID, ciphertext, aad)
}
