package events

import (
	"reflect"
	"sort"

	"github.com/vmihailenco/msgpack/v5"
)

// msgpack's SetSortMapKeys sorts only map[string]string, map[string]bool
// and map[string]any; every other map is written in Go's random iteration
// order, so two servers (or a live projection and its rebuild) would encode
// equal values to different bytes. The map types of payloads and rows are
// registered here with an encoder that writes keys sorted, exactly as
// SetSortMapKeys does for the types it handles. Add a payload's new map
// type to sortedMapTypes; TestMapsEncodeSorted checks the registered ones.
var sortedMapTypes = []any{
	map[string]int(nil),
	map[string]*AllocMetric(nil),
	map[string]*TaskState(nil),
	map[string]*DeploymentState(nil),
	map[string]DriverInfo(nil),
	map[string][]byte(nil),
	map[string]SimInstanceType(nil),
	map[string]int64(nil),             // deployment.go
	map[string]*CSIInfo(nil),          // csi.go
	map[string]*VolumeRequest(nil),    // csi.go
	map[string][]string(nil),          // service.go
	map[string]*ClientHostVolume(nil), // network.go
}

func init() { SortMapKeys(sortedMapTypes...) }

// SortMapKeys makes Marshal write maps of the types of maps (maps with
// string keys, given as nil values) with their keys sorted, as it does
// those of the payloads: for the map types of other packages' encoded
// values, a projection's rows. Call it from an init function.
func SortMapKeys(maps ...any) {
	for _, m := range maps {
		msgpack.Register(m, encodeSortedMap, nil)
	}
}

// encodeSortedMap writes a map with string keys in key order.
func encodeSortedMap(e *msgpack.Encoder, v reflect.Value) error {
	if v.IsNil() {
		return e.EncodeNil()
	}
	if err := e.EncodeMapLen(v.Len()); err != nil {
		return err
	}
	keys := v.MapKeys()
	sort.Slice(keys, func(i, j int) bool { return keys[i].String() < keys[j].String() })
	for _, k := range keys {
		if err := e.EncodeString(k.String()); err != nil {
			return err
		}
		if err := e.EncodeValue(v.MapIndex(k)); err != nil {
			return err
		}
	}
	return nil
}
