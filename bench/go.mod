module github.com/headroom-go/headroom/bench

go 1.26.0

replace github.com/headroom-go/headroom => ../

replace github.com/headroom-go/headroom/fleet => ../fleet

require (
	github.com/failsafe-go/failsafe-go v0.9.8
	github.com/go-redis/redis_rate/v10 v10.0.1
	github.com/headroom-go/headroom v0.0.0-00010101000000-000000000000
	github.com/headroom-go/headroom/fleet v0.0.0-00010101000000-000000000000
	github.com/redis/go-redis/v9 v9.23.0
	go.uber.org/goleak v1.3.0
	go.uber.org/ratelimit v0.3.1
	golang.org/x/time v0.16.0
)

require (
	github.com/benbjohnson/clock v1.3.0 // indirect
	github.com/bits-and-blooms/bitset v1.24.4 // indirect
	github.com/cenkalti/backoff/v4 v4.3.0 // indirect
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/go-logr/logr v1.4.4 // indirect
	github.com/go-logr/stdr v1.2.2 // indirect
	github.com/influxdata/tdigest v0.0.1 // indirect
	go.opentelemetry.io/auto/sdk v1.2.1 // indirect
	go.opentelemetry.io/otel v1.47.0 // indirect
	go.opentelemetry.io/otel/log v1.47.0 // indirect
	go.opentelemetry.io/otel/metric v1.47.0 // indirect
	go.opentelemetry.io/otel/trace v1.47.0 // indirect
	go.uber.org/atomic v1.12.0 // indirect
	golang.org/x/sys v0.48.0 // indirect
)
