package main

import "strings"

// rows are the dashboard's rows and panels, in order: each panel a
// time series of its queries, in the unit given.
var rows = []row{
	{title: "Limiters", panels: []panel{
		chart("Grants and refusals", "reqps", "Leases a second, by outcome and, for refusals, reason.",
			q(sumBy("server_address, headroom_limiter, headroom_outcome, headroom_reason", rate(picked("headroom_limiter_leases_total"))),
				hostLimiter+" {{headroom_outcome}} {{headroom_reason}}")),
		chart("Refusal ratio", "percentunit", "",
			q(perLimiter("sum", rate(picked("headroom_limiter_leases_total", `headroom_outcome="denied"`)))+" / "+
				perLimiter("sum", rate(picked("headroom_limiter_leases_total"))), hostLimiter)),
		chart("Wait in the queue", "s", "",
			quantiles(picked("headroom_limiter_wait_duration_seconds_bucket"), "server_address, headroom_limiter", hostLimiter)...),
		chart("Queue", "short", "",
			q(perLimiter("sum", picked("headroom_limiter_queue_length")), "queued "+hostLimiter),
			q(perLimiter("max", own("headroom_limiter_queue_limit")), "limit "+hostLimiter)),
		chart("Saturation", "percentunit", "Permits in use over capacity (in use plus available).",
			q(perLimiter("sum", own("headroom_limiter_in_use"))+" / ("+perLimiter("sum", own("headroom_limiter_in_use"))+" + "+
				perLimiter("sum", own("headroom_limiter_available"))+")", hostLimiter)),
		chart("Concurrency limit against use", "short", "",
			q(perLimiter("max", own("headroom_limiter_limit")), "limit "+hostLimiter),
			q(perLimiter("sum", own("headroom_limiter_in_use", `headroom_limiter_kind=~"concurrency|adaptive"`)), "in use "+hostLimiter)),
		chart("Rate limit against use", "short", "",
			q(perLimiter("max", own("headroom_limiter_rate_per_min")), "limit "+hostLimiter+" /min"),
			q("60 * "+perLimiter("sum", rate(picked("headroom_limiter_permits_total", `headroom_outcome="acquired"`,
				`headroom_limiter_kind=~"per_second|per_window|adaptive_rate"`))), "granted "+hostLimiter+" /min")),
		chart("Throttles, cuts and pauses", "ops", "",
			q(perLimiter("sum", rate(picked("headroom_limiter_throttles_total"))), "throttles "+hostLimiter),
			q(perLimiter("sum", rate(picked("headroom_limiter_cuts_total"))), "cuts "+hostLimiter),
			q(perLimiter("sum", rate(picked("headroom_limiter_pauses_total"))), "pauses "+hostLimiter)),
		chart("Adaptive rate", "short", "Permits a minute, for the whole budget and this process's share; paused is 0 or 1.",
			q(perLimiter("max", own("headroom_limiter_budget_rate_per_min")), "budget "+hostLimiter),
			q(perLimiter("max", own("headroom_limiter_rate_per_min", `headroom_limiter_kind="adaptive_rate"`)), "share "+hostLimiter),
			q(perLimiter("max", own("headroom_limiter_ceiling_per_min")), "ceiling "+hostLimiter),
			q(perLimiter("max", own("headroom_limiter_published_rate_per_min")), "published "+hostLimiter),
			q(perLimiter("sum", picked("headroom_limiter_send_rate_per_min")), "sent "+hostLimiter),
			q(perLimiter("max", picked("headroom_limiter_paused")), "paused "+hostLimiter),
			q(perLimiter("max", picked("headroom_limiter_instances")), "instances "+hostLimiter)),
		chart("Adaptive concurrency latency", "s", "",
			q(perLimiter("max", picked("headroom_limiter_latency_baseline_seconds")), "baseline "+hostLimiter),
			q(perLimiter("max", picked("headroom_limiter_latency_round_seconds")), "latest round "+hostLimiter)),
	}},
	{title: "Quota guard", panels: []panel{
		chart("Remaining against limit", "short", "",
			q(sumBy("server_address, headroom_quota_key", series("headroom_quota_remaining", onHost)), "remaining "+hostKey),
			q(sumBy("server_address, headroom_quota_key", series("headroom_quota_limit", onHost)), "limit "+hostKey)),
		chart("Guard refusals", "ops", "",
			q(sumBy("server_address, headroom_quota_key, headroom_reason", rate(series("headroom_quota_refusals_total", onHost))),
				hostKey+" {{headroom_reason}}")),
	}},
	{title: "Resilience runner", panels: []panel{
		chart("Calls by stop reason", "reqps", "",
			q(sumBy("headroom_runner, headroom_stop", rate(ofRunner("headroom_runner_calls_total"))), "{{headroom_runner}} {{headroom_stop}}")),
		chart("Success ratio", "percentunit", "",
			q(perRunner(ofRunner("headroom_runner_calls_total", `headroom_stop="succeeded"`), ofRunner("headroom_runner_calls_total")),
				"{{headroom_runner}}")),
		chart("Attempts: dependency against self-imposed", "ops", "",
			q(sumBy("headroom_runner, headroom_verdict", rate(ofRunner("headroom_runner_attempts_total", `headroom_self_imposed!="true"`))),
				"{{headroom_runner}} dependency {{headroom_verdict}}"),
			q(sumBy("headroom_runner", rate(ofRunner("headroom_runner_attempts_total", `headroom_self_imposed="true"`))),
				"{{headroom_runner}} self-imposed")),
		chart("Dependency throttle ratio", "percentunit", "Attempts the dependency throttled, over attempts that reached it.",
			q(perRunner(ofRunner("headroom_runner_attempts_total", `headroom_verdict="throttled"`, `headroom_self_imposed="false"`),
				ofRunner("headroom_runner_attempts_total", `headroom_self_imposed!="true"`)), "{{headroom_runner}}")),
		chart("Retries per call", "short", "",
			q(perRunner(ofRunner("headroom_runner_retries_total"), ofRunner("headroom_runner_calls_total")), "retries per call {{headroom_runner}}"),
			q(sumBy("headroom_runner, headroom_stop, headroom_retried", rate(ofRunner("headroom_runner_calls_total"))),
				"{{headroom_runner}} {{headroom_stop}} retried={{headroom_retried}}")),
		chart("Budget denials", "ops", "",
			q(sumBy("headroom_runner", rate(ofRunner("headroom_runner_budget_denials_total"))), "{{headroom_runner}}")),
		chart("Backoff", "s", "",
			quantiles(ofRunner("headroom_runner_delay_duration_seconds_bucket"), "headroom_runner", "{{headroom_runner}}")...),
		chart("Breaker state and transitions", "short", "",
			q("max by (headroom_runner) ("+ofRunner("headroom_runner_breaker_state")+")", "state {{headroom_runner}} (0 closed, 1 half-open, 2 open)"),
			q(sumBy("headroom_runner, headroom_breaker_state", "increase("+ofRunner("headroom_runner_breaker_transitions_total")+"[$__rate_interval])"),
				"{{headroom_runner}} entered {{headroom_breaker_state}}")),
		chart("Call and attempt duration", "s", "",
			q(p95("headroom_runner", ofRunner("headroom_runner_call_duration_seconds_bucket")), "call p95 {{headroom_runner}}"),
			q(p95("headroom_runner, headroom_attempt", ofRunner("headroom_runner_attempt_duration_seconds_bucket")),
				"attempt {{headroom_attempt}} p95 {{headroom_runner}}")),
	}},
	{title: "HTTP", panels: []panel{
		chart("Latency by status", "s", "",
			q(p95("http_response_status_code", series("http_client_request_duration_seconds_bucket", onHost)), "p95 {{http_response_status_code}}"),
			q(sumBy("http_response_status_code", rate(series("http_client_request_duration_seconds_count", onHost))),
				"requests/s {{http_response_status_code}}")),
	}},
	{title: "Fleet", panels: []panel{
		chart("Redis latency", "s", "Calls to Redis, answered or not, by operation: p50 and p99.",
			quantiles(series("headroom_fleet_redis_duration_seconds_bucket", onLimiter), "headroom_limiter, headroom_fleet_operation", fleetOp)...),
		chart("Redis errors", "reqps", "Calls to Redis that failed, a second, by operation.",
			q(sumBy("headroom_limiter, headroom_fleet_operation", rate(series("headroom_fleet_redis_errors_total", onLimiter))), fleetOp)),
		chart("Decided without Redis", "reqps", "Requests the failure policy decided while Redis was out of reach: failing open (this process's share) or closed (refused).",
			q(sumBy("headroom_limiter, headroom_fleet_policy", rate(series("headroom_fleet_fallbacks_total", onLimiter))),
				"{{headroom_limiter}} {{headroom_fleet_policy}}")),
		chart("Live instances", "short", "The processes an instance counter last counted.",
			q("max by (headroom_limiter) ("+series("headroom_fleet_instances", onLimiter)+")", "{{headroom_limiter}}")),
		chart("Shared limits: permits in use and available", "short", "Permits of a fleet limiter spent within its burst or window by every process, and those left, read from Redis when the meter collects.",
			q(fleetOnly("max by (headroom_limiter) ("+series("headroom_limiter_in_use", onLimiter, `headroom_fleet_policy=""`)+")"), "in use {{headroom_limiter}}"),
			q(fleetOnly("max by (headroom_limiter) ("+series("headroom_limiter_available", onLimiter, `headroom_fleet_policy=""`)+")"), "available {{headroom_limiter}}")),
		chart("Shared limits against their fail-open share", "short", "A fleet limiter's whole rate, and the share this process enforces while failing open: two series, never added.",
			q("max by (headroom_limiter) ("+series("headroom_limiter_rate_per_min", onLimiter, `headroom_fleet_policy=""`)+")", "{{headroom_limiter}} rate/min"),
			q("max by (headroom_limiter) ("+series("headroom_limiter_rate_per_min", onLimiter, `headroom_fleet_policy="fail_open"`)+")",
				"{{headroom_limiter}} fail-open share/min")),
	}},
}

// The dashboard's variables as matchers, and the legends of the series
// they pick.
const (
	onLimiter   = `headroom_limiter=~"$limiter"`
	onHost      = `server_address=~"$host"`
	onRunner    = `headroom_runner=~"$runner"`
	hostLimiter = "{{server_address}} {{headroom_limiter}}"
	hostKey     = "{{server_address}} {{headroom_quota_key}}"
	fleetOp     = "{{headroom_limiter}} {{headroom_fleet_operation}}"
)

// chart is a time series panel of qs in unit, described unless
// description is empty.
func chart(title, unit, description string, qs ...query) panel {
	return panel{title: title, description: description, unit: unit, queries: qs}
}

// q is a query of expr, its series named by legend.
func q(expr, legend string) query { return query{expr: expr, legend: legend} }

// series is metric's selector with matchers.
func series(metric string, matchers ...string) string {
	return metric + "{" + strings.Join(matchers, ", ") + "}"
}

// picked is metric's series of the limiters and hosts the variables pick.
func picked(metric string, more ...string) string {
	return series(metric, append([]string{onLimiter, onHost}, more...)...)
}

// own is picked without the series of a fleet limiter's fail-open share,
// which stand beside the shared limit and never add to it.
func own(metric string, more ...string) string {
	return series(metric, append([]string{`headroom_fleet_policy=""`, onLimiter, onHost}, more...)...)
}

// ofRunner is metric's series of the runners the variable picks.
func ofRunner(metric string, more ...string) string {
	return series(metric, append([]string{onRunner}, more...)...)
}

func rate(sel string) string { return "rate(" + sel + "[$__rate_interval])" }

func sumBy(labels, expr string) string { return "sum by (" + labels + ") (" + expr + ")" }

// perLimiter aggregates expr with agg per host and limiter, so that no two
// hosts' limits are ever added.
func perLimiter(agg, expr string) string {
	return agg + " by (server_address, headroom_limiter) (" + expr + ")"
}

// fleetOnly keeps the series of expr, by limiter, of the limiters that call
// Redis: the fleet's, not limit's limiters of the same metric.
func fleetOnly(expr string) string {
	return expr + " and on (headroom_limiter) max by (headroom_limiter) (headroom_fleet_redis_duration_seconds_count)"
}

// perRunner is the per-runner rate of part over the rate of whole.
func perRunner(part, whole string) string {
	return sumBy("headroom_runner", rate(part)) + " / " + sumBy("headroom_runner", rate(whole))
}

// p95 is the 95th percentile of a histogram's buckets sel, per labels.
func p95(labels, sel string) string { return quantile("0.95", labels, sel) }

func quantile(phi, labels, sel string) string {
	return "histogram_quantile(" + phi + ", sum by (le, " + labels + ") (" + rate(sel) + "))"
}

// quantiles are the p50 and p99 of the histogram whose buckets sel picks,
// per labels.
func quantiles(sel, labels, legend string) []query {
	return []query{
		q(quantile("0.5", labels, sel), "p50 "+legend),
		q(quantile("0.99", labels, sel), "p99 "+legend),
	}
}
