// Package status serves a live status page of every headroom limiter,
// quota guard and circuit breaker in the process, as expvar serves its
// variables: mount Handler where an operator can reach it.
//
//	http.Handle("/debug/headroom", status.Handler())
//
// The page is a small HTML table, or JSON when the request asks for it
// (Accept: application/json, or ?format=json): each limiter's name, kind
// and host, its limit (permits, or permits a minute for the rate kinds),
// permits in use and free, its queue and its counts of leases granted,
// refused and throttled; each guard's keys with the quota their server
// published and how long the key is blocked; each breaker's state. It
// reads what the metrics read, when the page is asked for, so it costs the
// limiters nothing in between.
package status
