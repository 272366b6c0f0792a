package cluster

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/ordoplane/ordo/cmd/agent"
	"github.com/ordoplane/ordo/commands/acl"
	"github.com/ordoplane/ordo/processors/mirror"
	"github.com/ordoplane/ordo/projections"
	pv "github.com/ordoplane/ordo/projections/variables"
	"github.com/ordoplane/ordo/storage/archive"
	"github.com/ordoplane/ordo/test/testagent"
)

// TestSecretsNeverMirroredInClear is issue 7's "a secret never reaches the
// Kafka mirror in clear", in both record formats: an agent with ACLs
// enabled mirrors to kfake; the management token is bootstrapped, a client
// token created and a variable with a known value written; then every
// record of the topic (key, value and headers, raw bytes) is searched for
// the tokens' SecretIDs, their SHA-256 hashes as stored (hex, and as raw
// and base64 bytes), the variable's plaintext and its ciphertext (raw,
// base64, hex): none may appear. The same search finds the variable's
// path and the client token's AccessorID in the topic and the ciphertext
// in the archive, so it would see a secret too.
func TestSecretsNeverMirroredInClear(t *testing.T) {
	for _, format := range []string{mirror.FormatJSON, mirror.FormatMsgpack} {
		t.Run(format, func(t *testing.T) { secretsNeverMirrored(t, format) })
	}
}

func secretsNeverMirrored(t *testing.T, format string) {
	k := startKafka(t)
	cfg := testagent.ServerConfig(t.TempDir())
	cfg.BootstrapExpect = 1
	cfg.ACL.Enabled = true
	cfg.Mirror = &mirror.Settings{Brokers: k.ListenAddrs(), Topic: "ordo.secrets", Partitions: 3, Format: format}
	a, err := agent.Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Shutdown()
	testagent.WaitFor(t, mirrorTimeout, "a leader", func() bool { return a.Node().IsLeader() })

	var boot struct{ AccessorID, SecretID string }
	testagent.WaitFor(t, mirrorTimeout, "bootstrap", func() bool {
		return callWithToken(t, a, "PUT", "/v1/acl/bootstrap", "", nil, &boot) == 200
	})
	var tok struct{ AccessorID, SecretID string }
	if code := callWithToken(t, a, "PUT", "/v1/acl/token", boot.SecretID, map[string]any{"Name": "alice", "Type": "management"}, &tok); code != 200 {
		t.Fatalf("create token: %d", code)
	}
	const path, plaintext = "secret/db", "correct-horse-battery-staple-7f3a"
	testagent.WaitFor(t, mirrorTimeout, "the variable written (first root key)", func() bool {
		return callWithToken(t, a, "PUT", "/v1/var/"+path, boot.SecretID, map[string]any{"Items": map[string]string{"password": plaintext}}, nil) == 200
	})
	x, err := pv.Get(projections.NewView(a.Store()), "default", path)
	if err != nil {
		t.Fatal(err)
	}
	testagent.WaitFor(t, mirrorTimeout, "mirrored", func() bool { return a.Mirror().Mirrored() == lastPosition(t, a) })

	topic := readTopic(t, k.ListenAddrs(), cfg.Mirror.Topic, a)
	forbidden := map[string][]byte{"variable plaintext": []byte(plaintext),
		"ciphertext": x.Data, "ciphertext base64": []byte(base64.StdEncoding.EncodeToString(x.Data)),
		"ciphertext hex": []byte(hex.EncodeToString(x.Data))}
	for name, secret := range map[string]string{"bootstrap": boot.SecretID, "token": tok.SecretID} {
		hash := acl.HashSecret(secret)
		raw, _ := hex.DecodeString(hash)
		forbidden[name+" SecretID"] = []byte(secret)
		forbidden[name+" SecretID hash"] = []byte(hash)
		forbidden[name+" SecretID hash bytes"] = raw
		forbidden[name+" SecretID hash base64"] = []byte(base64.StdEncoding.EncodeToString(raw))
	}
	for name, b := range forbidden {
		if bytes.Contains(topic, b) {
			t.Errorf("the topic holds the %s", name)
		}
	}
	// The ciphertext is in the archive (the log holds variables only
	// encrypted): the mirror redacts it, and the search does find it in
	// the archive's bytes.
	var archived bytes.Buffer
	if err := archive.Scan(a.Store(), 1, 0, func(_ uint64, _ uint32, b []byte) error { archived.Write(b); return nil }); err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(archived.Bytes(), x.Data) {
		t.Error("the archive lacks the ciphertext: the search would not see it in the topic either")
	}
	for name, b := range map[string][]byte{"variable path": []byte(path), "token AccessorID": []byte(tok.AccessorID),
		"event type": []byte("VariableUpserted")} {
		if !bytes.Contains(topic, b) {
			t.Errorf("the topic lacks the %s: the search would not see a secret either", name)
		}
	}
}

// readTopic returns every record of topic (keys, values, header keys and
// values) concatenated, once the consumer has as many records as a's
// archive has events.
func readTopic(t *testing.T, brokers []string, topic string, a *agent.Agent) []byte {
	t.Helper()
	want, err := archive.Len(a.Store())
	if err != nil {
		t.Fatal(err)
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), mirrorTimeout)
	defer cancel()
	var buf bytes.Buffer
	var n uint64
	for n < want {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("read %d of %d records", n, want)
		}
		fs.EachRecord(func(r *kgo.Record) {
			n++
			buf.Write(r.Key)
			buf.Write(r.Value)
			for _, h := range r.Headers {
				buf.WriteString(h.Key)
				buf.Write(h.Value)
			}
			buf.WriteByte(0)
		})
	}
	return buf.Bytes()
}

// callWithToken sends body as JSON with token to a's API and decodes the answer
// into out; it returns the status.
func callWithToken(t *testing.T, a *agent.Agent, method, path, token string, body, out any) int {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, "http://"+a.HTTPAddr()+path, rd)
	if token != "" {
		req.Header.Set("X-Nomad-Token", token)
	}
	c := &http.Client{Timeout: 10 * time.Second}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if out != nil && resp.StatusCode == 200 {
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatalf("%s %s: %v in %s", method, path, err, strings.TrimSpace(string(b)))
		}
	}
	return resp.StatusCode
}
