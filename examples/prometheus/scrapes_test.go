package main

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// The example drained for three seconds and exited, which a 5 s scrape
// missed: it now waits for a scrape that began after its workload ended.
func TestWaitsForAScrapeOfTheFinalCounts(t *testing.T) {
	s := &scrapes{seen: make(chan struct{}, 1)}
	srv := httptest.NewServer(s.wrap(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})))
	defer srv.Close()
	get := func() {
		resp, err := http.Get(srv.URL)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	get() // a scrape before the end does not count
	ended := time.Now()
	if s.after(ended, 20*time.Millisecond) {
		t.Fatal("a scrape from before the end was taken for the final one")
	}
	done := make(chan bool)
	go func() { done <- s.after(ended, time.Minute) }()
	get()
	if !<-done {
		t.Error("the scrape after the end was not seen")
	}
}
