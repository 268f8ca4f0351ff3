package status_test

import (
	"io"
	"net/http"
	"runtime"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// keep keeps v reachable until the test returns: breakers are listed while
// they live.
func keep(v any) { runtime.KeepAlive(v) }

func bufCopy(b *strings.Builder, resp *http.Response) (int64, error) {
	defer resp.Body.Close()
	return io.Copy(b, resp.Body)
}
