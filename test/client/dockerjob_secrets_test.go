package client

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/hashicorp/nomad/api"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/ordoplane/ordo/client/driver/docker"
	"github.com/ordoplane/ordo/cmd/agent"
	"github.com/ordoplane/ordo/processors/mirror"
	"github.com/ordoplane/ordo/storage/archive"
	"github.com/ordoplane/ordo/test/testagent"
)

// secretJob renders a variable's password into secrets/ and prints only
// its length, so the container proves it can read the file without the
// value reaching the task's logs.
const secretJob = `job "vault" {
  datacenters = ["dc1"]
  group "vault" {
    task "reader" {
      driver = "docker"
      kill_timeout = "1s"
      config {
        image        = %q
        command      = "/bin/sh"
        args         = ["-c", "echo len=$(wc -c < /secrets/db.txt); exec sleep 3600"]
        network_mode = "none"
        labels {
          team = "db"
        }
      }
      template {
        data        = "{{ with nomadVar \"nomad/jobs/vault\" }}{{ .password }}{{ end }}"
        destination = "secrets/db.txt"
      }
      resources {
        cpu    = 50
        memory = 32
      }
    }
  }
}`

// TestSecretsStayInside: a docker task whose template renders a
// variable's value into secrets/ reads it inside the container, and the
// value is in none of the container's labels (nor anywhere the daemon
// shows of it), the log (the archive's raw bytes and GET
// /v1/operator/log) or the Kafka mirror (every record of kfake's topic).
// The same searches find the variable's path and the task's label, so
// they would see the value too.
func TestSecretsStayInside(t *testing.T) {
	t.Parallel()
	k, err := kfake.NewCluster(kfake.NumBrokers(1))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(k.Close)
	cfg := testagent.DevConfig(t.TempDir())
	cfg.Client = agent.DevClientConfig()
	cfg.Client.Drivers = []string{docker.Name}
	cfg.Client.Docker = agent.DockerConfig{Endpoint: dockerd(t).Endpoint}
	cfg.Mirror = &mirror.Settings{Brokers: k.ListenAddrs(), Topic: "ordo.secrets", Partitions: 1, Format: mirror.FormatJSON}
	a, c := testagent.StartDev(t, cfg)

	const path, plaintext = "nomad/jobs/vault", "correct-horse-battery-staple-9c1e"
	if _, _, err := c.Variables().Create(&api.Variable{Path: path, Items: api.VariableItems{"password": plaintext}}, nil); err != nil {
		t.Fatal(err)
	}
	job, err := c.Jobs().ParseHCL(fmt.Sprintf(secretJob, dockerd(t).Image), true)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.Jobs().Register(job, nil); err != nil {
		t.Fatal(err)
	}
	var allocID string
	testagent.WaitFor(t, dockerTimeout, "the allocation running", func() bool {
		list, _, err := c.Jobs().Allocations("vault", false, nil)
		if err != nil || len(list) != 1 || list[0].ClientStatus != "running" {
			return false
		}
		allocID = list[0].ID
		return true
	})
	logs := c.Address() + "/v1/client/fs/logs/" + allocID + "?task=reader&type=stdout&plain=true&origin=start"
	want := fmt.Sprintf("len=%d", len(plaintext))
	testagent.WaitFor(t, dockerTimeout, "the container reading the rendered secret", func() bool {
		return strings.Contains(httpGetBody(logs), want)
	})

	ids := dockerd(t).Containers(t, docker.LabelAllocID, allocID)
	if len(ids) != 1 {
		t.Fatalf("containers of the allocation = %v, want one", ids)
	}
	info := dockerd(t).Inspect(t, ids[0])
	labels, _ := json.Marshal(info["Config"].(map[string]any)["Labels"])
	inspected, _ := json.Marshal(info)
	search(t, "the container's labels", labels, plaintext, "db")
	search(t, "the container's inspection", inspected, plaintext, "/secrets")

	var archived bytes.Buffer
	if err := archive.Scan(a.Store(), 1, 0, func(_ uint64, _ uint32, b []byte) error { archived.Write(b); return nil }); err != nil {
		t.Fatal(err)
	}
	search(t, "the archive", archived.Bytes(), plaintext, path)
	search(t, "GET /v1/operator/log", operatorLog(t, c.Address()), plaintext, path)

	testagent.WaitFor(t, dockerTimeout, "the log mirrored", func() bool { return a.Mirror().Mirrored() == lastPosition(t, a) })
	search(t, "the Kafka topic", readTopic(t, k.ListenAddrs(), cfg.Mirror.Topic, a), plaintext, path)
}

// search fails t if b holds secret, or lacks control (which shows the
// search would have seen the secret).
func search(t *testing.T, where string, b []byte, secret, control string) {
	t.Helper()
	if bytes.Contains(b, []byte(secret)) {
		t.Errorf("%s holds the secret in clear", where)
	}
	if !bytes.Contains(b, []byte(control)) {
		t.Errorf("%s lacks %q: the search would not see the secret either", where, control)
	}
}

// operatorLog returns every page of GET /v1/operator/log concatenated.
func operatorLog(t *testing.T, addr string) []byte {
	t.Helper()
	var all []byte
	for from := uint64(1); from != 0; {
		body := httpGetBody(fmt.Sprintf("%s/v1/operator/log?from=%d&limit=1000", addr, from))
		var page struct{ NextIndex uint64 }
		if err := json.Unmarshal([]byte(body), &page); err != nil {
			t.Fatalf("operator log from %d: %v in %q", from, err, body)
		}
		all = append(all, body...)
		from = page.NextIndex
	}
	return all
}

// lastPosition is the position of a's last archived event.
func lastPosition(t *testing.T, a *agent.Agent) mirror.Position {
	t.Helper()
	last, err := archive.Last(a.Store())
	if err != nil {
		t.Fatal(err)
	}
	var p mirror.Position
	if err := archive.Scan(a.Store(), last, 0, func(i uint64, s uint32, _ []byte) error {
		p = mirror.Position{Index: i, Seq: s}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return p
}

// readTopic returns every record of topic (keys, values, headers)
// concatenated, once it has as many records as a's archive has events.
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
	ctx, cancel := context.WithTimeout(context.Background(), dockerTimeout)
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
		})
	}
	return buf.Bytes()
}
