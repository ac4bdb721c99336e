package dash

import (
	"bytes"
	"net/http"

	"github.com/observerhq/observer/internal/metrics"
	"github.com/observerhq/observer/internal/query"
)

// metricsText serves GET /metrics: the store's counters and gauges in the Prometheus text format
// (internal/metrics), behind the same Host and token checks as every other page. Before the
// writer has created the store, the counters are empty and the gauges 0.
func (s *Server) metricsText(w http.ResponseWriter, r *http.Request) {
	if r.URL.RawQuery != "" {
		writeError(w, http.StatusBadRequest, "", "/metrics takes no parameters")
		return
	}
	db, err := s.db(r.Context())
	if err != nil {
		http.Error(w, err.Error(), http.StatusServiceUnavailable)
		return
	}
	var counts *query.Counts // nil: no store yet
	if db != nil {
		counts, err = query.StoreCounts(r.Context(), db)
	}
	if err != nil {
		s.logger.Error("metrics failed", "err", err)
		http.Error(w, "metrics: "+err.Error(), http.StatusInternalServerError)
		return
	}
	var b bytes.Buffer
	metrics.Write(&b, metrics.Collect(counts, s.opts.StorePath))
	w.Header().Set("Content-Type", metrics.ContentType)
	w.Header().Set("Cache-Control", "no-store")
	w.Write(b.Bytes())
}
