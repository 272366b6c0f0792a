package mirror

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/vmihailenco/msgpack/v5"

	"github.com/ordoplane/ordo/events"
)

// secretIssued is a test-only event type with a sensitive field, as ACL
// tokens and variables will have.
type secretIssued struct {
	Name   string `msgpack:"n" json:"Name"`
	Secret string `msgpack:"s" json:"Secret"`
	Big    int64  `msgpack:"b" json:"Big"`
}

func (p *secretIssued) EntityKeys() []events.Key {
	return []events.Key{{Kind: events.KindNamespace, Value: "default"}, {Kind: "token", Value: p.Name}}
}

const secretValue = "s3cr3t-value-that-must-not-leave"

func init() {
	events.Register(events.Type{Name: "MirrorTestSecretIssued", Version: 1, Topic: "Test",
		New: func() events.Payload { return new(secretIssued) }, Sensitive: []string{"Secret"}})
}

func stamped(t *testing.T, index uint64, ps ...events.Payload) []*events.Event {
	t.Helper()
	e := events.Entry{Time: 1_777_777_777_123_456_789, CommandID: "cmd-1", Actor: "tester"}
	for i, p := range ps {
		ev, err := events.New(fmt.Sprint("id-", i), p)
		if err != nil {
			t.Fatal(err)
		}
		e.Events = append(e.Events, ev)
	}
	e.Stamp(index)
	out := make([]*events.Event, len(e.Events))
	for i := range e.Events {
		out[i] = &e.Events[i]
	}
	return out
}

func TestRecordJSON(t *testing.T) {
	ev := stamped(t, 42, &events.NamespaceUpserted{Namespace: events.Namespace{Name: "pay\"ments", Description: "<team>"}})[0]
	r, err := record(ev, recordOptions{Topic: "t", Source: "/ordo", Format: FormatJSON, Partitions: 6})
	if err != nil {
		t.Fatal(err)
	}
	if string(r.Key) != `namespace/pay"ments` || r.Topic != "t" || r.Partition != Partition(r.Key, 6) {
		t.Fatalf("key %q topic %q partition %d", r.Key, r.Topic, r.Partition)
	}
	var v map[string]any
	if err := json.Unmarshal(r.Value, &v); err != nil {
		t.Fatalf("value is not JSON: %v\n%s", err, r.Value)
	}
	if v["Index"] != 42.0 || v["Type"] != "NamespaceUpserted" || v["Key"] != `namespace/pay"ments` ||
		v["Time"] != "2026-05-03T03:09:37.123456789Z" || v["Actor"] != "tester" || v["Topic"] != "Namespace" {
		t.Fatalf("value %s", r.Value)
	}
	if p := v["Payload"].(map[string]any)["Namespace"].(map[string]any); p["Name"] != `pay"ments` || p["Description"] != "<team>" {
		t.Fatalf("payload %v", p)
	}
	want := map[string]string{HeaderIndex: "42", HeaderSeq: "0", HeaderType: "NamespaceUpserted", HeaderVersion: "3",
		HeaderContentType: "application/json", HeaderSpecVersion: "1.0", HeaderID: "id-0", HeaderSource: "/ordo",
		HeaderCEType: "ordo.NamespaceUpserted", HeaderTime: "2026-05-03T03:09:37.123456789Z",
		HeaderSequence: "00000000000000000042-0000000000", HeaderSubject: `namespace/pay"ments`}
	got := map[string]string{}
	for _, h := range r.Headers {
		got[h.Key] = string(h.Value)
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("headers\n got %v\nwant %v", got, want)
	}
	if pos, err := recordPosition(r); err != nil || pos != (Position{42, 0}) {
		t.Fatalf("recordPosition = %v, %v", pos, err)
	}
}

// TestRedaction: a sensitive field never appears in a record, in either
// format, while the other fields and exact integers survive.
func TestRedaction(t *testing.T) {
	ev := stamped(t, 7, &secretIssued{Name: "ci", Secret: secretValue, Big: 1<<62 + 1})[0]
	for _, format := range []string{FormatJSON, FormatMsgpack} {
		r, err := record(ev, recordOptions{Topic: "t", Format: format, Partitions: 3})
		if err != nil {
			t.Fatal(err)
		}
		assertNoSecret(t, r)
		var v struct {
			Payload map[string]any
		}
		if format == FormatJSON {
			dec := json.NewDecoder(strings.NewReader(string(r.Value)))
			dec.UseNumber()
			err = dec.Decode(&v)
		} else {
			err = msgpack.Unmarshal(r.Value, &v)
		}
		if err != nil {
			t.Fatalf("%s: %v", format, err)
		}
		if v.Payload["Secret"] != events.RedactedValue || v.Payload["Name"] != "ci" || fmt.Sprint(v.Payload["Big"]) != fmt.Sprint(int64(1<<62+1)) {
			t.Fatalf("%s payload %v", format, v.Payload)
		}
	}
}

func assertNoSecret(t testing.TB, r *kgo.Record) {
	t.Helper()
	if strings.Contains(string(r.Value), secretValue) || strings.Contains(string(r.Key), secretValue) {
		t.Fatalf("secret in record %s", r.Value)
	}
	for _, h := range r.Headers {
		if strings.Contains(string(h.Value), secretValue) {
			t.Fatalf("secret in header %s", h.Key)
		}
	}
}

func TestRecordKey(t *testing.T) {
	ns := events.Key{Kind: events.KindNamespace, Value: "default"}
	for _, tc := range []struct {
		keys []events.Key
		want string
	}{
		{nil, "type/T"},
		{[]events.Key{ns}, "namespace/default"},
		{[]events.Key{ns, {Kind: events.KindJob, Value: "web"}}, "job/default/web"},
		{[]events.Key{ns, {Kind: events.KindJob, Value: "web"}, {Kind: events.KindEval, Value: "e1"}, {Kind: events.KindAlloc, Value: "a1"}, {Kind: events.KindNode, Value: "n1"}}, "alloc/a1"},
		// Several allocations of one eval: the eval.
		{[]events.Key{ns, {Kind: events.KindJob, Value: "web"}, {Kind: events.KindEval, Value: "e1"}, {Kind: events.KindAlloc, Value: "a1"}, {Kind: events.KindNode, Value: "n1"}, {Kind: events.KindAlloc, Value: "a2"}, {Kind: events.KindNode, Value: "n1"}}, "eval/e1"},
		// A client update of several allocations: the node.
		{[]events.Key{{Kind: events.KindNode, Value: "n1"}, {Kind: events.KindAlloc, Value: "a1"}, {Kind: events.KindAlloc, Value: "a2"}}, "node/n1"},
		// The same alloc twice counts once.
		{[]events.Key{{Kind: events.KindAlloc, Value: "a1"}, {Kind: events.KindAlloc, Value: "a1"}}, "alloc/a1"},
		// Several of every kind: the first key.
		{[]events.Key{{Kind: events.KindEval, Value: "e1"}, {Kind: events.KindEval, Value: "e2"}}, "eval/e1"},
		// Unknown kinds come after the known ones.
		{[]events.Key{{Kind: "token", Value: "t1"}, ns}, "namespace/default"},
		{[]events.Key{{Kind: "token", Value: "t1"}}, "token/t1"},
	} {
		ev := &events.Event{Type: "T", Keys: tc.keys}
		if got := RecordKey(ev); got != tc.want {
			t.Errorf("RecordKey(%v) = %q, want %q", tc.keys, got, tc.want)
		}
	}
}

// TestPartitionMatchesKafka: Partition agrees with franz-go's Kafka-
// compatible default partitioner for keyed records.
func TestPartitionMatchesKafka(t *testing.T) {
	p := kgo.StickyKeyPartitioner(nil).ForTopic("t")
	for _, n := range []int{1, 3, 6, 7, 64} {
		for i := range 2000 {
			key := []byte(fmt.Sprintf("alloc/%d-%s", i, strings.Repeat("x", i%7)))
			want := p.Partition(&kgo.Record{Key: key}, n)
			if got := Partition(key, int32(n)); int(got) != want {
				t.Fatalf("Partition(%q, %d) = %d, Kafka's %d", key, n, got, want)
			}
		}
	}
}

func TestSequenceSortsAsString(t *testing.T) {
	ps := []Position{{1, 0}, {1, 10}, {2, 0}, {10, 3}, {999, 1}, {1 << 40, 0}, {^uint64(0), ^uint32(0)}}
	strs := make([]string, len(ps))
	for i, p := range ps {
		strs[i] = p.String()
		back, err := ParseSequence(strs[i])
		if err != nil || back != p {
			t.Fatalf("ParseSequence(%q) = %v, %v", strs[i], back, err)
		}
	}
	if !sort.StringsAreSorted(strs) {
		t.Fatalf("sequences do not sort as strings: %v", strs)
	}
	for _, bad := range []string{"", "1-0", "00000000000000000001_0000000000", "0000000000000000000x-0000000000"} {
		if _, err := ParseSequence(bad); err == nil {
			t.Errorf("ParseSequence(%q) accepted", bad)
		}
	}
}

func TestResumePoint(t *testing.T) {
	for _, tc := range []struct {
		tail map[int32]Position
		want Position
	}{
		{nil, Position{}},
		{map[int32]Position{0: {5, 1}}, Position{5, 1}},
		{map[int32]Position{0: {5, 1}, 1: {5, 2}, 3: {4, 9}}, Position{5, 2}},
		{map[int32]Position{2: {9, 0}, 1: {12, 0}}, Position{12, 0}},
	} {
		if got := resumePoint(tc.tail); got != tc.want {
			t.Errorf("resumePoint(%v) = %v, want %v", tc.tail, got, tc.want)
		}
	}
}

func TestSettingsValidate(t *testing.T) {
	ok := Settings{Brokers: []string{"k:9092"}}
	if err := ok.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		change func(*Settings)
		field  string
	}{
		{func(s *Settings) { s.Brokers = nil }, "mirror.brokers"},
		{func(s *Settings) { s.Brokers = []string{"k:1", "nohost"} }, "mirror.brokers[1]"},
		{func(s *Settings) { s.Format = "xml" }, "mirror.format"},
		{func(s *Settings) { s.Compression = "brotli" }, "mirror.compression"},
		{func(s *Settings) { s.Topic = "bad topic" }, "mirror.topic"},
		{func(s *Settings) { s.Partitions = -1 }, "mirror.partitions"},
		{func(s *Settings) { s.ReplicationFactor = -2 }, "mirror.replication_factor"},
		{func(s *Settings) { s.TLS = &TLS{CertFile: "c"} }, "mirror.tls.cert_file"},
		{func(s *Settings) { s.SASL = &SASL{Mechanism: "GSSAPI", Username: "u"} }, "mirror.sasl.mechanism"},
		{func(s *Settings) { s.SASL = &SASL{Mechanism: "plain"} }, "mirror.sasl.username"},
	} {
		s := ok
		s.Brokers = slices.Clone(ok.Brokers)
		tc.change(&s)
		err := s.Validate()
		se, isSE := err.(*SettingsError)
		if !isSE || se.Field != tc.field {
			t.Errorf("Validate = %v, want an error naming %s", err, tc.field)
		}
	}
}
