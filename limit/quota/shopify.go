package quota

// Shopify REST Admin (legacy; shopify.dev, "API rate limits"):
// X-Shopify-Shop-Api-Call-Limit: 32/40 is used/size of a leaky bucket — not
// remaining/limit. Remaining is size − used (never below 0). No reset is
// published: the bucket leaks at a rate set by the plan (2 a second on
// Standard), so the Guard holds a key inside its reserve for
// Options.AssumedReset and lets one probe through at a time until a response
// says the bucket has drained. Resource-based limits can answer 429 while the
// bucket is below its size; the 429's Retry-After (a float, "2.0") covers
// those.

const hShopify = "X-Shopify-Shop-Api-Call-Limit"

func (p *parser) shopify(dst []Quota) []Quota {
	v, ok := p.get(hShopify)
	if !ok {
		return dst
	}
	slash := -1
	for i := 0; i < len(v); i++ {
		if v[i] == '/' {
			slash = i
			break
		}
	}
	if slash < 0 {
		return dst
	}
	used, ok1 := count(trim(v[:slash]))
	size, ok2 := count(trim(v[slash+1:]))
	if !ok1 || !ok2 || size == 0 {
		return dst
	}
	return append(dst, Quota{Dialect: shopify, Unit: "requests", Limit: size, Remaining: max(size-used, 0)})
}
