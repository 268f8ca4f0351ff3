package sim

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestNamesAreForgiving(t *testing.T) {
	for name, want := range map[string]string{"fixed": kindFixedWindow, "Fixed_Window": kindFixedWindow, "sliding log": kindSlidingLog,
		"SLIDING-COUNTER": kindSlidingCounter, "tokenbucket": kindTokenBucket, "leaky-bucket": kindLeakyBucket} {
		if k, err := ServerKindNamed(name); err != nil || k != want {
			t.Errorf("%q: %v %v, want %v", name, k, err, want)
		}
	}
	for name, want := range map[string]string{"draft6": publishDraft6, "Draft-3": publishDraft3, "x_ratelimit": publishXRateLimit,
		"retryafter": publishRetryAfter, "none": publishNone} {
		if p, err := PublishNamed(name); err != nil || p != want {
			t.Errorf("%q: %v %v, want %v", name, p, err, want)
		}
	}
	if _, err := ServerKindNamed("gcra"); err == nil || !strings.Contains(err.Error(), "token-bucket") {
		t.Errorf("gcra: %v", err)
	}
	if _, err := PublishNamed("draft-8"); err == nil || !strings.Contains(err.Error(), "x-ratelimit") {
		t.Errorf("draft-8: %v", err)
	}
}

// ServerKinds and Publishes hand out copies: a caller that edits the list
// it got changes neither the next caller's list nor what Validate accepts.
func TestNameListsAreCopies(t *testing.T) {
	kinds, pubs := ServerKinds(), Publishes()
	kinds[0], pubs[0] = "warp", "smoke"
	if diff := cmp.Diff([]string{"fixed-window", "sliding-log", "sliding-counter", "token-bucket", "leaky-bucket"}, ServerKinds()); diff != "" {
		t.Errorf("ServerKinds after a caller's edit (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"none", "retry-after", "draft-6", "draft-3", "x-ratelimit", "envoy"}, Publishes()); diff != "" {
		t.Errorf("Publishes after a caller's edit (-want +got):\n%s", diff)
	}
	cfg := Config{Server: Server{Kind: "warp", Publish: "smoke"}}.Defaults()
	if err := cfg.Validate(); err == nil {
		t.Error("Validate accepted the kind and the publish a caller wrote into its copy")
	}
}
