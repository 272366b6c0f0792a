package keystore_test

import (
	"bytes"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/storage/keystore"
)

// TestFileFormat is N14's keystore format: one file per key, mode 0600,
// the material base64-encoded beside the stable metadata (id, algorithm,
// create time) and no field that changes later, such as the state.
func TestFileFormat(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "keystore")
	ks, err := keystore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	k, err := keystore.Generate("2TzMX6QwYSRWVAlRWX2zTqU0sRq", 1700000000000000000)
	if err != nil {
		t.Fatal(err)
	}
	if err := ks.Put(k); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, k.ID+".json")
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v, want 0600", st.Mode().Perm())
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	var fields []string
	for f := range m {
		fields = append(fields, f)
	}
	if want := []string{"Algorithm", "CreateTime", "KeyID", "Material"}; !sameSet(fields, want) {
		t.Fatalf("file fields %v, want exactly %v (no state or other changing fields)", fields, want)
	}
	if m["Algorithm"] != events.RootKeyAlgorithm || keystore.Algorithm != events.RootKeyAlgorithm {
		t.Fatalf("algorithm %v", m["Algorithm"])
	}
	mat, err := base64.StdEncoding.DecodeString(m["Material"].(string))
	if err != nil || !bytes.Equal(mat, k.Material()) || len(mat) != 32 {
		t.Fatalf("material not the key's 32 bytes in base64: %v", err)
	}
	// Nothing else in the directory: the temporary file went.
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		t.Fatalf("keystore dir holds %d entries", len(ents))
	}
	// A fresh store reads the file back to the same key.
	ks2, _ := keystore.Open(dir)
	k2, err := ks2.Get(k.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(k2.Material(), k.Material()) || k2.CreateTime != k.CreateTime || !k2.PublicKey().Equal(k.PublicKey()) {
		t.Fatal("key read back differs")
	}
	if ids, _ := ks2.IDs(); !reflect.DeepEqual(ids, []string{k.ID}) {
		t.Fatalf("IDs = %v", ids)
	}
	if err := ks2.Delete(k.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := ks2.Get(k.ID); !errors.Is(err, keystore.ErrNotFound) {
		t.Fatalf("Get after Delete = %v", err)
	}
	if _, err := ks2.Get("../etc/passwd"); !errors.Is(err, keystore.ErrNotFound) {
		t.Fatalf("Get of a path = %v", err)
	}
}

func sameSet(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	seen := map[string]bool{}
	for _, x := range a {
		seen[x] = true
	}
	for _, x := range b {
		if !seen[x] {
			return false
		}
	}
	return true
}

// TestSealOpen: AES-256-GCM with a random 96-bit nonce in front; the
// additional data binds; another key does not open it.
func TestSealOpen(t *testing.T) {
	k, _ := keystore.Generate("a", 1)
	other, _ := keystore.Generate("b", 1)
	ct, err := k.Seal([]byte("hunter2"), []byte("default/secret/db"))
	if err != nil {
		t.Fatal(err)
	}
	if len(ct) != keystore.NonceSize+len("hunter2")+16 {
		t.Fatalf("ciphertext is %d bytes", len(ct))
	}
	ct2, _ := k.Seal([]byte("hunter2"), []byte("default/secret/db"))
	if bytes.Equal(ct[:12], ct2[:12]) {
		t.Fatal("two seals share a nonce")
	}
	pt, err := k.Open(ct, []byte("default/secret/db"))
	if err != nil || string(pt) != "hunter2" {
		t.Fatalf("Open = %q, %v", pt, err)
	}
	for name, try := range map[string]func() error{
		"wrong aad": func() error { _, err := k.Open(ct, []byte("other")); return err },
		"wrong key": func() error { _, err := other.Open(ct, []byte("default/secret/db")); return err },
		"short":     func() error { _, err := k.Open(ct[:5], nil); return err },
		"tampered": func() error {
			bad := append([]byte(nil), ct...)
			bad[len(bad)-1] ^= 1
			_, err := k.Open(bad, []byte("default/secret/db"))
			return err
		},
	} {
		if err := try(); !errors.Is(err, keystore.ErrDecrypt) {
			t.Errorf("%s: %v, want ErrDecrypt", name, err)
		}
	}
}

// TestNeverFormatsMaterial: logging or printing a key shows its id only.
func TestNeverFormatsMaterial(t *testing.T) {
	k, _ := keystore.Generate("kid", 1)
	b64 := base64.StdEncoding.EncodeToString(k.Material())
	js, _ := json.Marshal(k)
	for _, s := range []string{fmt.Sprint(k), fmt.Sprintf("%v %+v %#v %s %+v %#v", k, k, k, k, *k, *k), string(js), k.LogValue().String()} {
		if strings.Contains(s, b64) || bytes.Contains([]byte(s), k.Material()) || !strings.Contains(s, "kid") {
			t.Fatalf("formatted key %q", s)
		}
	}
	// The signing key is derived deterministically from the material.
	k2, _ := keystore.NewKey("kid", 1, k.Material())
	if !k2.Signer().Equal(k.Signer()) || len(k.PublicKey()) != ed25519.PublicKeySize {
		t.Fatal("signing key not derived from the material")
	}
	k3, _ := keystore.NewKey("kid2", 1, k.Material())
	if k3.PublicKey().Equal(k.PublicKey()) {
		t.Fatal("signing key ignores the key id")
	}
}
