// Package acceptance is headroom's acceptance suite: headroom's recommended
// HTTP client (Headroom) and hashicorp/go-retryablehttp (RetryableHTTP) side
// by side, on loopback, against real server-side rate limiters — Go
// middleware in this process (go-chi/httprate, ulule/limiter,
// didip/tollbooth), nginx's limit_req, HAProxy's stick tables and
// express-rate-limit in their own processes, and servers of ours for what
// no real one does (a sliding log that counts units, a quota that halves,
// an outage, connection resets) — with goals the headroom client must meet.
// It is a module of its own, so that the library's users never download
// what it needs.
//
// # Running it
//
// From acceptance/:
//
//	./install.sh                       # nginx, HAProxy, node and express's modules
//	go run ./cmd/realservers           # the full matrix (about 32 min); writes ../docs/real-servers.md
//	go run ./cmd/realservers -short    # the short slice (about 90 s)
//	go test ./...                      # the short slice as tests, and the unit tests
//	go test -short ./...               # the unit tests only
//
// A cell whose server is not installed is skipped with the reason; under
// CI=true the tests fail instead.
//
// # A cell
//
// A Cell is one ServerSpec × N callers × a run of D × a CostMix. RunCell
// runs it for both clients at once, each against its own fresh server and
// with a fresh client whose base transport counts every attempt on its way
// to the wire (RunOptions.Sequential runs them one after the other). Each
// caller loops until D: a GET of URL + "/" with CostHeader set to the
// call's cost, under a 30 s deadline, pausing 100 ms after a failed call.
// At D the run's context is cancelled; calls cut off by it are neither
// successes nor failures. A Result holds the units accepted (costs of the
// calls that ended 2xx before D), the attempts and throttled attempts (429
// or 503), p50/p95 call time, the calls failed and, among them, those that
// failed on headroom's own limiter's refusal with time left on their
// deadline. Goals.Check turns a CellResult into the goals headroom missed.
//
// # Files
//
// server.go and client.go hold the types; client_peer.go the peer;
// cell.go, run.go, attempts.go, failures.go and stats.go the harness;
// goals.go the goals; servers_go.go the Go middleware; servers_own.go,
// slidinglog.go, ideal.go and resets.go our servers, their algorithm and
// their allowance; servers_nginx.go, servers_haproxy.go and
// servers_express.go the external servers; matrix.go the cells; table.go
// and report.go the output of cmd/realservers.
package acceptance
