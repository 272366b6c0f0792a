package raftstore

import (
	"bytes"
	"errors"
	"math"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"github.com/ordoplane/ordo/storage/storagetest"
)

func codecCases() []*raft.Log {
	return []*raft.Log{
		{},
		{Index: 1, Term: 1, Type: raft.LogNoop},
		{Index: 2, Term: 300, Type: raft.LogCommand, Data: []byte{}, Extensions: []byte{}},
		{Index: 3, Term: math.MaxUint64, Type: raft.LogType(255), Data: bytes.Repeat([]byte{0xab}, 300),
			Extensions: []byte("ext"), AppendedAt: time.Unix(1_700_000_000, 999_999_999)},
		{Index: 4, Term: 2, Data: []byte("x"), AppendedAt: time.Unix(-1, 1)},
		{Index: 5, Term: 2, AppendedAt: time.Unix(0, 0)},
		{Index: 6, Term: 2, AppendedAt: time.Date(9999, 12, 31, 23, 59, 59, 1, time.UTC)},
		{Index: 7, Term: 2, AppendedAt: time.Date(1, 1, 1, 0, 0, 0, 1, time.UTC)},
		storagetest.Entry(math.MaxUint64, 9),
	}
}

// sameLog is storagetest.EqualLog plus the nil-ness of slices and the
// zero time, which this codec also keeps.
func sameLog(got, want *raft.Log) string {
	if d := storagetest.EqualLog(got, want); d != "" {
		return d
	}
	if (got.Data == nil) != (want.Data == nil) {
		return "Data nil-ness differs"
	}
	if (got.Extensions == nil) != (want.Extensions == nil) {
		return "Extensions nil-ness differs"
	}
	if want.AppendedAt.IsZero() && got.AppendedAt != (time.Time{}) {
		return "zero AppendedAt not kept"
	}
	return ""
}

func TestCodecRoundTrip(t *testing.T) {
	for _, want := range codecCases() {
		b := appendLog(nil, want)
		if len(b) != encodedLen(want) {
			t.Errorf("index %d: encoded %d bytes, encodedLen says %d", want.Index, len(b), encodedLen(want))
		}
		var got raft.Log
		if err := decodeLog(want.Index, b, &got); err != nil {
			t.Fatalf("index %d: decode: %v", want.Index, err)
		}
		if d := sameLog(&got, want); d != "" {
			t.Errorf("index %d: %s", want.Index, d)
		}
		// Each slice has its own capacity: appending to one leaves the
		// other alone.
		if got.Data != nil && got.Extensions != nil {
			ext := string(got.Extensions)
			_ = append(got.Data, 'X')
			if string(got.Extensions) != ext {
				t.Errorf("index %d: appending to Data changed Extensions", want.Index)
			}
		}
	}
}

func TestCodecSize(t *testing.T) {
	// 200-byte payload, a current timestamp: 1+1+1+2+200+1+5+5 bytes.
	l := &raft.Log{Index: 1 << 30, Term: 5, Data: make([]byte, 200), AppendedAt: time.Unix(1_760_000_000, 123_456_789)}
	if n := encodedLen(l); n > 216 {
		t.Errorf("200-byte entry encodes to %d bytes, want at most 216", n)
	}
}

func TestDecodeErrors(t *testing.T) {
	good := appendLog(nil, &raft.Log{Term: 1, Data: []byte("abc"), Extensions: []byte("e"), AppendedAt: time.Unix(5, 6)})
	for name, b := range map[string][]byte{
		"empty":           {},
		"version 0":       {0},
		"version 2":       append([]byte{2}, good[1:]...),
		"no term":         {1},
		"no type":         {1, 1},
		"no data":         {1, 1, 0},
		"data too long":   {1, 1, 0, 9, 'a'},
		"no extensions":   {1, 1, 0, 0},
		"no appended at":  {1, 1, 0, 0, 0},
		"no seconds":      {1, 1, 0, 0, 0, 1},
		"too many nanos":  {1, 1, 0, 0, 0, 0x81, 0x94, 0xeb, 0xdc, 0x03, 0},
		"trailing":        append(append([]byte(nil), good...), 0),
		"uvarint overlow": {1, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01},
	} {
		var l raft.Log
		err := decodeLog(1, b, &l)
		if !errors.Is(err, errCorrupt) {
			t.Errorf("%s: decode(%x) = %v, want errCorrupt", name, b, err)
		}
	}
	for i := range good {
		var l raft.Log
		if err := decodeLog(1, good[:i], &l); !errors.Is(err, errCorrupt) {
			t.Errorf("truncated to %d bytes: %v, want errCorrupt", i, err)
		}
	}
}

func TestGetLogOfCorruptEntry(t *testing.T) {
	s, err := Open(t.TempDir(), Config{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.db.Set(appendLogKey(nil, 7), []byte{9, 9}, nil); err != nil {
		t.Fatal(err)
	}
	var l raft.Log
	err = s.GetLog(7, &l)
	if !errors.Is(err, errCorrupt) || errors.Is(err, raft.ErrLogNotFound) {
		t.Fatalf("GetLog(corrupt) = %v, want errCorrupt", err)
	}
}

// FuzzDecodeLog: decoding never panics, and decode→encode→decode is stable.
func FuzzDecodeLog(f *testing.F) {
	for _, l := range codecCases() {
		f.Add(appendLog(nil, l))
	}
	f.Add([]byte{1, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		var first raft.Log
		if err := decodeLog(42, b, &first); err != nil {
			if !errors.Is(err, errCorrupt) {
				t.Fatalf("decode error %v does not wrap errCorrupt", err)
			}
			return
		}
		var second raft.Log
		if err := decodeLog(42, appendLog(nil, &first), &second); err != nil {
			t.Fatalf("re-decode: %v", err)
		}
		if d := sameLog(&second, &first); d != "" {
			t.Fatalf("decode→encode→decode: %s", d)
		}
	})
}

// FuzzLogRoundTrip: every raft.Log survives encode→decode.
func FuzzLogRoundTrip(f *testing.F) {
	f.Add(uint64(1), uint64(1), uint8(0), []byte("data"), []byte(nil), int64(1_700_000_000), int64(5), true)
	f.Add(uint64(0), uint64(0), uint8(5), []byte(nil), []byte("ext"), int64(-1), int64(0), false)
	f.Fuzz(func(t *testing.T, index, term uint64, typ uint8, data, ext []byte, sec, nsec int64, hasTime bool) {
		want := &raft.Log{Index: index, Term: term, Type: raft.LogType(typ), Data: data, Extensions: ext}
		if hasTime {
			want.AppendedAt = time.Unix(sec, nsec)
		}
		var got raft.Log
		if err := decodeLog(index, appendLog(nil, want), &got); err != nil {
			t.Fatalf("decode: %v", err)
		}
		if d := storagetest.EqualLog(&got, want); d != "" {
			t.Fatalf("round trip: %s", d)
		}
	})
}
