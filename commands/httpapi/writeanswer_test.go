package httpapi_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// TestConcurrentPutsAnswerTheirOwnWrite: writers racing on one variable
// each get back the index, modify index and time of their own write (read
// from its apply), never a later write's; so no two answers share an index.
func TestConcurrentPutsAnswerTheirOwnWrite(t *testing.T) {
	t.Parallel()
	d := startVarAgent(t, nil)
	const writers, each = 8, 10
	type answer struct {
		header uint64
		v      varJSON
	}
	var (
		mu      sync.Mutex
		answers []answer
		errs    []error
		wg      sync.WaitGroup
	)
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				body, _ := json.Marshal(map[string]any{"Items": map[string]string{"v": fmt.Sprintf("w%d-%d", w, i)}})
				req, _ := http.NewRequest(http.MethodPut, d.base+"/v1/var/r/race", bytes.NewReader(body))
				resp, err := d.client.Do(req)
				if err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
					return
				}
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				var a answer
				a.header, _ = strconv.ParseUint(resp.Header.Get("X-Nomad-Index"), 10, 64)
				err = json.Unmarshal(b, &a.v)
				if resp.StatusCode != http.StatusOK || err != nil {
					err = fmt.Errorf("put: %d %s", resp.StatusCode, b)
				}
				mu.Lock()
				if err != nil {
					errs = append(errs, err)
				} else {
					answers = append(answers, a)
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if len(errs) > 0 {
		t.Fatalf("%d puts failed, first: %v", len(errs), errs[0])
	}
	seen := map[uint64]int{}
	for _, a := range answers {
		if a.v.ModifyIndex != a.header {
			t.Errorf("answer's ModifyIndex %d differs from its X-Nomad-Index %d", a.v.ModifyIndex, a.header)
		}
		if a.v.Items["v"] == "" || a.v.ModifyTime == 0 || a.v.CreateIndex == 0 || a.v.CreateIndex > a.v.ModifyIndex {
			t.Errorf("answer %+v", a.v)
		}
		seen[a.v.ModifyIndex]++
	}
	for idx, n := range seen {
		if n > 1 {
			t.Errorf("modify index %d answered to %d writes", idx, n)
		}
	}
	if len(seen) != writers*each {
		t.Fatalf("%d distinct indexes answered to %d writes", len(seen), writers*each)
	}
}

// TestRetriedRegisterAnswersItsOwnJobModifyIndex: a registration retried
// with its idempotency key after another registration changed the job is
// answered with the JobModifyIndex it produced, not the later one's.
func TestRetriedRegisterAnswersItsOwnJobModifyIndex(t *testing.T) {
	t.Parallel()
	d := startAgent(t)
	put := func(body, key string) registerResponse {
		t.Helper()
		var h []string
		if key != "" {
			h = []string{"Idempotency-Key", key}
		}
		r := d.do(t, "PUT", "/v1/jobs", strings.NewReader(body), h...)
		if r.status != http.StatusOK {
			t.Fatalf("register: %d %s", r.status, r.body)
		}
		var out registerResponse
		r.decode(t, &out)
		return out
	}
	first := put(jobJSON("web", 1), "reg-1")
	later := put(jobJSON("web", 2), "")
	if later.JobModifyIndex <= first.JobModifyIndex {
		t.Fatalf("the change did not move JobModifyIndex: %+v then %+v", first, later)
	}
	retry := put(jobJSON("web", 1), "reg-1")
	if retry.JobModifyIndex != first.JobModifyIndex || retry.Index != first.Index {
		t.Fatalf("retry answered %+v, want the first registration's %+v", retry, first)
	}
}
