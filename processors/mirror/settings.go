package mirror

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"
)

// Settings is what the agent file's mirror block configures:
//
//	mirror {
//	  brokers   = ["kafka-1:9092", "kafka-2:9092"]
//	  topic     = "ordo.events"
//	  format    = "json"            # or "msgpack"
//	  client_id = "ordo-mirror"
//	  compression = "gzip"          # none, snappy, lz4, zstd
//	  tls  { ca_file = "/etc/ordo/kafka-ca.pem" }
//	  sasl { mechanism = "SCRAM-SHA-512"  username = "ordo"  password = "…" }
//	}
type Settings struct {
	// Brokers are the seed brokers, host:port; required.
	Brokers []string `json:"Brokers"`
	// Topic receives the records; default "ordo.events".
	Topic string `json:"Topic"`
	// Format is the value encoding, FormatJSON (default) or FormatMsgpack.
	Format string `json:"Format"`
	// ClientID is the Kafka client id; default "ordo-mirror".
	ClientID string `json:"ClientID"`
	// TransactionalID is the producer's transactional id; default
	// "ordo-mirror-" + Topic. Every server of a cluster must use the same
	// one: it is what fences a deposed leader's producer.
	TransactionalID string `json:"TransactionalID"`
	// Source is the ce_source header; default "/ordo".
	Source string `json:"Source"`
	// Partitions is how many partitions the mirror gives the topic when it
	// creates it (only when the topic does not exist); default 6.
	Partitions int32 `json:"Partitions"`
	// ReplicationFactor is the new topic's replication factor; default -1,
	// the brokers' default.
	ReplicationFactor int16 `json:"ReplicationFactor"`
	// TLS, when set, connects over TLS.
	TLS *TLS `json:"TLS,omitempty"`
	// SASL, when set, authenticates.
	SASL *SASL `json:"SASL,omitempty"`
	// Compression is the codec of the record batches the mirror produces:
	// none, gzip (DefaultCompression), snappy, lz4 or zstd. A consumer
	// must be able to decompress it (docs/mirror.md says what each
	// mainstream client needs).
	Compression string `json:"Compression"`
	// Timeout bounds each step that waits on Kafka (connecting, fencing,
	// reading the tail, a transaction's delivery and commit); after it the
	// session is retried. Default 30s.
	Timeout time.Duration `json:"Timeout,omitempty"`
	// Linger, when set, is the mirror's Config.Linger: how long a caught-up
	// mirror gathers events before a transaction (mirror.linger, at most
	// MaxLinger); 0 keeps the default, 20ms.
	Linger time.Duration `json:"Linger,omitempty"`
}

// MaxLinger bounds Settings.Linger: an event waits up to a Linger before
// it is in the topic, and a second is already far behind the log.
const MaxLinger = time.Second

// TLS configures the connection's TLS.
type TLS struct {
	// CAFile holds the PEM CAs that sign the brokers' certificates; default the system's.
	CAFile string `json:"CAFile,omitempty"`
	// CertFile and KeyFile hold a PEM client certificate and key, for mutual TLS.
	CertFile string `json:"CertFile,omitempty"`
	KeyFile  string `json:"KeyFile,omitempty"`
	// ServerName overrides the name checked in the brokers' certificates.
	ServerName string `json:"ServerName,omitempty"`
	// InsecureSkipVerify accepts any certificate; for tests only.
	InsecureSkipVerify bool `json:"InsecureSkipVerify,omitempty"`
}

// SASL configures authentication.
type SASL struct {
	// Mechanism is PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512.
	Mechanism string `json:"Mechanism"`
	Username  string `json:"Username"`
	// Password never leaves the agent (not even in /v1/agent/self).
	Password string `json:"-"`
}

// withDefaults returns s with defaults filled in.
func (s Settings) withDefaults() Settings {
	if s.Topic == "" {
		s.Topic = "ordo.events"
	}
	if s.Format == "" {
		s.Format = FormatJSON
	}
	if s.ClientID == "" {
		s.ClientID = "ordo-mirror"
	}
	if s.TransactionalID == "" {
		s.TransactionalID = "ordo-mirror-" + s.Topic
	}
	if s.Source == "" {
		s.Source = "/ordo"
	}
	if s.Partitions == 0 {
		s.Partitions = 6
	}
	if s.ReplicationFactor == 0 {
		s.ReplicationFactor = -1
	}
	if s.Timeout <= 0 {
		s.Timeout = 30 * time.Second
	}
	if s.Compression == "" {
		s.Compression = DefaultCompression
	}
	return s
}

// The codecs Settings.Compression names.
const (
	CompressionNone   = "none"
	CompressionGzip   = "gzip"
	CompressionSnappy = "snappy"
	CompressionLZ4    = "lz4"
	CompressionZstd   = "zstd"
)

// DefaultCompression is the codec of a mirror block that names none:
// gzip, the one codec every mainstream client reads with nothing added
// (kafkajs reads no other without a plugin). The bench's mirror-codecs
// figures (docs/benchmarks.md) say what it costs beside the others.
const DefaultCompression = CompressionGzip

// batchMaxBytes bounds a record batch before compression (franz-go
// counts it so). Uncompressed, a batch must fit the brokers' default
// message.max.bytes (1,000,012): a larger one is refused and never
// succeeds. Compressed, events shrink several times, so a batch may
// carry 4 MiB of them.
func (s Settings) batchMaxBytes() int32 {
	if s.Compression == CompressionNone {
		return 1_000_012
	}
	return 4 << 20
}

// codec returns the franz-go codec of s (with defaults, validated).
func (s Settings) codec() kgo.CompressionCodec {
	c, _ := codec(s.Compression)
	return c
}

// codec returns the franz-go codec compression names, ok false for a
// name it is not.
func codec(compression string) (kgo.CompressionCodec, bool) {
	switch compression {
	case CompressionNone:
		return kgo.NoCompression(), true
	case CompressionGzip:
		// The fastest level: franz-go compresses a broker's batches on
		// one goroutine, and at its default level gzip took a sixth of
		// a catch-up's CPU for batches a tenth smaller.
		return kgo.GzipCompression().WithLevel(1), true // gzip.BestSpeed
	case CompressionSnappy:
		return kgo.SnappyCompression(), true
	case CompressionLZ4:
		return kgo.Lz4Compression(), true
	case CompressionZstd:
		return kgo.ZstdCompression(), true
	}
	return kgo.CompressionCodec{}, false
}

// Validate reports the first wrong setting as a *SettingsError naming it.
func (s Settings) Validate() error {
	bad := func(field, format string, args ...any) error {
		return &SettingsError{Field: "mirror." + field, Reason: fmt.Sprintf(format, args...)}
	}
	if len(s.Brokers) == 0 {
		return bad("brokers", "at least one broker (host:port) is required")
	}
	for i, b := range s.Brokers {
		if host, port, ok := strings.Cut(b, ":"); !ok || host == "" || port == "" {
			return bad(fmt.Sprintf("brokers[%d]", i), "%q is not host:port", b)
		}
	}
	switch s.Format {
	case "", FormatJSON, FormatMsgpack:
	default:
		return bad("format", "%q is not json or msgpack", s.Format)
	}
	if s.Topic != "" {
		if len(s.Topic) > 249 || strings.Trim(s.Topic, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") != "" || s.Topic == "." || s.Topic == ".." {
			return bad("topic", "%q is not a Kafka topic name (letters, digits, '.', '_', '-'; at most 249)", s.Topic)
		}
	}
	if _, ok := codec(s.Compression); !ok && s.Compression != "" {
		return bad("compression", "%q is not none, gzip, snappy, lz4 or zstd", s.Compression)
	}
	if s.Linger < 0 || s.Linger > MaxLinger {
		return bad("linger", "%v must be between 0 and %v", s.Linger, MaxLinger)
	}
	if s.Partitions < 0 {
		return bad("partitions", "%d must be positive", s.Partitions)
	}
	if s.ReplicationFactor < -1 {
		return bad("replication_factor", "%d must be positive, or -1 for the brokers' default", s.ReplicationFactor)
	}
	if t := s.TLS; t != nil {
		if (t.CertFile == "") != (t.KeyFile == "") {
			return bad("tls.cert_file", "cert_file and key_file go together")
		}
	}
	if a := s.SASL; a != nil {
		switch strings.ToUpper(a.Mechanism) {
		case "PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512":
		default:
			return bad("sasl.mechanism", "%q is not PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512", a.Mechanism)
		}
		if a.Username == "" {
			return bad("sasl.username", "required with sasl")
		}
	}
	return nil
}

// clientOpts returns the franz-go options every client of the mirror
// shares: brokers, client id, TLS and SASL.
func (s Settings) clientOpts() ([]kgo.Opt, error) {
	opts := []kgo.Opt{kgo.SeedBrokers(s.Brokers...), kgo.ClientID(s.ClientID)}
	if t := s.TLS; t != nil {
		cfg := &tls.Config{ServerName: t.ServerName, InsecureSkipVerify: t.InsecureSkipVerify, MinVersion: tls.VersionTLS12}
		if t.CAFile != "" {
			pem, err := os.ReadFile(t.CAFile)
			if err != nil {
				return nil, &SettingsError{Field: "mirror.tls.ca_file", Reason: err.Error()}
			}
			cfg.RootCAs = x509.NewCertPool()
			if !cfg.RootCAs.AppendCertsFromPEM(pem) {
				return nil, &SettingsError{Field: "mirror.tls.ca_file", Reason: "no PEM certificate in " + t.CAFile}
			}
		}
		if t.CertFile != "" {
			cert, err := tls.LoadX509KeyPair(t.CertFile, t.KeyFile)
			if err != nil {
				return nil, &SettingsError{Field: "mirror.tls.cert_file", Reason: err.Error()}
			}
			cfg.Certificates = []tls.Certificate{cert}
		}
		opts = append(opts, kgo.DialTLSConfig(cfg))
	}
	if a := s.SASL; a != nil {
		var m sasl.Mechanism
		switch strings.ToUpper(a.Mechanism) {
		case "PLAIN":
			m = plain.Auth{User: a.Username, Pass: a.Password}.AsMechanism()
		case "SCRAM-SHA-256":
			m = scram.Auth{User: a.Username, Pass: a.Password}.AsSha256Mechanism()
		case "SCRAM-SHA-512":
			m = scram.Auth{User: a.Username, Pass: a.Password}.AsSha512Mechanism()
		}
		opts = append(opts, kgo.SASL(m))
	}
	return opts, nil
}
