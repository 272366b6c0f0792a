package events_test

import (
	"bytes"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/ordoplane/ordo/events"
)

// everyKind holds a value of every msgpack encoding: each size of int,
// string, binary, array, map and extension.
func everyKind() map[string]any {
	return map[string]any{
		"nil": nil, "bool": true, "fixint": 5, "negfixint": -3,
		"u8": uint8(200), "u16": uint16(60000), "u32": uint32(4e9), "u64": uint64(math.MaxUint64),
		"i8": int8(-100), "i16": int16(-30000), "i32": int32(-2e9), "i64": int64(math.MinInt64),
		"f32": float32(1.5), "f64": 2.25,
		"fixstr": "abc", "str8": strings.Repeat("s", 200), "str16": strings.Repeat("s", 300), "str32": strings.Repeat("s", 70000),
		"bin8": []byte("b"), "bin16": bytes.Repeat([]byte("b"), 300), "bin32": bytes.Repeat([]byte("b"), 70000),
		"fixarray": []int{1, 2}, "array16": make([]int, 20), "array32": make([]bool, 70000),
		"fixmap": map[string]int{"a": 1}, "map16": bigMap(20), "map32": bigMap(70000),
		"ext8":       time.Unix(1, 2), // timestamp extension (fixext8)
		"ext-fixed4": time.Unix(1, 0), // fixext4
		"ext8-96":    time.Unix(1<<40, 1),
		"nested":     []any{map[string]any{"x": []any{[]any{}, map[string]any{}}}},
	}
}

func bigMap(n int) map[int]bool {
	m := make(map[int]bool, n)
	for i := range n {
		m[i] = true
	}
	return m
}

func TestDecodeAcceptsEveryEncoding(t *testing.T) {
	for name, v := range everyKind() {
		raw, err := events.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		ev := events.Event{Type: "T", Version: 1, Payload: raw}
		data, err := events.EncodeEvent(&ev)
		if err != nil {
			t.Fatal(err)
		}
		got, err := events.DecodeEvent(data)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		// A msgpack nil payload decodes as a nil RawMessage.
		if !bytes.Equal(normEvent(*got).Payload, raw) {
			t.Errorf("%s: payload changed", name)
		}
		// Every strict prefix is truncated and must fail without panicking.
		for _, n := range []int{len(data) - 1, len(data) - len(raw)/2 - 1, len(data) - len(raw), 1} {
			if _, err := events.DecodeEvent(data[:n]); err == nil {
				t.Errorf("%s: decoded a %d-byte prefix of %d", name, n, len(data))
			}
		}
	}
}

func TestDecodeBoundsAllocation(t *testing.T) {
	// The msgpack decoder preallocates what a length prefix claims; these
	// inputs once made it ask for terabytes or overflow the stack.
	deep := append([]byte{0x81, 0xa2, 'e', 'v', 0x91, 0x81, 0xa1, 'p'}, bytes.Repeat([]byte{0x91}, 10<<20)...)
	for name, data := range map[string][]byte{
		"array32 of events":   {0x81, 0xa2, 'e', 'v', 0xdd, 0xff, 0xff, 0xff, 0xff},
		"array16 of events":   {0x81, 0xa2, 'e', 'v', 0xdc, 0xff, 0xff},
		"map32 of fields":     {0xdf, 0xff, 0xff, 0xff, 0xff},
		"array32 of keys":     {0x81, 0xa1, 'k', 0xdd, 0x0f, 0xff, 0xff, 0xff},
		"str32":               {0x81, 0xa3, 'c', 'i', 'd', 0xdb, 0xff, 0xff, 0xff, 0xff},
		"deeply nested":       deep,
		"just too deep":       append(append([]byte{0x81, 0xa2, 'e', 'v', 0x91, 0x81, 0xa1, 'p'}, bytes.Repeat([]byte{0x91}, 300)...), 0xc0),
		"reserved code 0xc1":  {0x81, 0xa1, 't', 0xc1},
		"ext32 past the end":  {0x81, 0xa1, 'p', 0xc9, 0x00, 0x01, 0x00, 0x00, 0x01},
		"fixext16 truncated":  {0x81, 0xa1, 'p', 0xd8, 0x01, 0x00},
		"children past end":   {0x81, 0xa1, 'p', 0x9f, 0xc0},
		"map with odd length": {0x82, 0xa1, 't', 0x01, 0xa1},
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := events.DecodeEntry(data); err == nil {
				t.Error("DecodeEntry succeeded")
			}
			if _, err := events.DecodeEvent(data); err == nil {
				t.Error("DecodeEvent succeeded")
			}
		})
	}
	// Nesting within the limit still decodes.
	var nested any = "leaf"
	for range 100 {
		nested = []any{nested}
	}
	raw, err := msgpack.Marshal(nested)
	if err != nil {
		t.Fatal(err)
	}
	data, _ := events.EncodeEntry(&events.Entry{CommandID: "c", Events: []events.Event{{Type: "T", Version: 1, Payload: raw}}})
	if _, err := events.DecodeEntry(data); err != nil {
		t.Fatalf("100 levels of nesting: %v", err)
	}
}
