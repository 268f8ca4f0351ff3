package acceptance

import (
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// serveLoopback serves h in this process on a free loopback port until the
// returned Server's Close, which closes the listener and every connection
// and waits for the server to stop. configure, if not nil, adjusts the
// http.Server before it starts.
func serveLoopback(h http.Handler, configure func(*http.Server)) (*Server, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("listening on loopback: %w", err)
	}
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		// A run ends by cancelling calls in flight; the server's complaints
		// about the connections that go with them are noise.
		ErrorLog: log.New(io.Discard, "", 0),
	}
	if configure != nil {
		configure(srv)
	}
	stopped := make(chan error, 1)
	go func() { stopped <- srv.Serve(ln) }()
	var once sync.Once
	var closeErr error
	return &Server{
		URL: "http://" + ln.Addr().String(),
		Close: func() error {
			once.Do(func() {
				closeErr = srv.Close()
				if err := <-stopped; err != nil && !errors.Is(err, http.ErrServerClosed) {
					closeErr = errors.Join(closeErr, err)
				}
			})
			return closeErr
		},
	}, nil
}

// okHandler is what every limiter in this process guards: 200 and a
// two-byte body.
var okHandler = http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	io.WriteString(w, "ok")
})

// parseCost reads a request's CostHeader: 1 when absent, otherwise a
// positive decimal integer; anything else is an error that says what was
// sent. The servers that count units answer such a request 400.
func parseCost(r *http.Request) (int, error) {
	v := r.Header.Get(CostHeader)
	if v == "" {
		return 1, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("%s is %q: want a positive whole number of units", CostHeader, v)
	}
	return n, nil
}

// checkLimit reports what makes l unusable as a server's limit.
func checkLimit(server string, l Limit) error {
	var problems []string
	if l.Units < 1 {
		problems = append(problems, fmt.Sprintf("units %d, want 1 or more", l.Units))
	}
	if l.Window <= 0 {
		problems = append(problems, fmt.Sprintf("window %s, want more than 0", l.Window))
	}
	if l.Burst < 0 {
		problems = append(problems, fmt.Sprintf("burst %d, want 0 or more", l.Burst))
	}
	if len(problems) == 0 {
		return nil
	}
	return fmt.Errorf("%s: limit %s: %s", server, l, joinProblems(problems))
}

// secondsUp is d in whole seconds, rounded up, as servers write delays.
func secondsUp(d time.Duration) int64 {
	if d <= 0 {
		return 0
	}
	return int64((d + time.Second - 1) / time.Second)
}
