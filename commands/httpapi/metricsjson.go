package httpapi

import (
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	dto "github.com/prometheus/client_model/go"

	"github.com/ordoplane/ordo/api"
)

// serveMetrics serves GET /v1/metrics as Nomad does: a JSON
// MetricsSummary by default, Prometheus text with ?format=prometheus.
func (s *Server) serveMetrics(w http.ResponseWriter, r *http.Request) error {
	return serveMetricsOf(s.cfg.Gatherer, w, r)
}

// serveMetricsOf answers GET /v1/metrics with what g gathers (nothing
// when nil).
func serveMetricsOf(g prometheus.Gatherer, w http.ResponseWriter, r *http.Request) error {
	if r.URL.Query().Get("format") == "prometheus" {
		if g == nil {
			w.Header().Set("Content-Type", "text/plain; version=0.0.4")
			return nil
		}
		promhttp.HandlerFor(g, promhttp.HandlerOpts{Timeout: 10 * time.Second}).ServeHTTP(w, r)
		return nil
	}
	sum, err := metricsSummary(g, time.Now())
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, sum)
	return nil
}

// metricsSummary converts what g gathers to Nomad's MetricsSummary:
// gauges (and untyped values) as Gauges, counters as Counters with their
// total as Sum and Count, histograms and summaries as Samples with their
// observation count, sum and mean.
func metricsSummary(g prometheus.Gatherer, now time.Time) (api.MetricsSummary, error) {
	out := api.MetricsSummary{Timestamp: now.UTC().Format("2006-01-02 15:04:05 -0700 MST"),
		Gauges: []api.GaugeValue{}, Points: []api.PointValue{}, Counters: []api.SampledValue{}, Samples: []api.SampledValue{}}
	if g == nil {
		return out, nil
	}
	families, err := g.Gather()
	if err != nil && len(families) == 0 {
		return out, err
	}
	for _, f := range families {
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			switch f.GetType() {
			case dto.MetricType_GAUGE:
				out.Gauges = append(out.Gauges, api.GaugeValue{Name: f.GetName(), Value: float32(m.GetGauge().GetValue()), Labels: labels})
			case dto.MetricType_UNTYPED:
				out.Gauges = append(out.Gauges, api.GaugeValue{Name: f.GetName(), Value: float32(m.GetUntyped().GetValue()), Labels: labels})
			case dto.MetricType_COUNTER:
				v := m.GetCounter().GetValue()
				out.Counters = append(out.Counters, api.SampledValue{Name: f.GetName(), Count: int(v), Sum: v,
					Min: v, Max: v, Mean: v, Labels: labels})
			case dto.MetricType_HISTOGRAM:
				h := m.GetHistogram()
				out.Samples = append(out.Samples, sample(f.GetName(), h.GetSampleCount(), h.GetSampleSum(), labels))
			case dto.MetricType_SUMMARY:
				sm := m.GetSummary()
				out.Samples = append(out.Samples, sample(f.GetName(), sm.GetSampleCount(), sm.GetSampleSum(), labels))
			}
		}
	}
	return out, nil
}

// sample is a distribution of count observations summing to sum.
func sample(name string, count uint64, sum float64, labels map[string]string) api.SampledValue {
	v := api.SampledValue{Name: name, Count: int(count), Sum: sum, Labels: labels}
	if count > 0 {
		v.Mean = sum / float64(count)
	}
	return v
}
