package namespace_test

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/commands/commandstest"
	"github.com/ordoplane/ordo/commands/namespace"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/all"
	"github.com/ordoplane/ordo/projections/fsm"
	"github.com/ordoplane/ordo/projections/namespaces"
	"github.com/ordoplane/ordo/projections/nsguard"
	"github.com/ordoplane/ordo/storage/kv"
	"github.com/ordoplane/ordo/storage/raftlog"
)

// fsmStore opens a store in a temp dir and applies one entry per payload
// through the FSM, so rows are written exactly as a server writes them.
func fsmStore(t *testing.T, payloads ...events.Payload) *kv.Store {
	t.Helper()
	store, err := kv.Open(t.TempDir(), kv.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	f, err := fsm.New(store, fsm.Config{
		Projections: all.Projections(), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.Close)
	for i, p := range payloads {
		ev, err := events.New(fmt.Sprintf("ev-%d", i), p)
		if err != nil {
			t.Fatal(err)
		}
		entry := events.Entry{Time: int64(i + 1), CommandID: fmt.Sprintf("cmd-%d", i), Events: []events.Event{ev}}
		data, err := events.EncodeEntry(&entry)
		if err != nil {
			t.Fatal(err)
		}
		res := f.Apply([]raftlog.Log{{Index: uint64(i + 1), Term: 1, Data: data}})
		if r := res[0].(fsm.Result); r.Err != nil {
			t.Fatalf("apply %T: %v", p, r.Err)
		}
	}
	return store
}

// view returns a View over a snapshot of store, closed at cleanup.
func view(t *testing.T, store *kv.Store) projections.View {
	t.Helper()
	snap := store.Snapshot()
	t.Cleanup(func() { snap.Close() })
	return projections.NewView(snap)
}

func upserted(name string) *events.NamespaceUpserted {
	return &events.NamespaceUpserted{Namespace: events.Namespace{Name: name}}
}

func noIDs() string { panic("namespace commands must not mint ids") }

func TestApplyValidate(t *testing.T) {
	for _, tc := range []struct {
		name  string
		cmd   namespace.Apply
		field string // "" means valid
	}{
		{"valid", namespace.Apply{Name: "payments"}, ""},
		{"valid single char", namespace.Apply{Name: "a"}, ""},
		{"valid digits dashes caps", namespace.Apply{Name: "Team-42-prod"}, ""},
		{"valid 128", namespace.Apply{Name: strings.Repeat("n", 128)}, ""},
		{"valid description 256", namespace.Apply{Name: "a", Description: strings.Repeat("d", 256)}, ""},
		{"valid meta", namespace.Apply{Name: "a", Meta: map[string]string{"owner": "ops", "x": ""}}, ""},
		{"empty name", namespace.Apply{Name: ""}, "Name"},
		{"too long 129", namespace.Apply{Name: strings.Repeat("n", 129)}, "Name"},
		{"underscore", namespace.Apply{Name: "bad_name"}, "Name"},
		{"bang", namespace.Apply{Name: "bad!"}, "Name"},
		{"space", namespace.Apply{Name: "a b"}, "Name"},
		{"slash", namespace.Apply{Name: "a/b"}, "Name"},
		{"dot", namespace.Apply{Name: "a.b"}, "Name"},
		{"non-ascii", namespace.Apply{Name: "zürich"}, "Name"},
		{"trailing newline", namespace.Apply{Name: "a\n"}, "Name"},
		{"description 257", namespace.Apply{Name: "a", Description: strings.Repeat("d", 257)}, "Description"},
		// 86 three-byte runes: 86 characters but 258 bytes.
		{"description counts bytes", namespace.Apply{Name: "a", Description: strings.Repeat("€", 86)}, "Description"},
		{"empty meta key", namespace.Apply{Name: "a", Meta: map[string]string{"": "v"}}, "Meta"},
		{"variables quota", namespace.Apply{Name: "a", VariablesQuota: 1 << 20}, ""},
		{"negative variables quota", namespace.Apply{Name: "a", VariablesQuota: -1}, "VariablesQuota"},
		{"name checked first", namespace.Apply{Name: "", Description: strings.Repeat("d", 257)}, "Name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.cmd.Validate()
			if tc.field == "" {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			commandstest.WantField(t, err, tc.field)
			if got := commands.Status(err); got != 400 {
				t.Fatalf("Status = %d, want 400", got)
			}
		})
	}
}

func TestDeleteValidate(t *testing.T) {
	for _, tc := range []struct {
		name  string
		field string
	}{
		{"payments", ""},
		{"", "name"},
		{strings.Repeat("n", 129), "name"},
		{"bad_name!", "name"},
		{namespaces.Default, "name"},
	} {
		t.Run(fmt.Sprintf("%.20q", tc.name), func(t *testing.T) {
			err := namespace.Delete{Name: tc.name}.Validate()
			if tc.field == "" {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			commandstest.WantField(t, err, tc.field)
		})
	}
}

func TestApplyDecide(t *testing.T) {
	present := fsmStore(t, upserted("payments"))
	empty := fsmStore(t)
	meta := map[string]string{"owner": "ops"}
	for _, tc := range []struct {
		name  string
		store *kv.Store
		cmd   namespace.Apply
		want  commands.Decision
	}{
		{
			name:  "create on empty store",
			store: empty,
			cmd:   namespace.Apply{Name: "payments", Description: "pay", Meta: meta},
			want: commands.Decision{Events: []events.Payload{&events.NamespaceUpserted{
				Namespace: events.Namespace{Name: "payments", Description: "pay", Meta: meta}}}},
		},
		{
			name:  "update existing",
			store: present,
			cmd:   namespace.Apply{Name: "payments", Description: "new"},
			want: commands.Decision{Events: []events.Payload{&events.NamespaceUpserted{
				Namespace: events.Namespace{Name: "payments", Description: "new"}}}},
		},
		{
			name:  "if absent when absent",
			store: present,
			cmd:   namespace.Apply{Name: "default", Description: "Default", IfAbsent: true},
			want: commands.Decision{
				Events: []events.Payload{&events.NamespaceUpserted{
					Namespace: events.Namespace{Name: "default", Description: "Default"}}},
				Preconditions: []events.Precondition{{Table: namespaces.Table, Key: "default", Op: events.Absent}},
			},
		},
		{
			name:  "if absent when present emits nothing",
			store: present,
			cmd:   namespace.Apply{Name: "payments", Description: "ignored", IfAbsent: true},
			want:  commands.Decision{},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.cmd.Decide(view(t, tc.store), time.Unix(0, 0), noIDs)
			if err != nil {
				t.Fatalf("Decide: %v", err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("Decide =\n %#v\nwant\n %#v", got, tc.want)
			}
		})
	}
}

func TestDeleteDecide(t *testing.T) {
	store := fsmStore(t, upserted("default"), upserted("payments"), upserted("gone"),
		&events.NamespaceDeleted{Name: "gone"})
	empty := fsmStore(t)

	t.Run("existing emits NamespaceDeleted with exists precondition", func(t *testing.T) {
		got, err := namespace.Delete{Name: "payments"}.Decide(view(t, store), time.Unix(0, 0), noIDs)
		if err != nil {
			t.Fatal(err)
		}
		want := commands.Decision{
			Events: []events.Payload{&events.NamespaceDeleted{Name: "payments"}},
			Preconditions: []events.Precondition{{Table: namespaces.Table, Key: "payments", Op: events.Exists},
				nsguard.EmptyPrecondition("payments")},
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("Decide =\n %#v\nwant\n %#v", got, want)
		}
	})
	for _, tc := range []struct {
		name  string
		store *kv.Store
		ns    string
	}{
		{"missing on empty store", empty, "payments"},
		{"missing", store, "nope"},
		{"already deleted", store, "gone"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := namespace.Delete{Name: tc.ns}.Decide(view(t, tc.store), time.Unix(0, 0), noIDs)
			var nf *commands.NotFoundError
			if !errors.As(err, &nf) {
				t.Fatalf("err = %v (%T), want *commands.NotFoundError", err, err)
			}
			if nf.Kind != "namespace" || nf.ID != tc.ns {
				t.Fatalf("NotFoundError = %+v", nf)
			}
			if commands.Status(err) != 404 {
				t.Fatalf("Status = %d, want 404", commands.Status(err))
			}
			if len(got.Events) != 0 || len(got.Preconditions) != 0 {
				t.Fatalf("decision on error = %+v, want empty", got)
			}
		})
	}
	t.Run("default cannot be deleted", func(t *testing.T) {
		// Validate refuses it before Decide is ever reached.
		commandstest.WantField(t, namespace.Delete{Name: namespaces.Default}.Validate(), "name")
	})
}

// TestDecisionsApply checks that what Decide emits is what the FSM accepts,
// and that the preconditions catch the race they are there for: two deletes
// decided against the same snapshot apply once and reject once.
func TestDecisionsApply(t *testing.T) {
	store := fsmStore(t, upserted("payments"))
	f, err := fsm.New(store, fsm.Config{
		Projections: all.Projections(), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	snap := store.Snapshot()
	dec, err := namespace.Delete{Name: "payments"}.Decide(projections.NewView(snap), time.Unix(0, 0), noIDs)
	snap.Close()
	if err != nil {
		t.Fatal(err)
	}
	if res := commandstest.ApplyDecision(t, f, 2, dec); res.Err != nil {
		t.Fatalf("first delete: %v", res.Err)
	}
	res := commandstest.ApplyDecision(t, f, 3, dec)
	var re *fsm.RejectedError
	if !errors.As(res.Err, &re) {
		t.Fatalf("second delete: err = %v, want *fsm.RejectedError", res.Err)
	}
	if re.Precondition.Op != events.Exists || re.Precondition.Key != "payments" {
		t.Fatalf("rejected on %+v", re.Precondition)
	}
	if _, err := namespaces.Get(view(t, store), "payments"); !errors.Is(err, projections.ErrNotFound) {
		t.Fatalf("payments after delete: %v", err)
	}
}
