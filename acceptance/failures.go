package acceptance

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"syscall"

	"github.com/headroom-go/headroom/limit"
)

// failureKind names what ended a failed call, coarsely enough that the
// kinds of a run fit on a line: "status 429", "self-imposed refusal",
// "connection reset", "gave up after retries", "call deadline", or the
// error's own text without the URL.
func failureKind(status int, err error, timeLeft bool) string {
	switch {
	case err == nil:
		return "status " + strconv.Itoa(status)
	case errors.Is(err, limit.ErrRateLimited) && timeLeft:
		return "self-imposed refusal"
	case errors.Is(err, limit.ErrRateLimited):
		return "self-imposed refusal at the deadline"
	case errors.Is(err, context.DeadlineExceeded):
		return "call deadline"
	case errors.Is(err, syscall.ECONNRESET):
		return "connection reset"
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "connection closed"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	}
	msg := err.Error()
	var ue *url.Error
	if errors.As(err, &ue) {
		msg = ue.Err.Error()
	}
	// go-retryablehttp's "giving up after 4 attempt(s)" once its retries
	// are spent.
	if strings.Contains(msg, "giving up after") {
		return "gave up after retries"
	}
	if len(msg) > 80 {
		msg = msg[:80] + "…"
	}
	return msg
}

// failureText is the whole of what ended a failed call: its error's text,
// or its final status.
func failureText(status int, err error) string {
	if err != nil {
		return err.Error()
	}
	return "final response " + strconv.Itoa(status) + " " + http.StatusText(status)
}
