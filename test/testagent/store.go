package testagent

import (
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/all"
	"github.com/ordoplane/ordo/projections/namespaces"
	"github.com/ordoplane/ordo/projections/rebuild"
	"github.com/ordoplane/ordo/storage/archive"
	"github.com/ordoplane/ordo/storage/kv"
)

// Upserts counts the NamespaceUpserted events per namespace in the archive of r.
func Upserts(r kv.Reader) (map[string]int, error) {
	counts := map[string]int{}
	err := archive.Scan(r, 1, 0, func(index uint64, seq uint32, data []byte) error {
		ev, err := events.DecodeEvent(data)
		if err != nil {
			return fmt.Errorf("archive %d/%d: %w", index, seq, err)
		}
		if ev.Index != index || ev.Seq != seq {
			return fmt.Errorf("archive key %d/%d holds an event stamped %d/%d", index, seq, ev.Index, ev.Seq)
		}
		if ev.Type != "NamespaceUpserted" {
			return nil
		}
		p, err := events.Decode(ev)
		if err != nil {
			return fmt.Errorf("archive %d/%d: %w", index, seq, err)
		}
		counts[p.(*events.NamespaceUpserted).Namespace.Name]++
		return nil
	})
	return counts, err
}

// Checksums returns the checksum of every projection in r, by name.
func Checksums(r kv.Reader) (map[string][32]byte, error) {
	out := map[string][32]byte{}
	for _, p := range all.Projections() {
		sum, err := projections.Checksum(r, p)
		if err != nil {
			return nil, fmt.Errorf("checksum %s: %w", p.Name(), err)
		}
		out[p.Name()] = sum
	}
	return out, nil
}

// CheckProjections rebuilds the archive of r into a fresh store in dir and
// fails t unless every projection's checksum equals the one in r. It
// returns r's checksums.
func CheckProjections(t testing.TB, r kv.Reader, dir string) map[string][32]byte {
	t.Helper()
	live, err := Checksums(r)
	if err != nil {
		t.Fatal(err)
	}
	fresh, err := kv.Open(dir, kv.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	defer fresh.Close()
	st, err := rebuild.Rebuild(r, fresh, all.Projections(), 0, nil)
	if err != nil {
		t.Fatalf("rebuild: %v", err)
	}
	rebuilt, err := Checksums(fresh)
	if err != nil {
		t.Fatal(err)
	}
	for name, sum := range live {
		if got := rebuilt[name]; got != sum {
			t.Errorf("projection %s: live checksum %x, rebuilt from the archive (%d events, last index %d) %x",
				name, sum[:8], st.Events, st.Last, got[:8])
		}
	}
	return live
}

// CheckAcked fails t unless every acknowledged name has exactly one
// NamespaceUpserted event in counts and no name has more than one; where
// names the store being checked.
func CheckAcked(t testing.TB, where string, acked map[string]uint64, counts map[string]int) {
	t.Helper()
	var missing, dup []string
	for name := range acked {
		if counts[name] != 1 {
			missing = append(missing, fmt.Sprintf("%s(%d)", name, counts[name]))
		}
	}
	for name, n := range counts {
		if n > 1 {
			dup = append(dup, fmt.Sprintf("%s(%d)", name, n))
		}
	}
	sort.Strings(missing)
	sort.Strings(dup)
	if len(missing) > 0 {
		t.Errorf("%s: %d of %d acknowledged writes not archived exactly once: %s",
			where, len(missing), len(acked), abbreviate(missing))
	}
	if len(dup) > 0 {
		t.Errorf("%s: namespaces upserted more than once: %s", where, abbreviate(dup))
	}
}

// CheckListed fails t unless every acknowledged name is in listed.
func CheckListed(t testing.TB, where string, acked map[string]uint64, listed map[string]bool) {
	t.Helper()
	var missing []string
	for name := range acked {
		if !listed[name] {
			missing = append(missing, name)
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("%s: %d of %d acknowledged namespaces not listed: %s", where, len(missing), len(acked), abbreviate(missing))
	}
}

// StoreNamespaces lists the namespaces projection of r.
func StoreNamespaces(r kv.Reader) (map[string]bool, error) {
	list, err := namespaces.List(projections.NewView(r), "")
	if err != nil {
		return nil, err
	}
	out := make(map[string]bool, len(list))
	for _, ns := range list {
		out[ns.Name] = true
	}
	return out, nil
}

func abbreviate(list []string) string {
	const show = 20
	if len(list) <= show {
		return strings.Join(list, " ")
	}
	return fmt.Sprintf("%s … and %d more", strings.Join(list[:show], " "), len(list)-show)
}
