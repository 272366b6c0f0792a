package events

import (
	"bytes"
	"fmt"
	"sync"

	"github.com/vmihailenco/msgpack/v5"
)

// MaxEncodedSize bounds what the decoders accept, so a corrupt length cannot
// make them allocate without limit.
const MaxEncodedSize = 64 << 20

var encPool = sync.Pool{New: func() any {
	var buf bytes.Buffer
	enc := msgpack.NewEncoder(&buf)
	// Go map iteration order is random; sorted keys make equal values
	// encode to equal bytes.
	enc.SetSortMapKeys(true)
	return &pooledEncoder{buf: &buf, enc: enc}
}}

type pooledEncoder struct {
	buf *bytes.Buffer
	enc *msgpack.Encoder
}

func encode(v any) ([]byte, error) {
	pe := encPool.Get().(*pooledEncoder)
	defer encPool.Put(pe)
	pe.buf.Reset()
	if err := pe.enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.Clone(pe.buf.Bytes()), nil
}

// Marshal encodes v as msgpack with map keys sorted, so equal values always
// encode to equal bytes. Payloads and projection rows are encoded with it:
// msgpack.Marshal writes maps in random order, which would make rebuilt
// projections differ from live ones.
func Marshal(v any) ([]byte, error) { return encode(v) }

func decode(data []byte, v any) error {
	if len(data) > MaxEncodedSize {
		return fmt.Errorf("%d bytes exceeds %d", len(data), MaxEncodedSize)
	}
	dec := msgpack.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(v); err != nil {
		return err
	}
	return nil
}

// EncodeEntry encodes e for the raft log.
func EncodeEntry(e *Entry) ([]byte, error) {
	b, err := encode(e)
	if err != nil {
		return nil, fmt.Errorf("encode entry %s: %w", e.CommandID, err)
	}
	return b, nil
}

// DecodeEntry decodes an entry written by EncodeEntry.
func DecodeEntry(data []byte) (*Entry, error) {
	var e Entry
	if err := decode(data, &e); err != nil {
		return nil, fmt.Errorf("decode entry: %w", err)
	}
	return &e, nil
}

// EncodeEvent encodes ev for the archive.
func EncodeEvent(ev *Event) ([]byte, error) {
	b, err := encode(ev)
	if err != nil {
		return nil, fmt.Errorf("encode event %s: %w", ev.ID, err)
	}
	return b, nil
}

// DecodeEvent decodes an event written by EncodeEvent.
func DecodeEvent(data []byte) (*Event, error) {
	var ev Event
	if err := decode(data, &ev); err != nil {
		return nil, fmt.Errorf("decode event: %w", err)
	}
	return &ev, nil
}
