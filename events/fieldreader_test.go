package events

import "testing"

// countedRow is a FieldDecoder that counts the times it read itself.
type countedRow struct {
	Name  string `msgpack:"n"`
	reads int
}

func (c *countedRow) DecodeFields(r *FieldReader) bool {
	c.reads++
	return r.Fields(func(key []byte) bool {
		if string(key) == "n" {
			return r.Str(&c.Name)
		}
		return false // anything else: reflection
	})
}

// TestUnmarshalReadsFieldDecoders: Unmarshal hands a FieldDecoder its
// bytes, and a form it does not take goes to reflection.
func TestUnmarshalReadsFieldDecoders(t *testing.T) {
	var c countedRow
	if err := Unmarshal([]byte{0x81, 0xa1, 'n', 0xa2, 'o', 'k'}, &c); err != nil || c.Name != "ok" || c.reads != 1 {
		t.Fatalf("decoded %+v, %v", c, err)
	}
	c = countedRow{}
	if err := Unmarshal([]byte{0x82, 0xa1, 'n', 0xa1, 'x', 0xa1, 'z', 0x01}, &c); err != nil || c.Name != "x" || c.reads != 1 {
		t.Fatalf("reflection's fallback decoded %+v, %v", c, err)
	}
}
