package commands_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/ordoplane/ordo/commands"
)

// body is shaped like the namespace request: a string, another string and a map.
type body struct {
	Name        string
	Description string
	Meta        map[string]string
}

func TestDecodeJSON(t *testing.T) {
	const limit = 64
	for _, tc := range []struct {
		name  string
		in    string
		want  body
		field string // a *ValidationError naming it
		large bool   // a *TooLargeError
	}{
		{name: "object", in: `{"Name":"a","Description":"d","Meta":{"k":"v"}}`,
			want: body{Name: "a", Description: "d", Meta: map[string]string{"k": "v"}}},
		{name: "keys match case-insensitively", in: `{"name":"a"}`, want: body{Name: "a"}},
		{name: "unknown fields ignored", in: `{"Name":"a","Quota":"q","Capabilities":{}}`, want: body{Name: "a"}},
		{name: "surrounding whitespace", in: " \n{\"Name\":\"a\"}\n", want: body{Name: "a"}},
		{name: "null is an empty request", in: `null`},
		{name: "exactly at the limit", in: `{"Description":"` + strings.Repeat("x", limit-18) + `"}`,
			want: body{Description: strings.Repeat("x", limit-18)}},
		{name: "empty body", in: ``, field: "body"},
		{name: "whitespace only", in: "  \n", field: "body"},
		{name: "malformed", in: `{"Name":`, field: "body"},
		{name: "not JSON", in: `Name=a`, field: "body"},
		{name: "trailing data", in: `{"Name":"a"} {}`, field: "body"},
		{name: "single quotes", in: `{'Name':'a'}`, field: "body"},
		{name: "array instead of object", in: `[1,2]`, field: "body"},
		{name: "string instead of object", in: `"payments"`, field: "body"},
		{name: "number for string", in: `{"Description": 5}`, field: "Description"},
		{name: "bool for string", in: `{"Name": true}`, field: "Name"},
		{name: "object for string", in: `{"Name": {}}`, field: "Name"},
		{name: "array for map", in: `{"Meta": []}`, field: "Meta"},
		{name: "number in map", in: `{"Meta": {"k": 1}}`, field: "Meta"},
		{name: "one byte over the limit", in: `{"Description":"` + strings.Repeat("x", limit-17) + `"}`, large: true},
		{name: "far over the limit", in: strings.Repeat(" ", 10*limit), large: true},
		{name: "over the limit and malformed", in: strings.Repeat("{", limit+1), large: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got body
			err := commands.DecodeJSON(strings.NewReader(tc.in), limit, &got)
			switch {
			case tc.large:
				var tl *commands.TooLargeError
				if !errors.As(err, &tl) {
					t.Fatalf("err = %v (%T), want *TooLargeError", err, err)
				}
				if tl.Limit != limit {
					t.Fatalf("Limit = %d, want %d", tl.Limit, limit)
				}
				if commands.Status(err) != 413 {
					t.Fatalf("Status = %d, want 413", commands.Status(err))
				}
			case tc.field != "":
				var ve *commands.ValidationError
				if !errors.As(err, &ve) {
					t.Fatalf("err = %v (%T), want *ValidationError", err, err)
				}
				// A nested field may be named by its path (Meta.k).
				if ve.Field != tc.field && !strings.HasPrefix(ve.Field, tc.field+".") {
					t.Fatalf("Field = %q, want %q (%v)", ve.Field, tc.field, err)
				}
				if ve.Reason == "" || !strings.Contains(err.Error(), tc.field) {
					t.Fatalf("error %q does not say what is wrong with %s", err, tc.field)
				}
				if commands.Status(err) != 400 {
					t.Fatalf("Status = %d, want 400", commands.Status(err))
				}
			default:
				if err != nil {
					t.Fatalf("DecodeJSON: %v", err)
				}
				if !reflect.DeepEqual(got, tc.want) {
					t.Fatalf("decoded %+v, want %+v", got, tc.want)
				}
			}
		})
	}
}

func TestDecodeJSONReadError(t *testing.T) {
	boom := errors.New("connection reset")
	err := commands.DecodeJSON(iotest.ErrReader(boom), 64, &body{})
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v, want it to wrap %v", err, boom)
	}
	var ve *commands.ValidationError
	if errors.As(err, &ve) {
		t.Fatalf("a read failure is not the client's invalid input: %v", err)
	}
}

// TestDecodeJSONReadsAtMostLimit checks the decoder does not drain an
// endless body: it stops one byte past the limit.
func TestDecodeJSONReadsAtMostLimit(t *testing.T) {
	const limit = 1 << 10
	r := &countingReader{r: endless{}}
	err := commands.DecodeJSON(r, limit, &body{})
	var tl *commands.TooLargeError
	if !errors.As(err, &tl) {
		t.Fatalf("err = %v, want *TooLargeError", err)
	}
	if r.n > limit+1 {
		t.Fatalf("read %d bytes, want at most %d", r.n, limit+1)
	}
}

type endless struct{}

func (endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = ' '
	}
	return len(p), nil
}

type countingReader struct {
	r io.Reader
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}

// FuzzDecodeJSON: DecodeJSON never panics, fails only with a
// *ValidationError naming a field or a *TooLargeError, and what it accepts
// survives encode → decode unchanged.
func FuzzDecodeJSON(f *testing.F) {
	const limit = 256
	for _, s := range []string{
		``, `{}`, `null`, `[]`, `"x"`, `{"Name":"a","Description":"d","Meta":{"k":"v"}}`,
		`{"Description": 5}`, `{"Meta": {"k": 1}}`, `{"Meta": []}`, `{"Name":`, `{"Name":"a"} {}`,
		`{"Name":"\u00e9\ud800"}`, `{"name":"a","NAME":"b"}`, strings.Repeat("[", 300),
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var got body
		err := commands.DecodeJSON(bytes.NewReader(data), limit, &got)
		if len(data) > limit {
			var tl *commands.TooLargeError
			if !errors.As(err, &tl) || tl.Limit != limit {
				t.Fatalf("%d bytes over a %d limit: err = %v", len(data), limit, err)
			}
			return
		}
		if err != nil {
			var ve *commands.ValidationError
			if !errors.As(err, &ve) {
				t.Fatalf("err = %v (%T), want *ValidationError", err, err)
			}
			if ve.Field == "" || ve.Reason == "" {
				t.Fatalf("ValidationError without field or reason: %+v", ve)
			}
			if commands.Status(err) != 400 {
				t.Fatalf("Status = %d, want 400", commands.Status(err))
			}
			if json.Valid(data) && ve.Field == "body" && isObject(data) {
				t.Fatalf("valid JSON object %q refused as a malformed body: %v", data, err)
			}
			return
		}
		if !json.Valid(data) {
			t.Fatalf("accepted invalid JSON %q", data)
		}
		enc, err := json.Marshal(got)
		if err != nil {
			t.Fatal(err)
		}
		var again body
		if err := commands.DecodeJSON(bytes.NewReader(enc), int64(len(enc)), &again); err != nil {
			t.Fatalf("re-decoding %s: %v", enc, err)
		}
		if !reflect.DeepEqual(normal(got), normal(again)) {
			t.Fatalf("decode→encode→decode changed %+v to %+v", got, again)
		}
	})
}

func isObject(data []byte) bool {
	var m map[string]json.RawMessage
	return json.Unmarshal(data, &m) == nil && m != nil
}

// normal treats an empty map like a nil one.
func normal(b body) body {
	if len(b.Meta) == 0 {
		b.Meta = nil
	}
	return b
}
