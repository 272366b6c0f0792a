package projectionstest

import (
	"reflect"
	"testing"

	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/rebuild"
	"github.com/ordoplane/ordo/storage/kv"
)

// Keys returns every key of table in v, in key order.
func Keys(tb testing.TB, v projections.View, table string) []string {
	tb.Helper()
	var out []string
	if err := v.Scan(table, "", false, func(k string, _ projections.Row) error {
		out = append(out, k)
		return nil
	}); err != nil {
		tb.Fatal(err)
	}
	return out
}

// CheckRebuildEqualsLive replays live's archive into an empty store and
// fails tb unless the tables of projs come out byte-identical to live's.
func CheckRebuildEqualsLive(tb testing.TB, live *kv.Store, projs ...projections.Projection) {
	tb.Helper()
	dst := OpenStore(tb)
	if _, err := rebuild.Rebuild(live, dst, projs, 0, nil); err != nil {
		tb.Fatal(err)
	}
	if !reflect.DeepEqual(Checksums(tb, dst, projs), Checksums(tb, live, projs)) {
		tb.Fatal("rebuilt projections differ from live")
	}
}
