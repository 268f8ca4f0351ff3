package main

// rows are the dashboard's rows and panels, in order: each panel a
// time series of its queries, in the unit given.
var rows = []row{
	{title: "Limiters", panels: []panel{
		{title: "Grants and refusals", description: "Leases a second, by outcome and, for refusals, reason.", unit: "reqps", queries: []query{
			{expr: "sum by (server_address, headroom_limiter, headroom_outcome, headroom_reason) (rate(headroom_limiter_leases_total{headroom_limiter=~\"$limiter\", server_address=~\"$host\"}[$__rate_interval]))", legend: "{{server_address}} {{headroom_limiter}} {{headroom_outcome}} {{headroom_reason}}"},
		}},
		{title: "Refusal ratio", description: "", unit: "percentunit", queries: []query{
			{expr: "sum by (server_address, headroom_limiter) (rate(headroom_limiter_leases_total{headroom_limiter=~\"$limiter\", server_address=~\"$host\", headroom_outcome=\"denied\"}[$__rate_interval])) / sum by (server_address, headroom_limiter) (rate(headroom_limiter_leases_total{headroom_limiter=~\"$limiter\", server_address=~\"$host\"}[$__rate_interval]))", legend: "{{server_address}} {{headroom_limiter}}"},
		}},
		{title: "Wait in the queue", description: "", unit: "s", queries: []query{
			{expr: "histogram_quantile(0.5, sum by (le, server_address, headroom_limiter) (rate(headroom_limiter_wait_duration_seconds_bucket{headroom_limiter=~\"$limiter\", server_address=~\"$host\"}[$__rate_interval])))", legend: "p50 {{server_address}} {{headroom_limiter}}"},
			{expr: "histogram_quantile(0.99, sum by (le, server_address, headroom_limiter) (rate(headroom_limiter_wait_duration_seconds_bucket{headroom_limiter=~\"$limiter\", server_address=~\"$host\"}[$__rate_interval])))", legend: "p99 {{server_address}} {{headroom_limiter}}"},
		}},
		{title: "Queue", description: "", unit: "short", queries: []query{
			{expr: "sum by (server_address, headroom_limiter) (headroom_limiter_queue_length{headroom_limiter=~\"$limiter\", server_address=~\"$host\"})", legend: "queued {{server_address}} {{headroom_limiter}}"},
			{expr: "max by (server_address, headroom_limiter) (headroom_limiter_queue_limit{headroom_fleet_policy=\"\", headroom_limiter=~\"$limiter\", server_address=~\"$host\"})", legend: "limit {{server_address}} {{headroom_limiter}}"},
		}},
		{title: "Saturation", description: "Permits in use over capacity (in use plus available).", unit: "percentunit", queries: []query{
			{expr: "sum by (server_address, headroom_limiter) (headroom_limiter_in_use{headroom_fleet_policy=\"\", headroom_limiter=~\"$limiter\", server_address=~\"$host\"}) / (sum by (server_address, headroom_limiter) (headroom_limiter_in_use{headroom_fleet_policy=\"\", headroom_limiter=~\"$limiter\", server_address=~\"$host\"}) + sum by (server_address, headroom_limiter) (headroom_limiter_available{headroom_fleet_policy=\"\", headroom_limiter=~\"$limiter\", server_address=~\"$host\"}))", legend: "{{server_address}} {{headroom_limiter}}"},
		}},
		{title: "Concurrency limit against use", description: "", unit: "short", queries: []query{
			{expr: "max by (server_address, headroom_limiter) (headroom_limiter_limit{headroom_fleet_policy=\"\", headroom_limiter=~\"$limiter\", server_address=~\"$host\"})", legend: "limit {{server_address}} {{headroom_limiter}}"},
			{expr: "sum by (server_address, headroom_limiter) (headroom_limiter_in_use{headroom_fleet_policy=\"\", headroom_limiter=~\"$limiter\", server_address=~\"$host\", headroom_limiter_kind=~\"concurrency|adaptive\"})", legend: "in use {{server_address}} {{headroom_limiter}}"},
		}},
		{title: "Rate limit against use", description: "", unit: "short", queries: []query{
			{expr: "max by (server_address, headroom_limiter) (headroom_limiter_rate_per_min{headroom_fleet_policy=\"\", headroom_limiter=~\"$limiter\", server_address=~\"$host\"})", legend: "limit {{server_address}} {{headroom_limiter}} /min"},
			{expr: "60 * sum by (server_address, headroom_limiter) (rate(headroom_limiter_permits_total{headroom_limiter=~\"$limiter\", server_address=~\"$host\", headroom_outcome=\"acquired\", headroom_limiter_kind=~\"per_second|per_window|adaptive_rate\"}[$__rate_interval]))", legend: "granted {{server_address}} {{headroom_limiter}} /min"},
		}},
		{title: "Throttles, cuts and pauses", description: "", unit: "ops", queries: []query{
			{expr: "sum by (server_address, headroom_limiter) (rate(headroom_limiter_throttles_total{headroom_limiter=~\"$limiter\", server_address=~\"$host\"}[$__rate_interval]))", legend: "throttles {{server_address}} {{headroom_limiter}}"},
			{expr: "sum by (server_address, headroom_limiter) (rate(headroom_limiter_cuts_total{headroom_limiter=~\"$limiter\", server_address=~\"$host\"}[$__rate_interval]))", legend: "cuts {{server_address}} {{headroom_limiter}}"},
			{expr: "sum by (server_address, headroom_limiter) (rate(headroom_limiter_pauses_total{headroom_limiter=~\"$limiter\", server_address=~\"$host\"}[$__rate_interval]))", legend: "pauses {{server_address}} {{headroom_limiter}}"},
		}},
		{title: "Adaptive rate", description: "Permits a minute, for the whole budget and this process's share; paused is 0 or 1.", unit: "short", queries: []query{
			{expr: "max by (server_address, headroom_limiter) (headroom_limiter_budget_rate_per_min{headroom_fleet_policy=\"\", headroom_limiter=~\"$limiter\", server_address=~\"$host\"})", legend: "budget {{server_address}} {{headroom_limiter}}"},
			{expr: "max by (server_address, headroom_limiter) (headroom_limiter_rate_per_min{headroom_fleet_policy=\"\", headroom_limiter=~\"$limiter\", server_address=~\"$host\", headroom_limiter_kind=\"adaptive_rate\"})", legend: "share {{server_address}} {{headroom_limiter}}"},
			{expr: "max by (server_address, headroom_limiter) (headroom_limiter_ceiling_per_min{headroom_fleet_policy=\"\", headroom_limiter=~\"$limiter\", server_address=~\"$host\"})", legend: "ceiling {{server_address}} {{headroom_limiter}}"},
			{expr: "max by (server_address, headroom_limiter) (headroom_limiter_published_rate_per_min{headroom_fleet_policy=\"\", headroom_limiter=~\"$limiter\", server_address=~\"$host\"})", legend: "published {{server_address}} {{headroom_limiter}}"},
			{expr: "sum by (server_address, headroom_limiter) (headroom_limiter_send_rate_per_min{headroom_limiter=~\"$limiter\", server_address=~\"$host\"})", legend: "sent {{server_address}} {{headroom_limiter}}"},
			{expr: "max by (server_address, headroom_limiter) (headroom_limiter_paused{headroom_limiter=~\"$limiter\", server_address=~\"$host\"})", legend: "paused {{server_address}} {{headroom_limiter}}"},
			{expr: "max by (server_address, headroom_limiter) (headroom_limiter_instances{headroom_limiter=~\"$limiter\", server_address=~\"$host\"})", legend: "instances {{server_address}} {{headroom_limiter}}"},
		}},
		{title: "Adaptive concurrency latency", description: "", unit: "s", queries: []query{
			{expr: "max by (server_address, headroom_limiter) (headroom_limiter_latency_baseline_seconds{headroom_limiter=~\"$limiter\", server_address=~\"$host\"})", legend: "baseline {{server_address}} {{headroom_limiter}}"},
			{expr: "max by (server_address, headroom_limiter) (headroom_limiter_latency_round_seconds{headroom_limiter=~\"$limiter\", server_address=~\"$host\"})", legend: "latest round {{server_address}} {{headroom_limiter}}"},
		}},
	}},
	{title: "Quota guard", panels: []panel{
		{title: "Remaining against limit", description: "", unit: "short", queries: []query{
			{expr: "sum by (server_address, headroom_quota_key) (headroom_quota_remaining{server_address=~\"$host\"})", legend: "remaining {{server_address}} {{headroom_quota_key}}"},
			{expr: "sum by (server_address, headroom_quota_key) (headroom_quota_limit{server_address=~\"$host\"})", legend: "limit {{server_address}} {{headroom_quota_key}}"},
		}},
		{title: "Guard refusals", description: "", unit: "ops", queries: []query{
			{expr: "sum by (server_address, headroom_quota_key, headroom_reason) (rate(headroom_quota_refusals_total{server_address=~\"$host\"}[$__rate_interval]))", legend: "{{server_address}} {{headroom_quota_key}} {{headroom_reason}}"},
		}},
	}},
	{title: "Resilience runner", panels: []panel{
		{title: "Calls by stop reason", description: "", unit: "reqps", queries: []query{
			{expr: "sum by (headroom_runner, headroom_stop) (rate(headroom_runner_calls_total{headroom_runner=~\"$runner\"}[$__rate_interval]))", legend: "{{headroom_runner}} {{headroom_stop}}"},
		}},
		{title: "Success ratio", description: "", unit: "percentunit", queries: []query{
			{expr: "sum by (headroom_runner) (rate(headroom_runner_calls_total{headroom_runner=~\"$runner\", headroom_stop=\"succeeded\"}[$__rate_interval])) / sum by (headroom_runner) (rate(headroom_runner_calls_total{headroom_runner=~\"$runner\"}[$__rate_interval]))", legend: "{{headroom_runner}}"},
		}},
		{title: "Attempts: dependency against self-imposed", description: "", unit: "ops", queries: []query{
			{expr: "sum by (headroom_runner, headroom_verdict) (rate(headroom_runner_attempts_total{headroom_runner=~\"$runner\", headroom_self_imposed!=\"true\"}[$__rate_interval]))", legend: "{{headroom_runner}} dependency {{headroom_verdict}}"},
			{expr: "sum by (headroom_runner) (rate(headroom_runner_attempts_total{headroom_runner=~\"$runner\", headroom_self_imposed=\"true\"}[$__rate_interval]))", legend: "{{headroom_runner}} self-imposed"},
		}},
		{title: "Dependency throttle ratio", description: "Attempts the dependency throttled, over attempts that reached it.", unit: "percentunit", queries: []query{
			{expr: "sum by (headroom_runner) (rate(headroom_runner_attempts_total{headroom_runner=~\"$runner\", headroom_verdict=\"throttled\", headroom_self_imposed=\"false\"}[$__rate_interval])) / sum by (headroom_runner) (rate(headroom_runner_attempts_total{headroom_runner=~\"$runner\", headroom_self_imposed!=\"true\"}[$__rate_interval]))", legend: "{{headroom_runner}}"},
		}},
		{title: "Retries per call", description: "", unit: "short", queries: []query{
			{expr: "sum by (headroom_runner) (rate(headroom_runner_retries_total{headroom_runner=~\"$runner\"}[$__rate_interval])) / sum by (headroom_runner) (rate(headroom_runner_calls_total{headroom_runner=~\"$runner\"}[$__rate_interval]))", legend: "retries per call {{headroom_runner}}"},
			{expr: "sum by (headroom_runner, headroom_stop, headroom_retried) (rate(headroom_runner_calls_total{headroom_runner=~\"$runner\"}[$__rate_interval]))", legend: "{{headroom_runner}} {{headroom_stop}} retried={{headroom_retried}}"},
		}},
		{title: "Budget denials", description: "", unit: "ops", queries: []query{
			{expr: "sum by (headroom_runner) (rate(headroom_runner_budget_denials_total{headroom_runner=~\"$runner\"}[$__rate_interval]))", legend: "{{headroom_runner}}"},
		}},
		{title: "Backoff", description: "", unit: "s", queries: []query{
			{expr: "histogram_quantile(0.5, sum by (le, headroom_runner) (rate(headroom_runner_delay_duration_seconds_bucket{headroom_runner=~\"$runner\"}[$__rate_interval])))", legend: "p50 {{headroom_runner}}"},
			{expr: "histogram_quantile(0.99, sum by (le, headroom_runner) (rate(headroom_runner_delay_duration_seconds_bucket{headroom_runner=~\"$runner\"}[$__rate_interval])))", legend: "p99 {{headroom_runner}}"},
		}},
		{title: "Breaker state and transitions", description: "", unit: "short", queries: []query{
			{expr: "max by (headroom_runner) (headroom_runner_breaker_state{headroom_runner=~\"$runner\"})", legend: "state {{headroom_runner}} (0 closed, 1 half-open, 2 open)"},
			{expr: "sum by (headroom_runner, headroom_breaker_state) (increase(headroom_runner_breaker_transitions_total{headroom_runner=~\"$runner\"}[$__rate_interval]))", legend: "{{headroom_runner}} entered {{headroom_breaker_state}}"},
		}},
		{title: "Call and attempt duration", description: "", unit: "s", queries: []query{
			{expr: "histogram_quantile(0.95, sum by (le, headroom_runner) (rate(headroom_runner_call_duration_seconds_bucket{headroom_runner=~\"$runner\"}[$__rate_interval])))", legend: "call p95 {{headroom_runner}}"},
			{expr: "histogram_quantile(0.95, sum by (le, headroom_runner, headroom_attempt) (rate(headroom_runner_attempt_duration_seconds_bucket{headroom_runner=~\"$runner\"}[$__rate_interval])))", legend: "attempt {{headroom_attempt}} p95 {{headroom_runner}}"},
		}},
	}},
	{title: "HTTP", panels: []panel{
		{title: "Latency by status", description: "", unit: "s", queries: []query{
			{expr: "histogram_quantile(0.95, sum by (le, http_response_status_code) (rate(http_client_request_duration_seconds_bucket{server_address=~\"$host\"}[$__rate_interval])))", legend: "p95 {{http_response_status_code}}"},
			{expr: "sum by (http_response_status_code) (rate(http_client_request_duration_seconds_count{server_address=~\"$host\"}[$__rate_interval]))", legend: "requests/s {{http_response_status_code}}"},
		}},
	}},
	{title: "Fleet", panels: []panel{
		{title: "Redis latency", description: "Calls to Redis, answered or not, by operation: p50 and p99.", unit: "s", queries: []query{
			{expr: "histogram_quantile(0.5, sum by (le, headroom_limiter, headroom_fleet_operation) (rate(headroom_fleet_redis_duration_seconds_bucket{headroom_limiter=~\"$limiter\"}[$__rate_interval])))", legend: "p50 {{headroom_limiter}} {{headroom_fleet_operation}}"},
			{expr: "histogram_quantile(0.99, sum by (le, headroom_limiter, headroom_fleet_operation) (rate(headroom_fleet_redis_duration_seconds_bucket{headroom_limiter=~\"$limiter\"}[$__rate_interval])))", legend: "p99 {{headroom_limiter}} {{headroom_fleet_operation}}"},
		}},
		{title: "Redis errors", description: "Calls to Redis that failed, a second, by operation.", unit: "reqps", queries: []query{
			{expr: "sum by (headroom_limiter, headroom_fleet_operation) (rate(headroom_fleet_redis_errors_total{headroom_limiter=~\"$limiter\"}[$__rate_interval]))", legend: "{{headroom_limiter}} {{headroom_fleet_operation}}"},
		}},
		{title: "Decided without Redis", description: "Requests the failure policy decided while Redis was out of reach: failing open (this process's share) or closed (refused).", unit: "reqps", queries: []query{
			{expr: "sum by (headroom_limiter, headroom_fleet_policy) (rate(headroom_fleet_fallbacks_total{headroom_limiter=~\"$limiter\"}[$__rate_interval]))", legend: "{{headroom_limiter}} {{headroom_fleet_policy}}"},
		}},
		{title: "Live instances", description: "The processes an instance counter last counted.", unit: "short", queries: []query{
			{expr: "max by (headroom_limiter) (headroom_fleet_instances{headroom_limiter=~\"$limiter\"})", legend: "{{headroom_limiter}}"},
		}},
		{title: "Shared limits against their fail-open share", description: "A fleet limiter's whole rate, and the share this process enforces while failing open: two series, never added.", unit: "short", queries: []query{
			{expr: "max by (headroom_limiter) (headroom_limiter_rate_per_min{headroom_limiter=~\"$limiter\", headroom_fleet_policy=\"\"})", legend: "{{headroom_limiter}} rate/min"},
			{expr: "max by (headroom_limiter) (headroom_limiter_rate_per_min{headroom_limiter=~\"$limiter\", headroom_fleet_policy=\"fail_open\"})", legend: "{{headroom_limiter}} fail-open share/min"},
		}},
	}},
}
