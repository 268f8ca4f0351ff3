package quota

import "strings"

// A small, allocation-free reader for the Structured Field Values of
// RFC 9651 (which obsoletes RFC 8941), enough for the IETF RateLimit fields:
// Lists and Dictionaries of Items with Parameters. It validates the whole
// syntax (strings, tokens, integers, decimals, byte sequences, booleans,
// dates, display strings, inner lists) because the draft says "Malformed
// RateLimit header fields MUST be ignored" (draft-ietf-httpapi-ratelimit-headers): a field
// that fails anywhere is dropped as a whole, never half-read.
//
// Only the parameters the drafts define are kept (q, qu, w, pk on policies;
// r, t, pk on limits; w on -07/-06 integer policies). Unknown parameters are
// checked for syntax and then ignored, as the draft asks ("can be regarded
// as comments"), so the appendix example "sliding";q=12;r=6;t=1 reads fine.

// sfKind is the type of a bare item.
type sfKind uint8

const (
	sfNone sfKind = iota
	sfInteger
	sfDecimal
	sfString
	sfToken
	sfBinary
	sfBoolean
	sfDate
	sfDisplay
	sfInner
)

// sfMember is one list or dictionary member with the parameters the
// RateLimit drafts use. Integer parameters that are negative or of another
// type leave the member marked bad: it is skipped, the rest of the field is
// kept.
type sfMember struct {
	key  string // dictionary member key; "" for a list member
	kind sfKind
	str  string // string (unescaped), token, or base64 text of a byte sequence
	num  int64  // integer, or the whole part of a decimal
	neg  bool   // the integer or decimal is negative

	q, w, r, t             int64
	hasQ, hasW, hasR, hasT bool
	qu, pk                 string
	bad                    bool
}

type sfScanner struct {
	s string
	i int
}

func (p *sfScanner) eof() bool { return p.i >= len(p.s) }

func (p *sfScanner) sp() {
	for p.i < len(p.s) && p.s[p.i] == ' ' {
		p.i++
	}
}

func (p *sfScanner) ows() {
	for p.i < len(p.s) && (p.s[p.i] == ' ' || p.s[p.i] == '\t') {
		p.i++
	}
}

func isLCAlpha(c byte) bool { return c >= 'a' && c <= 'z' }
func isDigit(c byte) bool   { return c >= '0' && c <= '9' }
func isAlpha(c byte) bool   { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

func isTChar(c byte) bool {
	if isAlpha(c) || isDigit(c) {
		return true
	}
	switch c {
	case '!', '#', '$', '%', '&', '\'', '*', '+', '-', '.', '^', '_', '`', '|', '~':
		return true
	}
	return false
}

func isKeyChar(c byte) bool {
	return isLCAlpha(c) || isDigit(c) || c == '_' || c == '-' || c == '.' || c == '*'
}

func isBase64(c byte) bool {
	return isAlpha(c) || isDigit(c) || c == '+' || c == '/' || c == '='
}

// key reads a key (lcalpha / "*" then key characters).
func (p *sfScanner) key() (string, bool) {
	if p.eof() || !(isLCAlpha(p.s[p.i]) || p.s[p.i] == '*') {
		return "", false
	}
	start := p.i
	p.i++
	for p.i < len(p.s) && isKeyChar(p.s[p.i]) {
		p.i++
	}
	return p.s[start:p.i], true
}

// bare reads a bare item into kind, str, num and neg.
func (p *sfScanner) bare(m *sfMember) bool {
	if p.eof() {
		return false
	}
	c := p.s[p.i]
	switch {
	case c == '-' || isDigit(c):
		return p.number(m)
	case c == '"':
		m.kind = sfString
		s, ok := p.str()
		m.str = s
		return ok
	case c == '*' || isAlpha(c):
		start := p.i
		p.i++
		for p.i < len(p.s) && (isTChar(p.s[p.i]) || p.s[p.i] == ':' || p.s[p.i] == '/') {
			p.i++
		}
		m.kind, m.str = sfToken, p.s[start:p.i]
		return true
	case c == ':':
		p.i++
		start := p.i
		for p.i < len(p.s) && isBase64(p.s[p.i]) {
			p.i++
		}
		if p.eof() || p.s[p.i] != ':' {
			return false
		}
		m.kind, m.str = sfBinary, p.s[start:p.i]
		p.i++
		return true
	case c == '?':
		if p.i+1 >= len(p.s) || (p.s[p.i+1] != '0' && p.s[p.i+1] != '1') {
			return false
		}
		m.kind, m.num = sfBoolean, int64(p.s[p.i+1]-'0')
		p.i += 2
		return true
	case c == '@':
		p.i++
		if p.eof() || !(p.s[p.i] == '-' || isDigit(p.s[p.i])) {
			return false
		}
		if !p.number(m) || m.kind != sfInteger {
			return false
		}
		m.kind = sfDate
		return true
	case c == '%':
		// Display string: %"…" with lowercase percent-escapes; kept as text.
		if p.i+1 >= len(p.s) || p.s[p.i+1] != '"' {
			return false
		}
		p.i += 2
		start := p.i
		for ; p.i < len(p.s); p.i++ {
			ch := p.s[p.i]
			if ch == '"' {
				m.kind, m.str = sfDisplay, p.s[start:p.i]
				p.i++
				return true
			}
			if ch < 0x20 || ch > 0x7e {
				return false
			}
		}
		return false
	}
	return false
}

// number reads an sf-integer (up to 15 digits) or sf-decimal (up to 12
// digits, a dot, 1 to 3 digits).
func (p *sfScanner) number(m *sfMember) bool {
	if p.s[p.i] == '-' {
		m.neg = true
		p.i++
	}
	start := p.i
	var n int64
	for p.i < len(p.s) && isDigit(p.s[p.i]) {
		n = n*10 + int64(p.s[p.i]-'0')
		p.i++
		if p.i-start > 15 {
			return false
		}
	}
	digits := p.i - start
	if digits == 0 {
		return false
	}
	m.num = n
	if p.i < len(p.s) && p.s[p.i] == '.' {
		if digits > 12 {
			return false
		}
		p.i++
		fs := p.i
		for p.i < len(p.s) && isDigit(p.s[p.i]) {
			p.i++
		}
		if f := p.i - fs; f < 1 || f > 3 {
			return false
		}
		m.kind = sfDecimal
		return true
	}
	m.kind = sfInteger
	return true
}

// str reads an sf-string; it allocates only when the string holds escapes.
func (p *sfScanner) str() (string, bool) {
	p.i++ // opening quote
	start := p.i
	escaped := false
	for p.i < len(p.s) {
		c := p.s[p.i]
		switch {
		case c == '\\':
			if p.i+1 >= len(p.s) || (p.s[p.i+1] != '"' && p.s[p.i+1] != '\\') {
				return "", false
			}
			escaped = true
			p.i += 2
		case c == '"':
			s := p.s[start:p.i]
			p.i++
			if escaped {
				var b strings.Builder
				b.Grow(len(s))
				for j := 0; j < len(s); j++ {
					if s[j] == '\\' {
						j++
					}
					b.WriteByte(s[j])
				}
				s = b.String()
			}
			return s, true
		case c < 0x20 || c > 0x7e:
			return "", false
		default:
			p.i++
		}
	}
	return "", false
}

// params reads parameters; the ones the drafts define go into m.
func (p *sfScanner) params(m *sfMember, keep bool) bool {
	for !p.eof() && p.s[p.i] == ';' {
		p.i++
		p.sp()
		k, ok := p.key()
		if !ok {
			return false
		}
		var v sfMember
		v.kind, v.num = sfBoolean, 1
		if !p.eof() && p.s[p.i] == '=' {
			p.i++
			if !p.bare(&v) {
				return false
			}
		}
		if !keep {
			continue
		}
		intParam := func(dst *int64, has *bool) {
			if v.kind != sfInteger || v.neg {
				m.bad = true
				return
			}
			*dst, *has = v.num, true
		}
		switch k {
		case "q":
			intParam(&m.q, &m.hasQ)
		case "w":
			intParam(&m.w, &m.hasW)
		case "r":
			intParam(&m.r, &m.hasR)
		case "t":
			intParam(&m.t, &m.hasT)
		case "qu":
			if v.kind == sfString || v.kind == sfToken {
				m.qu = v.str
			}
		case "pk":
			if v.kind == sfBinary {
				m.pk = v.str
			}
		}
	}
	return true
}

// member reads one list member (dict false) or dictionary member (dict true).
func (p *sfScanner) member(m *sfMember, dict bool) bool {
	if dict {
		k, ok := p.key()
		if !ok {
			return false
		}
		m.key = k
		if p.eof() || p.s[p.i] != '=' {
			m.kind, m.num = sfBoolean, 1
			return p.params(m, true)
		}
		p.i++
	}
	if !p.eof() && p.s[p.i] == '(' {
		// Inner list: check it and keep nothing of it but its kind.
		p.i++
		for {
			p.sp()
			if p.eof() {
				return false
			}
			if p.s[p.i] == ')' {
				p.i++
				break
			}
			var it sfMember
			if !p.bare(&it) || !p.params(&it, false) {
				return false
			}
			if !p.eof() && p.s[p.i] != ' ' && p.s[p.i] != ')' {
				return false
			}
		}
		m.kind = sfInner
		return p.params(m, false)
	}
	if !p.bare(m) {
		return false
	}
	return p.params(m, true)
}

// sfParse reads a List (dict false) or Dictionary (dict true) spread over
// the field lines, as if they were joined with commas (RFC 9651 §3.1). It
// appends at most cap(out)-len(out) members and reports false when any part
// of the field is malformed. An empty field is an empty list.
func sfParse(lines []string, dict bool, out []sfMember) ([]sfMember, bool) {
	for _, line := range lines {
		p := sfScanner{s: line}
		p.sp()
		if p.eof() {
			continue
		}
		for {
			var m sfMember
			if !p.member(&m, dict) {
				return out, false
			}
			if len(out) < cap(out) {
				out = append(out, m)
			}
			p.ows()
			if p.eof() {
				break
			}
			if p.s[p.i] != ',' {
				return out, false
			}
			p.i++
			p.ows()
			if p.eof() {
				return out, false // a trailing comma
			}
		}
	}
	return out, true
}

// sfItem reads a single Item (the ≤-06 RateLimit-Remaining and -Reset).
func sfItem(v string) (sfMember, bool) {
	var m sfMember
	p := sfScanner{s: v}
	p.sp()
	if !p.bare(&m) || !p.params(&m, false) {
		return m, false
	}
	p.sp()
	return m, p.eof()
}

// sfLooksLikeDict tells the -07 Dictionary (limit=100, remaining=50,
// reset=5) from the -08+ List ("default";r=50;t=30): a dictionary starts with
// a key followed by "=". A -08 List's members are strings (a token followed
// by ";" also reads as a List).
func sfLooksLikeDict(v string) bool {
	p := sfScanner{s: v}
	p.sp()
	if _, ok := p.key(); !ok {
		return false
	}
	return !p.eof() && p.s[p.i] == '='
}
