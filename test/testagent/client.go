package testagent

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/ordoplane/ordo/api"
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

// api returns an api.Client of the server at addr over c's connections,
// with opts.
func (c *Client) api(addr string, opts ...api.Option) (*api.Client, error) {
	return api.New([]string{addr}, append([]api.Option{api.WithHTTPClient(c.http)}, opts...)...)
}

// PutNamespace applies namespace name through the server at addr, with
// Idempotency-Key key when key is not empty. err is a transport error (no
// answer); any answer, whatever its status, is a WriteResult (Body is the
// error's text when the status is not 200).
func (c *Client) PutNamespace(ctx context.Context, addr, name, key string) (WriteResult, error) {
	var opts []api.Option
	if key != "" {
		opts = append(opts, api.WithHeader("Idempotency-Key", key))
	}
	ac, err := c.api(addr, opts...)
	if err != nil {
		return WriteResult{}, err
	}
	var out struct {
		Index     uint64
		Duplicate bool
	}
	body := map[string]string{"Name": name, "Description": "e2e test namespace"}
	meta, err := ac.Do(ctx, &api.Request{Method: http.MethodPut, Path: api.Pathf("/v1/namespace/%s", name), Body: body}, &out)
	if e, ok := errors.AsType[*api.Error](err); ok {
		return WriteResult{Status: e.Status, Body: e.Message}, nil
	}
	res := WriteResult{Status: http.StatusOK, Index: out.Index, Duplicate: out.Duplicate}
	if errors.Is(err, api.ErrDecode) {
		return res, fmt.Errorf("decode write answer: %w", err)
	}
	if err != nil {
		return WriteResult{}, err
	}
	if h := meta.Header.Get("X-Nomad-Index"); h != "" && meta.LastIndex != out.Index {
		return res, fmt.Errorf("X-Nomad-Index %q disagrees with the body's Index %d", h, out.Index)
	}
	return res, nil
}

// GetJSON decodes the answer to GET path from addr into out when the status
// is 200, and returns the status.
func (c *Client) GetJSON(addr, path string, out any) (int, error) {
	ac, err := c.api(addr)
	if err != nil {
		return 0, err
	}
	_, err = ac.Do(context.Background(), &api.Request{Method: http.MethodGet, Path: path}, out)
	if e, ok := errors.AsType[*api.Error](err); ok {
		return e.Status, nil
	}
	if errors.Is(err, api.ErrDecode) {
		return http.StatusOK, fmt.Errorf("decode GET %s: %w", path, err)
	}
	if err != nil {
		return 0, err
	}
	return http.StatusOK, nil
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
