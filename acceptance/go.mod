module github.com/headroom-go/headroom/acceptance

go 1.26.0

replace github.com/headroom-go/headroom => ../

require (
	github.com/didip/tollbooth/v7 v7.0.2
	github.com/go-chi/httprate v0.16.1
	github.com/hashicorp/go-retryablehttp v0.7.8
	github.com/headroom-go/headroom v0.0.0-00010101000000-000000000000
	github.com/ulule/limiter/v3 v3.11.2
	go.uber.org/goleak v1.3.0
)

require (
	github.com/cenkalti/backoff/v4 v4.3.0 // indirect
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/go-logr/logr v1.4.4 // indirect
	github.com/go-logr/stdr v1.2.2 // indirect
	github.com/go-pkgz/expirable-cache/v3 v3.0.0 // indirect
	github.com/hashicorp/go-cleanhttp v0.5.2 // indirect
	github.com/klauspost/cpuid/v2 v2.2.10 // indirect
	github.com/pkg/errors v0.9.1 // indirect
	github.com/zeebo/xxh3 v1.0.2 // indirect
	go.opentelemetry.io/auto/sdk v1.2.1 // indirect
	go.opentelemetry.io/otel v1.47.0 // indirect
	go.opentelemetry.io/otel/log v1.47.0 // indirect
	go.opentelemetry.io/otel/metric v1.47.0 // indirect
	go.opentelemetry.io/otel/trace v1.47.0 // indirect
	golang.org/x/sys v0.48.0 // indirect
)
