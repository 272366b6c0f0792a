package events

import "github.com/vmihailenco/msgpack/v5"

// The payloads of a scheduling history's most frequent events decode
// straight from bytes too (see Allocation.DecodeMsgpack): their slices
// allocated once, their elements with their own decoders from bytes;
// anything else is decoded by reflection. FuzzPayloadDecoders holds them
// to it.

var (
	_ msgpack.CustomDecoder = (*AllocsPlaced)(nil)
	_ msgpack.CustomDecoder = (*AllocsClientUpdated)(nil)
	_ msgpack.CustomDecoder = (*EvalsUpserted)(nil)
)

type (
	plainAllocsPlaced        AllocsPlaced
	plainAllocsClientUpdated AllocsClientUpdated
	plainEvalsUpserted       EvalsUpserted
)

// DecodeMsgpack implements msgpack.CustomDecoder.
func (p *AllocsPlaced) DecodeMsgpack(dec *msgpack.Decoder) error {
	if r := bytesOf(dec); r != nil {
		d := fastReader{b: r.b, i: r.i}
		if p.decodeFast(&d) {
			r.i = d.i
			return nil
		}
	}
	return dec.Decode((*plainAllocsPlaced)(p))
}

func (p *AllocsPlaced) decodeFast(d *fastReader) bool {
	strs := &stringSpans{src: d.b}
	ok := d.fields(func(key []byte) bool {
		switch string(key) {
		case "eval":
			return d.strTo(strs, &p.EvalID)
		case "allocs":
			return decodeSlice(d, &p.Allocs, (*Allocation).decodeFast)
		}
		return d.skip()
	})
	if ok {
		strs.set()
	}
	return ok
}

// DecodeMsgpack implements msgpack.CustomDecoder.
func (p *AllocsClientUpdated) DecodeMsgpack(dec *msgpack.Decoder) error {
	if r := bytesOf(dec); r != nil {
		d := fastReader{b: r.b, i: r.i}
		if p.decodeFast(&d) {
			r.i = d.i
			return nil
		}
	}
	return dec.Decode((*plainAllocsClientUpdated)(p))
}

func (p *AllocsClientUpdated) decodeFast(d *fastReader) bool {
	strs := &stringSpans{src: d.b}
	ok := d.fields(func(key []byte) bool {
		switch string(key) {
		case "node":
			return d.strTo(strs, &p.NodeID)
		case "up":
			return decodeSlice(d, &p.Updates, (*AllocClientUpdate).decodeFast)
		}
		return d.skip()
	})
	if ok {
		strs.set()
	}
	return ok
}

// DecodeMsgpack implements msgpack.CustomDecoder.
func (p *EvalsUpserted) DecodeMsgpack(dec *msgpack.Decoder) error {
	if r := bytesOf(dec); r != nil {
		d := fastReader{b: r.b, i: r.i}
		if p.decodeFast(&d) {
			r.i = d.i
			return nil
		}
	}
	return dec.Decode((*plainEvalsUpserted)(p))
}

func (p *EvalsUpserted) decodeFast(d *fastReader) bool {
	return d.fields(func(key []byte) bool {
		if string(key) == "evals" {
			return decodeSlice(d, &p.Evals, (*Evaluation).decodeFast)
		}
		return d.skip()
	})
}
