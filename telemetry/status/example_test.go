package status_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/headroom-go/headroom/telemetry/status"
)

// Mount the page beside expvar's and pprof's, where operators look.
func ExampleHandler() {
	mux := http.NewServeMux()
	mux.Handle("/debug/headroom", status.Handler())

	rec := httptest.NewRecorder()
	mux.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/debug/headroom?format=json", nil))
	fmt.Println(rec.Code, rec.Header().Get("Content-Type"))
	// Output: 200 application/json
}
