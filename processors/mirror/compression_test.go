package mirror

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/storage/waittest"
)

// Each compression setting produces batches of that codec (the codec in
// every batch's attributes, as a consumer reads them off the wire), and
// the records read back whole.
func TestCompressionReachesTheTopic(t *testing.T) {
	want := map[string]int16{ // the codec bits of a record batch's attributes
		"":                1, // the default, gzip
		CompressionNone:   0,
		CompressionGzip:   1,
		CompressionSnappy: 2,
		CompressionLZ4:    3,
		CompressionZstd:   4,
	}
	for name, bits := range want {
		t.Run("compression="+name, func(t *testing.T) {
			t.Parallel()
			l := newLog(t)
			l.namespaces(30, 4, 7)
			// Uncompressed, events of 4 KiB on one partition: its share of
			// a chunk (2.4 MB) is well over a broker's largest message.
			big, entries, partitions := strings.Repeat("x", 4096), 60, int32(1)
			if name != CompressionNone {
				entries, partitions = 3, 4
			}
			for i := range entries {
				ps := make([]events.Payload, 10)
				for j := range ps {
					ps[j] = &events.NamespaceUpserted{Namespace: events.Namespace{Name: fmt.Sprint("big-", i, "-", j), Description: big + fmt.Sprint(i*j)}}
				}
				l.append(ps...)
			}
			k := startKafka(t)
			m := newMirror(t, l, k.ListenAddrs(), func(c *Config) {
				c.Settings.Compression, c.Settings.Partitions = name, partitions
			})
			r := run(m)
			waittest.For(t, 30*time.Second, "the log mirrored", func() bool { return m.Mirrored() == l.last() })
			r.stop(t)
			verify(t, m, l)
			got := batchCodecs(t, k.ListenAddrs(), m.Settings().Topic, m.Settings().Partitions)
			if len(got) == 0 {
				t.Fatal("no record batch on the topic")
			}
			for _, c := range got {
				if c != bits {
					t.Fatalf("a batch with codec %d, want %d (%q)", c, bits, name)
				}
			}
		})
	}
}

// batchCodecs fetches the raw record batches of every partition of topic
// and returns each data batch's codec (control batches left out).
func batchCodecs(t *testing.T, addrs []string, topic string, partitions int32) []int16 {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addrs...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	meta := kmsg.NewPtrMetadataRequest()
	mt := kmsg.NewMetadataRequestTopic()
	mt.Topic = kmsg.StringPtr(topic)
	meta.Topics = append(meta.Topics, mt)
	mresp, err := meta.RequestWith(ctx, cl)
	if err != nil || len(mresp.Topics) != 1 {
		t.Fatalf("metadata of %s: %v", topic, err)
	}
	req := kmsg.NewPtrFetchRequest()
	req.MaxBytes, req.MaxWaitMillis = 16<<20, 10
	ft := kmsg.NewFetchRequestTopic()
	ft.Topic, ft.TopicID = topic, mresp.Topics[0].TopicID
	for p := range partitions {
		fp := kmsg.NewFetchRequestTopicPartition()
		fp.Partition, fp.PartitionMaxBytes = p, 16<<20
		ft.Partitions = append(ft.Partitions, fp)
	}
	req.Topics = append(req.Topics, ft)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	var codecs []int16
	for _, rt := range resp.Topics {
		for _, rp := range rt.Partitions {
			if rp.ErrorCode != 0 {
				t.Fatalf("fetch partition %d: error code %d", rp.Partition, rp.ErrorCode)
			}
			raw := rp.RecordBatches
			for len(raw) > 0 {
				var b kmsg.RecordBatch
				if err := b.ReadFrom(raw); err != nil {
					t.Fatalf("partition %d: %v", rp.Partition, err)
				}
				if b.Attributes&0x20 == 0 { // not a transaction marker
					codecs = append(codecs, b.Attributes&0x07)
				}
				raw = raw[12+int(b.Length):]
			}
		}
	}
	return codecs
}
