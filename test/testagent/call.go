package testagent

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// Answer is one HTTP answer, its body read whole.
type Answer struct {
	Status int
	Header http.Header
	Body   string
}

// Call makes one request to the server at addr and returns its answer,
// failing t when the request cannot be made or read.
func Call(t testing.TB, addr, method, path, body string) Answer {
	t.Helper()
	req, err := http.NewRequest(method, "http://"+addr+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: read the answer: %v", method, path, err)
	}
	return Answer{Status: resp.StatusCode, Header: resp.Header, Body: string(b)}
}

// PutOK PUTs body to path on the server at addr, failing t unless it
// answers 200.
func PutOK(t testing.TB, addr, path, body string) {
	t.Helper()
	if ans := Call(t, addr, http.MethodPut, path, body); ans.Status != http.StatusOK {
		t.Fatalf("PUT %s: %d: %s", path, ans.Status, ans.Body)
	}
}
