package metrics

import (
	"strconv"
	"sync"

	"go.opentelemetry.io/otel/attribute"

	"github.com/headroom-go/headroom/telemetry"
)

// DefaultMaxHostSeries is how many hosts a client labels apart when it is
// not told otherwise. Each limiter instrument makes at most six series a
// host (its lease outcomes), so 100 hosts keep every instrument well under
// the OpenTelemetry SDK's default cardinality limit of 2,000 series.
const DefaultMaxHostSeries = 100

// HostSeries is a client's bound on per-host series: the first max host
// addresses it sees are labelled with their server.address (and
// server.port) for the rest of its life, and every later address with
// server.address OtherHosts,
// so that the series of every per-host family stay bounded however many
// hosts the client meets. A host keeps its label when its limiter is
// dropped and made again, so that its series continue.
//
// A nil *HostSeries labels every host apart.
type HostSeries struct {
	max int

	mu     sync.RWMutex
	labels map[hostPort][]attribute.KeyValue
	admit  map[string]bool // the addresses labelled apart
	other  []attribute.KeyValue
}

type hostPort struct {
	address string
	port    int
}

// NewHostSeries is a bound of max hosts; max <= 0 means
// DefaultMaxHostSeries.
func NewHostSeries(max int) *HostSeries {
	if max <= 0 {
		max = DefaultMaxHostSeries
	}
	return &HostSeries{max: max, labels: make(map[hostPort][]attribute.KeyValue), admit: make(map[string]bool),
		other: []attribute.KeyValue{attribute.String(telemetry.AttrServerAddress, telemetry.OtherHosts)}}
}

// Max is the number of hosts labelled apart.
func (h *HostSeries) Max() int {
	if h == nil {
		return 0
	}
	return h.max
}

// Labels returns the attributes of the host at address and port: its own
// server.address and server.port, or server.address OtherHosts once max
// other addresses have theirs. port 0 is left out. An address is admitted
// or folded whatever its port, so that every family of one host (with the
// port the family knows) folds alike. The slice is shared: append
// to it only through a full slice expression.
func (h *HostSeries) Labels(address string, port int) []attribute.KeyValue {
	k := hostPort{address, port}
	if h != nil {
		h.mu.RLock()
		kvs, ok := h.labels[k]
		full := !ok && !h.admit[address] && len(h.admit) >= h.max
		h.mu.RUnlock()
		switch {
		case ok:
			return kvs
		case full:
			return h.other
		}
	}
	kvs := []attribute.KeyValue{attribute.String(telemetry.AttrServerAddress, address)}
	if port != 0 {
		kvs = append(kvs, attribute.Int(telemetry.AttrServerPort, port))
	}
	if h == nil {
		return kvs
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if have, ok := h.labels[k]; ok {
		return have
	}
	if !h.admit[address] {
		if len(h.admit) >= h.max {
			return h.other
		}
		h.admit[address] = true
	}
	h.labels[k] = kvs
	return kvs
}

// Folded reports whether kvs, from Labels, stand for the hosts past the
// bound.
func Folded(kvs []attribute.KeyValue) bool {
	for _, kv := range kvs {
		if kv.Key == telemetry.AttrServerAddress {
			return kv.Value.AsString() == telemetry.OtherHosts
		}
	}
	return false
}

// SplitPort is a host[:port] key's address and port; port is 0 when the
// key has none that parses.
func SplitPort(key string) (address string, port int) {
	for i := len(key) - 1; i >= 0; i-- {
		switch c := key[i]; {
		case c == ':':
			if p, err := strconv.Atoi(key[i+1:]); err == nil && p > 0 && p < 1<<16 && i > 0 {
				if key[0] == '[' && key[i-1] == ']' {
					return key[1 : i-1], p
				}
				return key[:i], p
			}
			return key, 0
		case c < '0' || c > '9':
			return key, 0
		}
	}
	return key, 0
}
