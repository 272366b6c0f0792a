package export_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"reflect"
	"testing"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/history/export"
)

// seedFile writes a small history file by hand: real event envelopes and,
// with state, two state rows.
func seedFile(tb testing.TB, state bool) []byte {
	tb.Helper()
	h := export.Header{ClusterID: "c", ClusterIDSource: export.ClusterFirstServer, From: 1, FirstIndex: 1, LastIndex: 3, Events: 3, Created: created}
	if state {
		h.From, h.FirstIndex, h.Events, h.StateIndex, h.StateRows = 2, 2, 2, 1, 2
	}
	var b bytes.Buffer
	w, err := export.NewWriter(&b, h)
	if err != nil {
		tb.Fatal(err)
	}
	if state {
		w.WriteState([]byte("meta/applied"), []byte{0, 0, 0, 0, 0, 0, 0, 1})
		w.WriteState([]byte("t/namespaces/default"), []byte("row"))
	}
	for i := h.FirstIndex; i <= 3; i++ {
		ev, err := events.New(fmt.Sprintf("ev-%d", i), &events.NamespaceUpserted{Namespace: events.Namespace{Name: fmt.Sprint("ns-", i)}})
		if err != nil {
			tb.Fatal(err)
		}
		ev.Index = i
		data, err := events.EncodeEvent(&ev)
		if err != nil {
			tb.Fatal(err)
		}
		if err := w.WriteEvent(i, 0, data); err != nil {
			tb.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		tb.Fatal(err)
	}
	return b.Bytes()
}

type decoded struct {
	h    export.Header
	recs []export.Record
}

// decodeAll reads a whole file, copying each record.
func decodeAll(b []byte) (decoded, error) {
	r, err := export.NewReader(bytes.NewReader(b))
	if err != nil {
		return decoded{}, err
	}
	d := decoded{h: r.Header()}
	for {
		rec, err := r.Next()
		if err == io.EOF {
			return d, nil
		}
		if err != nil {
			return d, err
		}
		rec.Data, rec.Key, rec.Value = bytes.Clone(rec.Data), bytes.Clone(rec.Key), bytes.Clone(rec.Value)
		d.recs = append(d.recs, rec)
	}
}

func encodeAll(tb testing.TB, d decoded) []byte {
	tb.Helper()
	var b bytes.Buffer
	w, err := export.NewWriter(&b, d.h)
	if err != nil {
		tb.Fatalf("encode a header that decoded: %v", err)
	}
	for _, rec := range d.recs {
		if rec.Kind == export.KindState {
			err = w.WriteState(rec.Key, rec.Value)
		} else {
			err = w.WriteEvent(rec.Index, rec.Seq, rec.Data)
		}
		if err != nil {
			tb.Fatalf("encode a record that decoded: %v", err)
		}
	}
	if err := w.Close(); err != nil {
		tb.Fatalf("close a file that decoded: %v", err)
	}
	return b.Bytes()
}

// FuzzDecode: the decoder never panics, fails only with its documented
// errors, and a file it accepts re-encodes into one that decodes to the
// same header and records, and encodes to the same bytes again.
func FuzzDecode(f *testing.F) {
	for _, state := range []bool{false, true} {
		b := seedFile(f, state)
		f.Add(b)
		f.Add(b[:len(b)/2])
		f.Add(b[:len(b)-1])
	}
	f.Add([]byte(export.Magic))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		d, err := decodeAll(b)
		if err != nil {
			for _, known := range []error{export.ErrMagic, export.ErrVersion, export.ErrTruncated, export.ErrCorrupt, export.ErrChecksum} {
				if errors.Is(err, known) {
					return
				}
			}
			t.Fatalf("an error that is none of the documented ones: %v", err)
		}
		again := encodeAll(t, d)
		d2, err := decodeAll(again)
		if err != nil {
			t.Fatalf("re-encoded file does not decode: %v", err)
		}
		d.h.FormatVersion, d2.h.FormatVersion = 0, 0
		if !reflect.DeepEqual(d.h, d2.h) || len(d.recs) != len(d2.recs) {
			t.Fatalf("header or count changed: %+v (%d) → %+v (%d)", d.h, len(d.recs), d2.h, len(d2.recs))
		}
		for i := range d.recs {
			x, y := d.recs[i], d2.recs[i]
			if x.Kind != y.Kind || x.Index != y.Index || x.Seq != y.Seq || !bytes.Equal(x.Data, y.Data) ||
				!bytes.Equal(x.Key, y.Key) || !bytes.Equal(x.Value, y.Value) {
				t.Fatalf("record %d changed", i)
			}
		}
		if third := encodeAll(t, d2); !bytes.Equal(third, again) {
			t.Fatal("encoding is not stable")
		}
	})
}
