package events

// KindRootKey is the entity kind of a root key; its value is the key id.
const KindRootKey = "root_key"

// The states of a root key.
const (
	// RootKeyActive is the one key that encrypts new variables and signs
	// new workload identities.
	RootKeyActive = "active"
	// RootKeyInactive is a key that only decrypts and verifies.
	RootKeyInactive = "inactive"
	// RootKeyRekeying is a key whose variables a full rotation is
	// re-encrypting with the active key; it becomes inactive when done.
	RootKeyRekeying = "rekeying"
	// RootKeyDeprecated is a key kept only to verify identities it signed.
	RootKeyDeprecated = "deprecated"
)

// RootKeyAlgorithm is the only algorithm root keys use (N14).
const RootKeyAlgorithm = "aes256-gcm"

// RootKeyMeta is a root key's metadata as the log carries it. The key
// material never is in the log: it lives only in each server's keystore.
type RootKeyMeta struct {
	KeyID     string `msgpack:"id" json:"KeyID"`
	Algorithm string `msgpack:"alg" json:"Algorithm"`
	State     string `msgpack:"st" json:"State"`
	// CreateTime is the leader time the key was created, Unix ns.
	CreateTime int64 `msgpack:"ct" json:"CreateTime"`
	// PublishTime is the leader time from which the key signs, Unix ns;
	// 0 publishes it at once.
	PublishTime int64 `msgpack:"pt,omitempty" json:"PublishTime"`
	// PublicKey is the Ed25519 public key that verifies the workload
	// identities the key signs (derived from the material; public, in the
	// JWKS). A server that fetched the material checks it against this.
	PublicKey []byte `msgpack:"pub,omitempty" json:"PublicKey"`
}

// RootKeyUpserted records a root key's metadata created or changed.
type RootKeyUpserted struct {
	Key RootKeyMeta `msgpack:"key" json:"Key"`
}

// EntityKeys implements Payload.
func (p *RootKeyUpserted) EntityKeys() []Key { return []Key{{Kind: KindRootKey, Value: p.Key.KeyID}} }

// RootKeyDeleted records a root key removed; every server then deletes its
// keystore file (outside apply).
type RootKeyDeleted struct {
	KeyID string `msgpack:"id" json:"KeyID"`
}

// EntityKeys implements Payload.
func (p *RootKeyDeleted) EntityKeys() []Key { return []Key{{Kind: KindRootKey, Value: p.KeyID}} }

func init() {
	Register(Type{Name: "RootKeyUpserted", Version: 1, Topic: "RootKey",
		New: func() Payload { return new(RootKeyUpserted) }})
	Register(Type{Name: "RootKeyDeleted", Version: 1, Topic: "RootKey",
		New: func() Payload { return new(RootKeyDeleted) }})
}
