package quota

import (
	"net/http"
	"time"
)

// Telling epoch seconds, epoch milliseconds and delta seconds apart.
//
// X-RateLimit-Reset means epoch seconds at GitHub and X, epoch seconds with decimals at Discord, and delta seconds at others
// (RateLimit-Reset ≤ -06, SharePoint, envoy); some send epoch milliseconds.
// The JavaScript prior art (express-rate-limit/ratelimit-header-parser,
// npm) guesses with a fixed 1e9 threshold and has no milliseconds
// case. Here a number n is read against the current time, in whole seconds
// since the epoch (ref, never taken below 1e9 nor above 1e12 so that a zero
// or absurd clock cannot flip the rule):
//
//	n ≥ 100 × ref   epoch milliseconds. As seconds it would be thousands of
//	                years ahead; every millisecond timestamp since 1975
//	                qualifies.
//	n ≥ ref / 2     epoch seconds. As a delta it would be ≥ 28 years, longer
//	                than any published window; every timestamp since 1998
//	                qualifies, so a reset slightly in the past (clock skew, a
//	                window that just ended) is still read as a time.
//	otherwise       delta seconds from now.
//
// The gaps between the bands are factors of 50 and more, so skew between
// client and server clocks never moves a value across a boundary.
//
// Fractions are kept in all three (Discord sends "1470173023.123" and
// X-RateLimit-Reset-After "64.57").
//
// Correcting with Date. A relative value (delta seconds, Go durations, the
// IETF t parameter, Retry-After seconds) is taken from now, the time the
// response was read, and is not corrected: the server counted from the
// moment it sent the response, so now + delta is later than the true reset
// by the response latency. It errs on the side of waiting, and the Date
// header (one-second resolution, possibly another clock) could only make it
// worse. An absolute value (epoch seconds or milliseconds, RFC 3339, an
// HTTP-date Retry-After) is on the server's clock; when the response carries
// a Date, the wait is taken as value − Date — both on the server's clock, so
// clock skew cancels out — and added to now. Date is truncated to the
// second, so the difference is at most a second too long: again the safe
// side. draft-ietf-httpapi-ratelimit-headers allows clients to use Date
// this way, and SharePoint's throttling guidance points at Date to correct
// skew. Without a Date the
// value is compared with now.
//
// Every instant is clamped to [now, now + horizon]: a reset in the past means
// the window is over, and no published value can push a wait beyond the
// horizon (waits are capped further by MaxRetryAfter in the Guard).

// horizon is the furthest ahead any parsed instant may lie: a year and a
// bit, enough for monthly and yearly quotas.
const horizon = 400 * 24 * time.Hour

const maxWholeSeconds = int64(horizon / time.Second)

// decimal is a non-negative decimal number: a whole part and nanoseconds of
// fraction (digits beyond the ninth are ignored). The whole part saturates
// at 1e15 rather than overflow.
type decimal struct {
	whole int64
	nanos int64
}

// parseDecimal reads "123", "123.456", "2.0" or ".5": digits with at most one
// dot, no sign, no exponent, no spaces (the caller trims). It never
// allocates.
func parseDecimal(s string) (decimal, bool) {
	var d decimal
	if s == "" {
		return d, false
	}
	i, digits := 0, 0
	for ; i < len(s) && isDigit(s[i]); i++ {
		if d.whole < 1e15 {
			d.whole = d.whole*10 + int64(s[i]-'0')
		}
		digits++
	}
	if i < len(s) && s[i] == '.' {
		i++
		scale := int64(1e8)
		for ; i < len(s) && isDigit(s[i]); i++ {
			d.nanos += int64(s[i]-'0') * scale
			scale /= 10
			digits++
		}
	}
	return d, i == len(s) && digits > 0
}

// seconds turns a delta in seconds into a duration within [0, horizon].
func (d decimal) seconds() time.Duration {
	if d.whole >= maxWholeSeconds {
		return horizon
	}
	return time.Duration(d.whole)*time.Second + time.Duration(d.nanos)
}

// millis turns a delta in milliseconds into a duration within [0, horizon].
func (d decimal) millis() time.Duration {
	if d.whole >= maxWholeSeconds*1000 {
		return horizon
	}
	return time.Duration(d.whole)*time.Millisecond + time.Duration(d.nanos/1000)
}

// trim drops the optional whitespace around a field value. net/http trims
// already; hand-built headers may not.
func trim(s string) string {
	for len(s) > 0 && (s[0] == ' ' || s[0] == '\t') {
		s = s[1:]
	}
	for len(s) > 0 && (s[len(s)-1] == ' ' || s[len(s)-1] == '\t') {
		s = s[:len(s)-1]
	}
	return s
}

// parser carries one response's headers, the current time and, read on first
// need, its Date.
type parser struct {
	h        http.Header
	now      time.Time
	dateRead bool
	hasDate  bool
	date     time.Time
}

// get returns the first value of a header by its canonical key.
func (p *parser) get(key string) (string, bool) {
	v := p.h[key]
	if len(v) == 0 {
		return "", false
	}
	return trim(v[0]), true
}

// after is now + d, d clamped to [0, horizon].
func (p *parser) after(d time.Duration) time.Time {
	if d < 0 {
		d = 0
	}
	if d > horizon {
		d = horizon
	}
	return p.now.Add(d)
}

// absolute turns an instant on the server's clock into one on ours; see the
// rule above.
func (p *parser) absolute(t time.Time) time.Time {
	if !p.dateRead {
		p.dateRead = true
		if v, ok := p.get("Date"); ok {
			p.date, p.hasDate = parseHTTPDate(v)
		}
	}
	base := p.now
	if p.hasDate {
		base = p.date
	}
	return p.after(t.Sub(base))
}

// resetNumber applies the epoch-ms / epoch-s / delta-s rule to n.
func (p *parser) resetNumber(n decimal) time.Time {
	ref := p.now.Unix()
	ref = min(max(ref, 1e9), 1e12)
	switch {
	case n.whole >= 100*ref:
		if n.whole > 1e15 { // past the year 33 000 in milliseconds
			return p.after(horizon)
		}
		return p.absolute(time.Unix(n.whole/1000, (n.whole%1000)*1e6+n.nanos/1000))
	case n.whole >= ref/2:
		return p.absolute(time.Unix(n.whole, n.nanos))
	default:
		return p.after(n.seconds())
	}
}

// resetString parses a reset given as a number under the rule above.
func (p *parser) resetString(v string) (time.Time, bool) {
	n, ok := parseDecimal(v)
	if !ok {
		return time.Time{}, false
	}
	return p.resetNumber(n), true
}

// ParseReset reads a reset value given as a number — epoch seconds, epoch
// milliseconds or delta seconds, with or without a fraction — and returns
// the instant it names, telling the three apart against now as the package
// documentation describes. The instant is never before now nor more than a
// horizon of about a year after it. Values that are not plain non-negative
// decimal numbers are refused.
func ParseReset(v string, now time.Time) (time.Time, bool) {
	p := parser{now: now, dateRead: true}
	return p.resetString(trim(v))
}

// parseHTTPDate reads an HTTP-date. IMF-fixdate, by far the common form, is
// read by hand without allocating; the two obsolete forms (RFC 850 and
// asctime) go through http.ParseTime, which accepts all three (RFC 9110
// §5.6.7).
func parseHTTPDate(v string) (time.Time, bool) {
	if t, ok := parseIMFFixdate(v); ok {
		return t, true
	}
	t, err := http.ParseTime(v)
	return t, err == nil
}

// parseIMFFixdate reads "Sun, 06 Nov 1994 08:49:37 GMT".
func parseIMFFixdate(v string) (time.Time, bool) {
	if len(v) != 29 || v[3] != ',' || v[4] != ' ' || v[7] != ' ' || v[11] != ' ' ||
		v[16] != ' ' || v[19] != ':' || v[22] != ':' || v[25] != ' ' || v[26:] != "GMT" {
		return time.Time{}, false
	}
	num := func(s string) (int, bool) {
		n := 0
		for i := 0; i < len(s); i++ {
			if !isDigit(s[i]) {
				return 0, false
			}
			n = n*10 + int(s[i]-'0')
		}
		return n, true
	}
	day, ok1 := num(v[5:7])
	year, ok2 := num(v[12:16])
	hour, ok3 := num(v[17:19])
	minute, ok4 := num(v[20:22])
	sec, ok5 := num(v[23:25])
	if !(ok1 && ok2 && ok3 && ok4 && ok5) {
		return time.Time{}, false
	}
	month := time.Month(0)
	switch v[8:11] {
	case "Jan":
		month = time.January
	case "Feb":
		month = time.February
	case "Mar":
		month = time.March
	case "Apr":
		month = time.April
	case "May":
		month = time.May
	case "Jun":
		month = time.June
	case "Jul":
		month = time.July
	case "Aug":
		month = time.August
	case "Sep":
		month = time.September
	case "Oct":
		month = time.October
	case "Nov":
		month = time.November
	case "Dec":
		month = time.December
	default:
		return time.Time{}, false
	}
	if day < 1 || day > 31 || hour > 23 || minute > 59 || sec > 60 {
		return time.Time{}, false
	}
	t := time.Date(year, month, day, hour, minute, sec, 0, time.UTC)
	if t.Day() != day { // 31 Feb and the like
		return time.Time{}, false
	}
	return t, true
}
