package order_test

import (
	"errors"
	"sort"
	"testing"

	"github.com/ordoplane/ordo/projections/order"
)

func TestKeysSortByCreation(t *testing.T) {
	keys := []string{order.Key(10, "a"), order.Key(9, "z"), order.Key(100, "a"), order.Key(10, "0")}
	sort.Strings(keys)
	want := []string{order.Key(9, "z"), order.Key(10, "0"), order.Key(10, "a"), order.Key(100, "a")}
	for i := range keys {
		if keys[i] != want[i] {
			t.Fatalf("sorted %q, want %q", keys, want)
		}
	}
}

func TestTokenRoundTrip(t *testing.T) {
	for _, k := range []string{order.Key(0, "x"), order.Key(42, "abc.def"), order.Key(1<<63, "id-1")} {
		tok := order.Token(mustSplit(t, k))
		back, err := order.ParseToken(tok)
		if err != nil || back != k {
			t.Fatalf("ParseToken(%q) = %q, %v; want %q", tok, back, err, k)
		}
	}
	for _, bad := range []string{"", "12", "12.", "x.id", "-1.id", ".id", "1.a\x00b"} {
		if _, err := order.ParseToken(bad); !errors.Is(err, order.ErrBadToken) {
			t.Errorf("ParseToken(%q) = %v, want ErrBadToken", bad, err)
		}
	}
	if _, _, err := order.Split("nope"); !errors.Is(err, order.ErrBadToken) {
		t.Errorf("Split(nope) = %v", err)
	}
}

func mustSplit(t *testing.T, k string) (uint64, string) {
	t.Helper()
	i, id, err := order.Split(k)
	if err != nil {
		t.Fatal(err)
	}
	return i, id
}
