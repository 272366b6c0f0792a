package events

import (
	"fmt"

	"github.com/vmihailenco/msgpack/v5"
)

var _ msgpack.CustomDecoder = (*Event)(nil)

// DecodeMsgpack decodes the envelope without reflection: the archive is read
// far more often than it is written (replays, the event stream, the mirror).
// It accepts exactly what the struct tags encode and skips unknown keys.
func (ev *Event) DecodeMsgpack(dec *msgpack.Decoder) error {
	n, err := dec.DecodeMapLen()
	if err != nil {
		return err
	}
	*ev = Event{}
	for range max(n, 0) {
		key, err := dec.DecodeString()
		if err != nil {
			return err
		}
		switch key {
		case "ty":
			ev.Type, err = dec.DecodeString()
		case "v":
			ev.Version, err = dec.DecodeUint16()
		case "i":
			ev.Index, err = dec.DecodeUint64()
		case "s":
			ev.Seq, err = dec.DecodeUint32()
		case "t":
			ev.Time, err = dec.DecodeInt64()
		case "id":
			ev.ID, err = dec.DecodeString()
		case "a":
			ev.Actor, err = dec.DecodeString()
		case "c":
			ev.CorrelationID, err = dec.DecodeString()
		case "k":
			ev.Keys, err = decodeKeys(dec)
		case "p":
			ev.Payload, err = decodePayload(dec)
		default:
			err = dec.Skip()
		}
		if err != nil {
			return fmt.Errorf("event field %q: %w", key, err)
		}
	}
	return nil
}

func decodeKeys(dec *msgpack.Decoder) ([]Key, error) {
	n, err := dec.DecodeArrayLen()
	if err != nil || n < 0 {
		return nil, err // nil: no keys
	}
	keys := make([]Key, n)
	for i := range keys {
		m, err := dec.DecodeMapLen()
		if err != nil {
			return nil, err
		}
		for range max(m, 0) {
			f, err := dec.DecodeString()
			if err != nil {
				return nil, err
			}
			switch f {
			case "k":
				keys[i].Kind, err = dec.DecodeString()
			case "v":
				keys[i].Value, err = dec.DecodeString()
			default:
				err = dec.Skip()
			}
			if err != nil {
				return nil, err
			}
		}
	}
	return keys, nil
}

// decodePayload reads the raw payload; an encoded nil is no payload, as
// reflection decodes it.
func decodePayload(dec *msgpack.Decoder) (msgpack.RawMessage, error) {
	c, err := dec.PeekCode()
	if err != nil {
		return nil, err
	}
	if c == 0xc0 {
		return nil, dec.DecodeNil()
	}
	if r, ok := dec.Buffered().(*sliceReader); ok && r.slicePayloads {
		return r.takeValue()
	}
	return dec.DecodeRaw()
}
