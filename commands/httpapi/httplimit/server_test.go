package httplimit_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/ordoplane/ordo/commands/httpapi/httplimit"
	"github.com/ordoplane/ordo/commands/httpapi/httplimit/httplimittest"
)

const testTimeout = 15 * time.Second

// start serves h bounded by c on 127.0.0.1 over real TCP and returns its
// address.
func start(t *testing.T, h http.Handler, c httplimit.Config) string {
	t.Helper()
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln, err := c.Listen(inner, "test", prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	srv := httplimit.NewServer(h, c)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve(ln)
	}()
	t.Cleanup(func() {
		srv.Close()
		<-done
	})
	return inner.Addr().String()
}

// echo answers the length of the body it read, 400 when reading failed.
var echo = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	b, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, "body: "+err.Error(), http.StatusBadRequest)
		return
	}
	fmt.Fprintf(w, "read %d", len(b))
})

// TestSlowBodiesAreCutOff: connections trickling a body are answered and
// closed once the body deadline passes, while a normal client is served
// meanwhile.
func TestSlowBodiesAreCutOff(t *testing.T) {
	timeouts := prometheus.NewCounter(prometheus.CounterOpts{Name: "body_timeouts"})
	c := httplimit.Config{BodyTimeout: 300 * time.Millisecond, MaxConnsPerClient: -1, BodyTimeouts: timeouts}
	addr := start(t, echo, c)
	var slow []<-chan string
	for range 20 {
		slow = append(slow, httplimittest.Trickle(t, addr, "PUT /upload HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n",
			'x', 100*time.Millisecond, testTimeout))
	}
	// A normal client is served while the slow ones hold their connections.
	client := &http.Client{Timeout: testTimeout}
	for i := range 5 {
		resp, err := client.Post("http://"+addr+"/upload", "text/plain", strings.NewReader(strings.Repeat("b", 100*(i+1))))
		if err != nil {
			t.Fatalf("normal request %d: %v", i, err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || string(b) != fmt.Sprintf("read %d", 100*(i+1)) {
			t.Fatalf("normal request %d: %d %s", i, resp.StatusCode, b)
		}
	}
	for i, ch := range slow {
		got := <-ch
		if got == "still open at the test deadline" || strings.Contains(got, "read 1000") {
			t.Fatalf("slow connection %d was not cut off: %q", i, got)
		}
	}
	if n := testutil.ToFloat64(timeouts); n != 20 {
		t.Fatalf("body timeouts counted %v, want 20", n)
	}
}

// TestWriteTimeout: an answer later than WriteTimeout does not arrive;
// one whose handler extended its deadline (a blocking query) does, and so
// does a stream whose every write rolls the deadline.
func TestWriteTimeout(t *testing.T) {
	const wt = 200 * time.Millisecond
	late := func(extend bool) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			if extend {
				httplimit.ExtendWrite(w, 3*wt+time.Second)
			}
			<-time.After(3 * wt) // the handler's own wait, as a blocking query's
			fmt.Fprint(w, "late answer")
		}
	}
	mux := http.NewServeMux()
	mux.Handle("/plain", late(false))
	mux.Handle("/extended", late(true))
	mux.HandleFunc("/stream", func(w http.ResponseWriter, r *http.Request) {
		w = httplimit.Rolling(w, wt)
		tick := time.NewTicker(wt / 2)
		defer tick.Stop()
		for i := range 8 { // 4 write timeouts in all
			<-tick.C
			fmt.Fprintf(w, "frame %d\n", i)
			http.NewResponseController(w).Flush()
		}
	})
	addr := start(t, mux, httplimit.Config{WriteTimeout: wt})
	client := &http.Client{Timeout: testTimeout}
	get := func(path string) (string, error) {
		resp, err := client.Get("http://" + addr + path)
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		return string(b), err
	}
	if got, err := get("/plain"); err == nil && got == "late answer" {
		t.Fatal("an answer past the write timeout arrived")
	}
	if got, err := get("/extended"); err != nil || got != "late answer" {
		t.Fatalf("extended answer: %q %v", got, err)
	}
	got, err := get("/stream")
	if err != nil || !strings.HasSuffix(got, "frame 7\n") {
		t.Fatalf("stream: %q %v", got, err)
	}
}

// TestRollingBody: an upload longer than the body deadline goes through
// when its route rolls the deadline per read and data keeps coming.
func TestRollingBody(t *testing.T) {
	const bt = 200 * time.Millisecond
	addr := start(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		httplimit.RollingBody(w, r, bt)
		echo(w, r)
	}), httplimit.Config{BodyTimeout: bt})
	pr, pw := io.Pipe()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // the uploader: 8 chunks, bt/2 apart
		defer wg.Done()
		tick := time.NewTicker(bt / 2)
		defer tick.Stop()
		for range 8 {
			<-tick.C
			if _, err := pw.Write([]byte("chunk")); err != nil {
				return
			}
		}
		pw.Close()
	}()
	defer wg.Wait()
	defer pr.Close()
	req, _ := http.NewRequest("PUT", "http://"+addr+"/restore", pr)
	resp, err := (&http.Client{Timeout: testTimeout}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(b) != "read 40" {
		t.Fatalf("rolling upload: %d %s", resp.StatusCode, b)
	}
}

// TestConnectionsPerClient: past MaxConnsPerClient, a connection from the
// same address is answered 429 and closed; the ones admitted are served.
func TestConnectionsPerClient(t *testing.T) {
	hold := make(chan struct{})
	var once sync.Once
	release := func() { once.Do(func() { close(hold) }) }
	t.Cleanup(release)
	mux := http.NewServeMux()
	mux.HandleFunc("/hold", func(w http.ResponseWriter, r *http.Request) { <-hold; fmt.Fprint(w, "held") })
	addr := start(t, mux, httplimit.Config{MaxConnsPerClient: 3})
	// Three connections, each holding a request open.
	var conns []net.Conn
	for range 3 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		fmt.Fprintf(c, "GET /hold HTTP/1.1\r\nHost: x\r\n\r\n")
		conns = append(conns, c)
	}
	// The fourth is refused, however often it tries.
	for i := range 3 {
		resp, err := (&http.Client{Timeout: testTimeout, Transport: &http.Transport{DisableKeepAlives: true}}).Get("http://" + addr + "/hold")
		if err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusTooManyRequests {
				t.Fatalf("connection %d past the cap: %d %s", 4+i, resp.StatusCode, b)
			}
		}
	}
	release()
	for i, c := range conns {
		_ = c.SetReadDeadline(time.Now().Add(testTimeout))
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatalf("held connection %d: %v", i, err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || string(b) != "held" {
			t.Fatalf("held connection %d: %d %s", i, resp.StatusCode, b)
		}
	}
}

func TestConfig(t *testing.T) {
	c := httplimit.Config{}.WithDefaults()
	if c != httplimit.DefaultConfig() {
		t.Fatalf("zero config with defaults = %+v", c)
	}
	if err := (httplimit.Config{ReadTimeout: time.Microsecond}).Validate(); err == nil {
		t.Fatal("a microsecond timeout validated")
	}
	if err := (httplimit.Config{ReadTimeout: -1, MaxConnsPerClient: -1}).Validate(); err != nil {
		t.Fatal(err)
	}
}
