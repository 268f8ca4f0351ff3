// Package backoffcurve turns a headroom.Backoff into the
// github.com/cenkalti/backoff/v4 curve that computes it, for the packages
// that back off: limit/quota and resilience.
package backoffcurve
