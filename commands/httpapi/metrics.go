package httpapi

import (
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

type apiMetrics struct {
	reg      prometheus.Registerer
	requests *prometheus.HistogramVec
	blocking prometheus.Gauge
	streams  prometheus.Gauge
	// followerReads counts default reads on a follower by how they were
	// answered: "local" (after the read index) or "forwarded".
	followerReads *prometheus.CounterVec
	// readIndex is how long a follower read waited for its read index
	// and for applying it; readIndexRounds counts the requests to the leader.
	readIndex       prometheus.Histogram
	readIndexRounds prometheus.Counter
	// nomadEvents counts the events /v1/event/stream sent, by topic;
	// streamLater the payloads it read from a state later than their
	// index (no history store, or one that could not serve the index).
	nomadEvents *prometheus.CounterVec
	streamLater prometheus.Counter
}

func newAPIMetrics(reg prometheus.Registerer) *apiMetrics {
	m := &apiMetrics{
		reg: reg,
		requests: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "ordo_http_request_seconds", Help: "HTTP request latency by route and status.",
			Buckets: prometheus.ExponentialBuckets(0.0001, 2, 18)}, []string{"route", "code"}),
		blocking: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "ordo_blocking_queries_open", Help: "Blocking queries waiting for a change."}),
		streams: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "ordo_event_streams_open", Help: "Open event streams (/v1/event/stream and /v1/operator/log/stream)."}),
		followerReads: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "ordo_http_follower_reads_total", Help: "Default reads on a follower, by how they were answered (local, forwarded)."},
			[]string{"answered"}),
		readIndex: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "ordo_http_read_index_seconds", Help: "How long a follower read waited for the leader's read index and for applying it.",
			Buckets: prometheus.ExponentialBuckets(0.0001, 2, 16)}),
		readIndexRounds: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "ordo_http_read_index_rounds_total", Help: "Read-index requests a follower sent the leader (shared by the reads waiting at once)."}),
		nomadEvents: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "ordo_event_stream_events_total", Help: "Events /v1/event/stream sent, by topic."}, []string{"topic"}),
		streamLater: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "ordo_event_stream_later_state_total", Help: "Event payloads /v1/event/stream read from a state later than their index, the past one not being served."}),
	}
	if reg != nil {
		reg.MustRegister(m.requests, m.blocking, m.streams, m.followerReads, m.readIndex, m.readIndexRounds, m.nomadEvents, m.streamLater)
	}
	return m
}

func (m *apiMetrics) unregister() {
	if m.reg == nil {
		return
	}
	m.reg.Unregister(m.requests)
	m.reg.Unregister(m.blocking)
	m.reg.Unregister(m.streams)
	m.reg.Unregister(m.followerReads)
	m.reg.Unregister(m.readIndex)
	m.reg.Unregister(m.readIndexRounds)
	m.reg.Unregister(m.nomadEvents)
	m.reg.Unregister(m.streamLater)
}

// statusWriter records the status a handler wrote.
type statusWriter struct {
	http.ResponseWriter
	code int
}

func (w *statusWriter) WriteHeader(code int) {
	w.code = code
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (m *apiMetrics) instrument(route string, h http.HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		sw := &statusWriter{ResponseWriter: w, code: http.StatusOK}
		h(sw, r)
		m.requests.WithLabelValues(route, http.StatusText(sw.code)).Observe(time.Since(start).Seconds())
	})
}
