package handler_test

import (
	"context"
	"io"
	"net/http/httptest"
	"testing"

	"github.com/tigrisgo/tigris/examples/petclinic/internal/database"
	"github.com/tigrisgo/tigris/examples/petclinic/internal/handler"
	"github.com/tigrisgo/tigris/examples/petclinic/internal/repository"
	"github.com/tigrisgo/tigris/examples/petclinic/internal/service"
)

// BenchmarkEndpoints measures the read endpoints in-process, one request at a time:
// the cost profile the workload relies on (pet types and health cheap, vets a few
// times dearer, the report far dearer, owner search depending on the prefix).
func BenchmarkEndpoints(b *testing.B) {
	db, err := database.Open(context.Background(), database.Memory, database.SeedOptions{})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	api := handler.New(service.NewClinicService(repository.New(db.DB)), nil)
	for _, path := range []string{
		"/api/pettypes", "/api/health", "/api/vets", "/api/owners/42", "/api/owners/9999",
		"/api/owners?lastName=Zi", "/api/owners?lastName=D", "/api/owners?lastName=", "/api/reports/visits",
	} {
		b.Run(path, func(b *testing.B) {
			var size int
			for b.Loop() {
				w := httptest.NewRecorder()
				api.ServeHTTP(w, httptest.NewRequest("GET", path, nil))
				size = w.Body.Len()
				io.Copy(io.Discard, w.Body)
			}
			b.ReportMetric(float64(size), "B/answer")
		})
	}
}
