package testagent

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ordoplane/ordo/commands/httpapi"
)

// Client calls the HTTP API over loopback.
type Client struct {
	http *http.Client
}

// NewClient returns a Client whose requests time out after timeout.
func NewClient(timeout time.Duration) *Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = 64
	return &Client{http: &http.Client{Timeout: timeout, Transport: tr}}
}

// Close drops the client's idle connections.
func (c *Client) Close() { c.http.CloseIdleConnections() }

// WriteResult is the answer to a write.
type WriteResult struct {
	Status    int
	Index     uint64
	Duplicate bool
	Body      string
}

// PutNamespace applies namespace name through the server at addr, with
// Idempotency-Key key when key is not empty. err is a transport error (no
// answer); any answer, whatever its status, is a WriteResult.
func (c *Client) PutNamespace(ctx context.Context, addr, name, key string) (WriteResult, error) {
	body := fmt.Sprintf(`{"Name":%q,"Description":"e2e test namespace"}`, name)
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, "http://"+addr+"/v1/namespace/"+url.PathEscape(name), strings.NewReader(body))
	if err != nil {
		return WriteResult{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		req.Header.Set("Idempotency-Key", key)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return WriteResult{}, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return WriteResult{}, fmt.Errorf("read answer (status %d): %w", resp.StatusCode, err)
	}
	res := WriteResult{Status: resp.StatusCode, Body: strings.TrimSpace(string(b))}
	if resp.StatusCode != http.StatusOK {
		return res, nil
	}
	var out struct {
		Index     uint64
		Duplicate bool
	}
	if err := json.Unmarshal(b, &out); err != nil {
		return res, fmt.Errorf("decode write answer %q: %w", b, err)
	}
	res.Index, res.Duplicate = out.Index, out.Duplicate
	if h := resp.Header.Get("X-Nomad-Index"); h != "" {
		if hi, err := strconv.ParseUint(h, 10, 64); err != nil || hi != out.Index {
			return res, fmt.Errorf("X-Nomad-Index %q disagrees with the body's Index %d", h, out.Index)
		}
	}
	return res, nil
}

// GetJSON decodes the answer to GET path from addr into out when the status
// is 200, and returns the status.
func (c *Client) GetJSON(addr, path string, out any) (int, error) {
	resp, err := c.http.Get("http://" + addr + path)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		_, _ = io.Copy(io.Discard, resp.Body)
		return resp.StatusCode, nil
	}
	if out == nil {
		_, _ = io.Copy(io.Discard, resp.Body)
		return resp.StatusCode, nil
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return resp.StatusCode, fmt.Errorf("decode GET %s: %w", path, err)
	}
	return resp.StatusCode, nil
}

// Healthy reports whether the server at addr answers /v1/agent/health with 200.
func (c *Client) Healthy(addr string) bool {
	code, err := c.GetJSON(addr, "/v1/agent/health", nil)
	return err == nil && code == http.StatusOK
}

// AppliedIndex returns the applied index the server at addr reports in /v1/agent/self.
func (c *Client) AppliedIndex(addr string) (uint64, error) {
	var self struct {
		Stats struct {
			Ordo struct {
				AppliedIndex uint64 `json:"applied_index,string"` // Nomad's stats are strings
			} `json:"ordo"`
		} `json:"stats"`
	}
	code, err := c.GetJSON(addr, "/v1/agent/self", &self)
	if err != nil {
		return 0, err
	}
	if code != http.StatusOK {
		return 0, fmt.Errorf("/v1/agent/self: status %d", code)
	}
	return self.Stats.Ordo.AppliedIndex, nil
}

// RaftServer is one server of /v1/operator/raft/configuration.
type RaftServer struct {
	ID      string
	Address string
	Leader  bool
	Voter   bool
}

// RaftConfiguration returns the raft configuration as the server at addr
// itself sees it (?stale, so a follower answers without forwarding).
func (c *Client) RaftConfiguration(addr string) ([]RaftServer, error) {
	var out struct{ Servers []RaftServer }
	code, err := c.GetJSON(addr, "/v1/operator/raft/configuration?stale", &out)
	if err != nil {
		return nil, err
	}
	if code != http.StatusOK {
		return nil, fmt.Errorf("raft configuration: status %d", code)
	}
	return out.Servers, nil
}

// NamespaceNames lists the namespaces the server at addr serves, read
// locally (?stale) when stale is set.
func (c *Client) NamespaceNames(addr string, stale bool) (map[string]bool, error) {
	path := "/v1/namespaces"
	if stale {
		path += "?stale"
	}
	var list []struct{ Name string }
	code, err := c.GetJSON(addr, path, &list)
	if err != nil {
		return nil, err
	}
	if code != http.StatusOK {
		return nil, fmt.Errorf("GET %s: status %d", path, code)
	}
	out := make(map[string]bool, len(list))
	for _, ns := range list {
		out[ns.Name] = true
	}
	return out, nil
}

// LogUpserts pages through the archive of the server at addr with
// GET /v1/operator/log and counts NamespaceUpserted events per namespace.
// It also checks the paging: indexes only grow, pages hold whole entries,
// and the number of events read equals the Length the server reports.
func (c *Client) LogUpserts(addr string) (map[string]int, error) {
	counts := map[string]int{}
	var from, last, read uint64 = 1, 0, 0
	var length uint64
	for pages := 0; ; pages++ {
		var page struct {
			Events    []httpapi.Event
			NextIndex uint64
			LastIndex uint64
			Length    uint64
		}
		path := fmt.Sprintf("/v1/operator/log?stale&from=%d&limit=97", from)
		code, err := c.GetJSON(addr, path, &page)
		if err != nil {
			return nil, err
		}
		if code != http.StatusOK {
			return nil, fmt.Errorf("GET %s: status %d", path, code)
		}
		if pages == 0 {
			length = page.Length
		}
		for _, ev := range page.Events {
			if ev.Index < last {
				return nil, fmt.Errorf("GET %s: index %d after %d", path, ev.Index, last)
			}
			last = ev.Index
			read++
			if ev.Type == "NamespaceUpserted" {
				counts[ev.Namespace]++
			}
		}
		if page.NextIndex == 0 {
			break
		}
		if page.NextIndex <= last {
			return nil, fmt.Errorf("GET %s: next index %d does not follow %d (entry split across pages?)", path, page.NextIndex, last)
		}
		from = page.NextIndex
	}
	if read < length {
		return nil, fmt.Errorf("read %d events paging the log of %s, its first page reported %d", read, addr, length)
	}
	return counts, nil
}

// Acks records acknowledged writes: name → index.
type Acks struct {
	mu    sync.Mutex
	index map[string]uint64
	max   uint64
}

// NewAcks returns an empty Acks.
func NewAcks() *Acks { return &Acks{index: map[string]uint64{}} }

// Add records name acknowledged at index.
func (a *Acks) Add(name string, index uint64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.index[name] = index
	a.max = max(a.max, index)
}

// Len returns how many writes were acknowledged.
func (a *Acks) Len() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.index)
}

// Max returns the highest acknowledged index.
func (a *Acks) Max() uint64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.max
}

// Names returns a copy of the acknowledged names and their indexes.
func (a *Acks) Names() map[string]uint64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := make(map[string]uint64, len(a.index))
	for k, v := range a.index {
		out[k] = v
	}
	return out
}
