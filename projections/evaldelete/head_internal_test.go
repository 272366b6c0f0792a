package evaldelete

import (
	"reflect"
	"strings"
	"testing"

	"github.com/ordoplane/ordo/events"
)

// head decodes the same fields as events.Evaluation (same msgpack keys),
// and holds every field the fast filter path reads: otherwise a filter
// would see an empty field where the eval has a value.
func TestHeadMatchesEvaluation(t *testing.T) {
	full := reflect.TypeFor[events.Evaluation]()
	ht := reflect.TypeFor[head]()
	tag := func(f reflect.StructField) string { return strings.Split(f.Tag.Get("msgpack"), ",")[0] }
	for i := range ht.NumField() {
		hf := ht.Field(i)
		ef, ok := full.FieldByName(hf.Name)
		if !ok || tag(ef) != tag(hf) || ef.Type != hf.Type {
			t.Errorf("head.%s (msgpack %q) does not match events.Evaluation's field", hf.Name, tag(hf))
		}
	}
	for name := range stringFields {
		if _, ok := ht.FieldByName(name); !ok {
			t.Errorf("the fast path reads %s, which head does not decode", name)
		}
	}
}
