package main

import (
	"log/slog"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/ordoplane/ordo/cmd/agent"
	"github.com/ordoplane/ordo/processors/mirror"
)

const fullFile = `
data_dir  = "/var/lib/ordo"
name      = "s1"
http_addr = "0.0.0.0:4646"
raft_addr = "10.0.0.1:4647"
log_level = "debug"

server {
  enabled          = true
  bootstrap_expect = 3
  join             = ["10.0.0.2:4646", "10.0.0.3:4646"]
}

client {
  enabled   = true
  servers   = ["10.0.0.1:4646"]
  node_name = "c1"
  drivers   = ["exec", "mock"]
  meta      = { rack = "r1" }
}
acl {
  enabled   = true
  token_ttl = "45s"
}
mirror {
  brokers = ["k:9092"]
  topic   = "ordo.events"
  format  = "msgpack"
  compression = "zstd"
  linger  = "50ms"
  tls { ca_file = "/etc/ca.pem" }
  sasl {
    mechanism = "SCRAM-SHA-512"
    username  = "ordo"
    password  = "pw"
  }
}
`

func TestMergeAgentConfig(t *testing.T) {
	defaults := agent.DefaultConfig()
	tests := []struct {
		name    string
		file    string // agent.hcl text; "" for no file
		flags   agentFlags
		changed []string
		want    func(c *agent.Config)
		level   slog.Level
	}{
		{
			name:  "defaults",
			want:  func(c *agent.Config) {},
			level: slog.LevelInfo,
		},
		{
			name:  "dev",
			flags: agentFlags{dev: true},
			want: func(c *agent.Config) {
				*c = agent.DevConfig()
				c.Client = agent.DevClientConfig()
			},
			level: slog.LevelInfo,
		},
		{
			name: "file only",
			file: fullFile,
			want: func(c *agent.Config) {
				c.DataDir, c.Name, c.HTTPAddr, c.RaftAddr = "/var/lib/ordo", "s1", "0.0.0.0:4646", "10.0.0.1:4647"
				c.BootstrapExpect = 3
				c.Join = []string{"10.0.0.2:4646", "10.0.0.3:4646"}
				c.Client = agent.ClientConfig{Enabled: true, Servers: []string{"10.0.0.1:4646"}, NodeName: "c1",
					Drivers: []string{"exec", "mock"}, Meta: map[string]string{"rack": "r1"}}
				c.ACL = agent.ACLConfig{Enabled: true, TokenTTL: 45 * time.Second}
				c.Mirror = &mirror.Settings{Brokers: []string{"k:9092"}, Topic: "ordo.events", Format: "msgpack", Compression: "zstd",
					Linger: 50 * time.Millisecond, TLS: &mirror.TLS{CAFile: "/etc/ca.pem"}, SASL: &mirror.SASL{Mechanism: "SCRAM-SHA-512", Username: "ordo", Password: "pw"}}
			},
			level: slog.LevelDebug,
		},
		{
			name: "changed flags override the file",
			file: `data_dir = "/f"` + "\n" + `http_addr = "f:1"` + "\n" + `log_level = "debug"` +
				"\nserver {\n bootstrap_expect = 3\n join = [\"a:1\"]\n}\n",
			flags: agentFlags{dataDir: "/flag", httpAddr: "ignored:2", bootstrapExpect: 1,
				join: []string{"b:1", "c:1"}, logLevel: "warn", name: "n1"},
			changed: []string{"data-dir", "bootstrap-expect", "join", "log-level", "node"},
			want: func(c *agent.Config) {
				c.DataDir, c.HTTPAddr, c.Name = "/flag", "f:1", "n1"
				c.BootstrapExpect = 1
				c.Join = []string{"b:1", "c:1"}
			},
			level: slog.LevelWarn,
		},
		{
			name:    "raft_timeout from the file, then the flag",
			file:    "server {\n raft_timeout = \"500ms\"\n}\n",
			flags:   agentFlags{raftTimeout: 250 * time.Millisecond},
			changed: []string{"raft-timeout"},
			want:    func(c *agent.Config) { c.RaftTimeout = 250 * time.Millisecond },
			level:   slog.LevelInfo,
		},
		{
			name:  "raft_timeout from the file",
			file:  "server {\n raft_timeout = \"500ms\"\n}\n",
			want:  func(c *agent.Config) { c.RaftTimeout = 500 * time.Millisecond },
			level: slog.LevelInfo,
		},
		{
			name:    "flag set to its zero value still overrides",
			file:    "server {\n enabled = true\n bootstrap_expect = 3\n}\n",
			flags:   agentFlags{},
			changed: []string{"bootstrap-expect", "server"},
			want: func(c *agent.Config) {
				c.Server = false
				c.BootstrapExpect = 0
			},
			level: slog.LevelInfo,
		},
		{
			name:    "client alone",
			flags:   agentFlags{client: true, servers: []string{"127.0.0.1:4646", "127.0.0.1:4656"}, dataDir: "d2", nodeName: "n2"},
			changed: []string{"client", "servers", "data-dir", "node-name"},
			want: func(c *agent.Config) {
				c.Server, c.DataDir = false, "d2"
				c.Client = agent.ClientConfig{Enabled: true, Servers: []string{"127.0.0.1:4646", "127.0.0.1:4656"}, NodeName: "n2"}
			},
			level: slog.LevelInfo,
		},
		{
			name:    "client http_addr from the file, then the flag",
			file:    "client {\n http_addr = \"0.0.0.0:4648\"\n}\n",
			flags:   agentFlags{clientHTTPAddr: "10.0.0.5:0"},
			changed: []string{"client-http-addr"},
			want:    func(c *agent.Config) { c.Client.HTTPAddr = "10.0.0.5:0" },
			level:   slog.LevelInfo,
		},
		{
			name:  "client http_addr from the file",
			file:  "client {\n http_addr = \"0.0.0.0:4648\"\n}\n",
			want:  func(c *agent.Config) { c.Client.HTTPAddr = "0.0.0.0:4648" },
			level: slog.LevelInfo,
		},
		{
			name:    "client and server",
			flags:   agentFlags{client: true, server: true, dataDir: "d1"},
			changed: []string{"client", "server", "data-dir"},
			want: func(c *agent.Config) {
				c.DataDir = "d1"
				c.Client.Enabled = true
			},
			level: slog.LevelInfo,
		},
		{
			name:    "dev with file and data dir flag",
			file:    `raft_addr = "127.0.0.1:9999"`,
			flags:   agentFlags{dev: true, dataDir: "/d"},
			changed: []string{"dev", "data-dir"},
			want: func(c *agent.Config) {
				*c = agent.DevConfig()
				c.Client = agent.DevClientConfig()
				c.RaftAddr, c.DataDir = "127.0.0.1:9999", "/d"
			},
			level: slog.LevelInfo,
		},
		{
			name:    "raft behind a proxy",
			flags:   agentFlags{raftAddr: "127.0.0.1:5000", raftAdvertise: "127.0.0.1:6000"},
			changed: []string{"raft-addr", "raft-advertise"},
			want: func(c *agent.Config) {
				c.RaftAddr, c.RaftAdvertise = "127.0.0.1:5000", "127.0.0.1:6000"
			},
			level: slog.LevelInfo,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var file *agentFile
			if tt.file != "" {
				var err error
				if file, err = parseAgentFile("agent.hcl", []byte(tt.file)); err != nil {
					t.Fatal(err)
				}
			}
			changed := func(f string) bool {
				for _, c := range tt.changed {
					if c == f {
						return true
					}
				}
				return false
			}
			got, err := mergeAgentConfig(tt.flags, changed, file)
			if err != nil {
				t.Fatal(err)
			}
			want := defaults
			tt.want(&want)
			if !reflect.DeepEqual(got.Config, want) {
				t.Errorf("config:\n got %+v\nwant %+v", got.Config, want)
			}
			if got.LogLevel != tt.level {
				t.Errorf("level = %v, want %v", got.LogLevel, tt.level)
			}
		})
	}
}

func TestParseAgentFileJSON(t *testing.T) {
	f, err := parseAgentFile("agent.json", []byte(`{"data_dir": "/j", "server": {"bootstrap_expect": 2}}`))
	if err != nil {
		t.Fatal(err)
	}
	c := agent.DefaultConfig()
	if err := f.applyTo(&c); err != nil {
		t.Fatal(err)
	}
	if c.DataDir != "/j" || c.BootstrapExpect != 2 || c.JoinInterval != time.Second {
		t.Errorf("got %+v", c)
	}
}

func TestAgentFileErrors(t *testing.T) {
	tests := []struct{ name, src, want string }{
		{"syntax", `data_dir = `, "parse agent config: agent.hcl:1"},
		{"unknown attribute", `datadir = "/x"`, `Unsupported argument; An argument named "datadir" is not expected here`},
		{"unknown block", "telemetry {}", `Unsupported block type`},
		{"wrong type", `server { bootstrap_expect = "three" }`, "agent.hcl:1"},
		{"duplicate block", "server {}\nserver {}", "Duplicate server block"},
		{"bad log level", `log_level = "loud"`, `log_level in agent.hcl: unknown log level "loud"`},
		{"negative bootstrap", `server { bootstrap_expect = -1 }`, "server.bootstrap_expect in agent.hcl: -1 must not be negative"},
		{"bad raft timeout", `server { raft_timeout = "soon" }`, `server.raft_timeout in agent.hcl: "soon" is not a duration`},
		{"client http_addr without port", `client { http_addr = "0.0.0.0" }`, `client.http_addr in agent.hcl: "0.0.0.0" is not host:port`},
		{"client http_addr bad port", `client { http_addr = "h:http" }`, `client.http_addr in agent.hcl: "h:http": port "http" is not a number from 0 to 65535`},
		{"mirror without brokers", `mirror { topic = "t" }`, `The argument "brokers" is required`},
		{"mirror empty brokers", `mirror { brokers = [] }`, "mirror.brokers: at least one broker (host:port) is required (in agent.hcl)"},
		{"mirror bad broker", `mirror { brokers = ["k:1", "k"] }`, `mirror.brokers[1]: "k" is not host:port (in agent.hcl)`},
		{"mirror bad format", "mirror {\n brokers = [\"k:1\"]\n format = \"avro\"\n}", `mirror.format: "avro" is not json or msgpack (in agent.hcl)`},
		{"mirror bad compression", "mirror {\n brokers = [\"k:1\"]\n compression = \"brotli\"\n}", `mirror.compression: "brotli" is not none, gzip, snappy, lz4 or zstd (in agent.hcl)`},
		{"mirror bad linger", "mirror {\n brokers = [\"k:1\"]\n linger = \"soon\"\n}", `mirror.linger in agent.hcl: "soon" is not a positive duration such as "20ms"`},
		{"mirror long linger", "mirror {\n brokers = [\"k:1\"]\n linger = \"2s\"\n}", `mirror.linger: 2s must be between 0 and 1s (in agent.hcl)`},
		{"mirror bad topic", "mirror {\n brokers = [\"k:1\"]\n topic = \"a b\"\n}", `mirror.topic: "a b" is not a Kafka topic name`},
		{"mirror bad partitions", "mirror {\n brokers = [\"k:1\"]\n partitions = 0\n}", "mirror.partitions in agent.hcl: 0 must be between 1 and 1048576"},
		{"mirror unknown attribute", "mirror {\n brokers = [\"k:1\"]\n acks = 1\n}", `An argument named "acks" is not expected here`},
		{"mirror bad sasl", "mirror {\n brokers = [\"k:1\"]\n sasl {\n mechanism = \"GSSAPI\"\n username = \"u\"\n }\n}", `mirror.sasl.mechanism: "GSSAPI" is not PLAIN`},
		{"mirror tls cert without key", "mirror {\n brokers = [\"k:1\"]\n tls { cert_file = \"c.pem\" }\n}", "mirror.tls.cert_file: cert_file and key_file go together"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := parseAgentFile("agent.hcl", []byte(tt.src))
			if err == nil {
				_, err = mergeAgentConfig(agentFlags{}, func(string) bool { return false }, f)
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want it to contain %q", err, tt.want)
			}
		})
	}
}

// A -client-http-addr that is not host:port is refused naming the flag.
func TestClientHTTPAddrFlagRefused(t *testing.T) {
	_, err := mergeAgentConfig(agentFlags{clientHTTPAddr: "4648"}, func(f string) bool { return f == "client-http-addr" }, nil)
	if err == nil || !strings.Contains(err.Error(), `-client-http-addr: "4648" is not host:port`) {
		t.Fatalf("err %v, want the flag named", err)
	}
}
