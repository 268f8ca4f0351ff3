package limit

import "github.com/headroom-go/headroom"

// Duration is headroom.Duration: a time.Duration that reads and writes JSON
// as a string such as "1m" or "250ms".
type Duration = headroom.Duration
