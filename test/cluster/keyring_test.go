// This file holds the root keyring's end-to-end tests on a real
// loopback cluster: replication to every server and to one that joins
// later (N5), removal everywhere, and key material never in the log, the
// state store or the event stream (N14).

package cluster

import (
	"bytes"
	"context"
	"encoding/base64"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ordoplane/ordo/storage/keystore"
	"github.com/ordoplane/ordo/test/testagent"
)

type rootKey struct {
	KeyID string
	State string
}

func keys(t *testing.T, c *testagent.Client, addr string) []rootKey {
	t.Helper()
	var list []rootKey
	if code, err := c.GetJSON(addr, "/v1/operator/keyring/keys", &list); err != nil || code != 200 {
		t.Fatalf("list keys: %d %v", code, err)
	}
	return list
}

func do(t *testing.T, method, url string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(method, url, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func hasAll(s *testagent.Server, ids []string) bool {
	ks, err := keystore.Open(filepath.Join(s.A.DataDir(), "keystore"))
	if err != nil {
		return false
	}
	for _, id := range ids {
		if _, err := os.Stat(filepath.Join(ks.Dir(), id+".json")); err != nil {
			return false
		}
	}
	return true
}

// TestReplicationJoinRemove is N5 end to end on three loopback servers:
// the first leader creates the first key, rotations reach every server's
// keystore, a server that joins later gets every key, a removed key's
// file goes from every server, the active key cannot be removed, and the
// material is nowhere in the state store, raft log or event stream (N14).
func TestReplicationJoinRemove(t *testing.T) {
	c := testagent.NewClient(10 * time.Second)
	defer c.Close()
	s1 := startServer(t, "s1", nil, noScheduler)
	s2 := startServer(t, "s2", []string{s1.HTTP}, noScheduler)
	s3 := startServer(t, "s3", []string{s1.HTTP}, noScheduler)
	servers := []*testagent.Server{s1, s2, s3}
	leader := testagent.WaitForLeader(t, servers)
	addr := "http://" + leader.A.HTTPAddr()

	var ids []string
	testagent.WaitFor(t, 30*time.Second, "the first root key", func() bool {
		var list []rootKey
		code, err := c.GetJSON(leader.A.HTTPAddr(), "/v1/operator/keyring/keys", &list)
		if err != nil || code != 200 || len(list) != 1 {
			return false
		}
		ids = []string{list[0].KeyID}
		return list[0].State == "active"
	})
	for range 2 {
		// 503 "no cluster leader": an election under load; the rotation
		// reached no log, so it is asked again.
		testagent.WaitFor(t, 30*time.Second, "a rotation", func() bool {
			code, body := do(t, http.MethodPut, addr+"/v1/operator/keyring/rotate")
			if code != 200 && code != http.StatusServiceUnavailable {
				t.Fatalf("rotate: %d %s", code, body)
			}
			return code == 200
		})
	}
	list := keys(t, c, leader.A.HTTPAddr())
	if len(list) != 3 {
		t.Fatalf("keys after two rotations: %v", list)
	}
	ids = nil
	var active string
	for _, k := range list {
		ids = append(ids, k.KeyID)
		if k.State == "active" {
			active = k.KeyID
		}
	}
	for _, s := range servers {
		testagent.WaitFor(t, 30*time.Second, s.Name+" holding every key", func() bool { return hasAll(s, ids) })
	}

	// A server that joins later gets every key.
	s4 := startServer(t, "s4", []string{s1.HTTP}, noScheduler)
	testagent.WaitFor(t, 60*time.Second, "s4 holding every key", func() bool { return hasAll(s4, ids) })

	// The active key cannot be removed; an inactive one goes everywhere.
	if code, body := do(t, http.MethodDelete, addr+"/v1/operator/keyring/key/"+active); code != 400 || !strings.Contains(body, "key_id") {
		t.Fatalf("removing the active key: %d %s", code, body)
	}
	victim := ids[0]
	if victim == active {
		victim = ids[1]
	}
	if code, body := do(t, http.MethodDelete, addr+"/v1/operator/keyring/key/"+victim); code != 200 {
		t.Fatalf("remove %s: %d %s", victim, code, body)
	}
	for _, s := range append(servers, s4) {
		testagent.WaitFor(t, 30*time.Second, s.Name+" dropping "+victim, func() bool {
			_, err := os.Stat(filepath.Join(s.A.DataDir(), "keystore", victim+".json"))
			return os.IsNotExist(err)
		})
	}

	// The material must not appear in the log, the state store or the
	// event stream, raw or base64-encoded.
	var secrets [][]byte
	for _, id := range ids {
		if id == victim {
			continue
		}
		ks, _ := keystore.Open(filepath.Join(leader.A.DataDir(), "keystore"))
		k, err := ks.Get(id)
		if err != nil {
			t.Fatal(err)
		}
		m := k.Material()
		secrets = append(secrets, m, []byte(base64.StdEncoding.EncodeToString(m)), []byte(base64.RawURLEncoding.EncodeToString(m)))
	}
	for _, s := range append(servers, s4) {
		for _, sub := range []string{"state", "raft"} {
			root := filepath.Join(s.A.DataDir(), sub)
			_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
				if err != nil || d.IsDir() {
					return nil
				}
				b, err := os.ReadFile(p)
				if err != nil {
					return nil
				}
				for _, sec := range secrets {
					if bytes.Contains(b, sec) {
						t.Errorf("key material in %s", p)
					}
				}
				return nil
			})
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, addr+"/v1/operator/log/stream?index=1", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	stream, _ := io.ReadAll(resp.Body) // until the deadline
	resp.Body.Close()
	if !bytes.Contains(stream, []byte("RootKeyUpserted")) {
		t.Fatalf("the stream has no root key events: %.300s", stream)
	}
	for _, sec := range secrets {
		if bytes.Contains(stream, sec) {
			t.Fatal("key material in the event stream")
		}
	}

	// The material endpoint answers servers only.
	if code, _ := do(t, http.MethodGet, addr+"/v1/operator/keyring/key/"+active); code != 403 {
		t.Fatalf("material to a non-server: %d", code)
	}
}
