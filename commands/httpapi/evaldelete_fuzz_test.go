package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/commands/eval"
	"github.com/ordoplane/ordo/projections/evaldelete"
	"github.com/ordoplane/ordo/projections/order"
)

// FuzzDecodeEvalDelete: the DELETE /v1/evaluations body decoder never
// panics; it fails with a *ValidationError naming a field (400) or a
// *TooLargeError (413), or returns a request that is by id xor by filter,
// whose filter compiles, whose page size, page count and token are in
// range, whose ids pass the command's own checks or are refused naming
// EvalIDs; and what it accepts re-encodes and decodes to the same request.
func FuzzDecodeEvalDelete(f *testing.F) {
	const limit = 1024
	for _, s := range []string{
		`{"EvalIDs":["a","b"]}`,
		`{"Filter":"Status == \"pending\""}`,
		`{"Filter":"Status == \"pending\"","PerPage":100,"MaxPages":5,"NextToken":"` + order.Token(7, "e1") + `"}`,
		`{"Filter":"Status ==","PerPage":1}`,
		`{"EvalIDs":["a"],"Filter":"ID == \"a\""}`,
		`{"Filter":"JobID matches \"^g\"","PerPage":-1}`,
		`{"Filter":"ID != \"\"","PerPage":100000}`,
		`{"Filter":"ID != \"\"","NextToken":"garbage"}`,
		`{"Filter":"ID != \"\"","MaxPages":-3}`,
		`{"EvalIDs":[""]}`, `{"EvalIDs":["a","a"]}`, `{}`, `null`, `[]`, `{"EvalIDs":`, `{"PerPage":"x"}`,
		`{"EvalIDs":["` + strings.Repeat("x", 2000) + `"]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		r := httptest.NewRequest("DELETE", "/v1/evaluations", bytes.NewReader(body))
		req, err := decodeEvalDelete(r, limit)
		if err != nil {
			var ve *commands.ValidationError
			var tl *commands.TooLargeError
			switch {
			case errors.As(err, &tl):
				if len(body) <= limit {
					t.Fatalf("%d bytes refused as too large", len(body))
				}
			case errors.As(err, &ve):
				if ve.Field == "" {
					t.Fatalf("ValidationError names no field: %v", err)
				}
			default:
				t.Fatalf("err = %v (%T), want a ValidationError or TooLargeError", err, err)
			}
			if s := commands.Status(err); s != 400 && s != 413 {
				t.Fatalf("status %d for %v", s, err)
			}
			return
		}
		if len(body) > limit {
			t.Fatalf("accepted %d bytes over a %d limit", len(body), limit)
		}
		if (len(req.EvalIDs) > 0) == (req.Filter != "") {
			t.Fatalf("accepted %+v: want ids xor a filter", req)
		}
		if req.PerPage < 1 || req.PerPage > evaldelete.MaxPageSize || req.MaxPages < 0 {
			t.Fatalf("accepted page size %d, pages %d", req.PerPage, req.MaxPages)
		}
		if req.Filter != "" {
			if _, err := evaldelete.Compile(req.Filter); err != nil {
				t.Fatalf("accepted filter %q that does not compile: %v", req.Filter, err)
			}
			if err := (eval.DeletePage{Filter: req.Filter, PageSize: req.PerPage}).Validate(); err != nil {
				t.Fatalf("accepted a page the command refuses: %v", err)
			}
		}
		if req.NextToken != "" {
			if _, err := order.ParseToken(req.NextToken); err != nil {
				t.Fatalf("accepted token %q: %v", req.NextToken, err)
			}
		}
		if len(req.EvalIDs) > 0 {
			if err := (eval.Delete{IDs: req.EvalIDs}).Validate(); err != nil {
				var ve *commands.ValidationError
				if !errors.As(err, &ve) || ve.Field != "EvalIDs" {
					t.Fatalf("Delete.Validate = %v, want a ValidationError on EvalIDs", err)
				}
			}
		}
		again, err := json.Marshal(req)
		if err != nil {
			t.Fatal(err)
		}
		req2, err := decodeEvalDelete(httptest.NewRequest("DELETE", "/v1/evaluations", bytes.NewReader(again)), int64(len(again))+1)
		if err != nil || !reflect.DeepEqual(req, req2) {
			t.Fatalf("re-decoded %+v (%v), want %+v", req2, err, req)
		}
	})
}
