package httpx

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"sync/atomic"

	"github.com/headroom-go/headroom/resilience"
)

// drainLimit bounds what the resilience layer reads of a response it may
// retry: enough for any error page, so that the connection goes back to the
// pool and the body stays readable if the response turns out to be the last.
// A longer body is read no further; it is closed (and its connection
// dropped) when the next attempt starts.
const drainLimit = 64 << 10

// doneBody calls done once, when the body is closed or read to its end,
// whichever comes first: it is how a response's body releases what its
// attempt held (the attempt's context, a concurrency permit) once the caller
// is finished with it, and not before.
type doneBody struct {
	rc   io.ReadCloser
	done func()
	over atomic.Bool
}

func (b *doneBody) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	if err == io.EOF {
		b.finish()
	}
	return n, err
}

func (b *doneBody) Close() error {
	err := b.rc.Close()
	b.finish()
	return err
}

func (b *doneBody) finish() {
	if b.over.CompareAndSwap(false, true) {
		b.done()
	}
}

// doneRWBody is a doneBody over a body that can be written too: the body of
// a 101 Switching Protocols response, which net/http makes an
// io.ReadWriteCloser.
type doneRWBody struct {
	doneBody
	w io.Writer
}

func (b *doneRWBody) Write(p []byte) (int, error) { return b.w.Write(p) }

// onDone wraps rc so that done runs once, when rc is closed or read to EOF.
func onDone(rc io.ReadCloser, done func()) io.ReadCloser {
	if rc == nil || rc == http.NoBody {
		done()
		return rc
	}
	if w, ok := rc.(io.Writer); ok {
		return &doneRWBody{doneBody: doneBody{rc: rc, done: done}, w: w}
	}
	return &doneBody{rc: rc, done: done}
}

// buffer reads up to drainLimit of rc. When rc ends within it, rc is closed
// and the bytes come back as a body of their own: whole is true. Otherwise
// the body returned replays what was read and goes on with rc, which it
// closes. err is a read error other than EOF, after which rc is closed.
func buffer(rc io.ReadCloser) (body io.ReadCloser, whole bool, err error) {
	var buf bytes.Buffer
	n, err := buf.ReadFrom(io.LimitReader(rc, drainLimit))
	if err != nil {
		rc.Close()
		return nil, false, err
	}
	if n < drainLimit {
		rc.Close()
		return io.NopCloser(bytes.NewReader(buf.Bytes())), true, nil
	}
	// Full: the body may or may not go on. One more byte tells.
	var one [1]byte
	m, err := io.ReadFull(rc, one[:])
	if m == 0 && (err == io.EOF || err == io.ErrUnexpectedEOF) {
		rc.Close()
		return io.NopCloser(bytes.NewReader(buf.Bytes())), true, nil
	}
	if err != nil && m == 0 {
		rc.Close()
		return nil, false, err
	}
	buf.WriteByte(one[0])
	return &prefixBody{r: io.MultiReader(bytes.NewReader(buf.Bytes()), rc), c: rc}, false, nil
}

// prefixBody replays the start of a body it has read and goes on with the
// rest.
type prefixBody struct {
	r io.Reader
	c io.Closer
}

func (b *prefixBody) Read(p []byte) (int, error) { return b.r.Read(p) }
func (b *prefixBody) Close() error               { return b.c.Close() }

// ErrBodyNotRewindable is what a *RewindError matches.
var ErrBodyNotRewindable = errors.New("httpx: request body cannot be sent again")

// RewindError is the error of a request whose attempt needs a retry when its
// body was already sent and cannot be sent again: the request has a Body
// but no GetBody. http.NewRequest sets GetBody for a *bytes.Buffer,
// *bytes.Reader and *strings.Reader; for any other body set GetBody
// yourself, or the retry is refused with this error rather than made with an
// empty body. errors.Is(err, ErrBodyNotRewindable) holds, and the error
// stops the run (its verdict is Permanent). Err is the error of the attempt
// that asked for the retry.
type RewindError struct {
	Method, URL string
	Err         error
}

func (e *RewindError) Error() string {
	s := "httpx: " + e.Method + " " + e.URL + ": cannot retry: the request body was sent and has no GetBody to send it again"
	if e.Err != nil {
		s += " (retrying because: " + e.Err.Error() + ")"
	}
	return s
}

func (e *RewindError) Unwrap() error { return e.Err }

// Verdict is Permanent: no later attempt can send the body either.
func (e *RewindError) Verdict() resilience.Verdict {
	return resilience.Verdict{Kind: resilience.Permanent}
}

// Is makes errors.Is(err, ErrBodyNotRewindable) hold.
func (e *RewindError) Is(target error) bool { return target == ErrBodyNotRewindable }

// onceBody is a request body without GetBody, shared by the attempts of one
// request. It can serve another attempt as long as no attempt has read from
// it: a limiter that refused an attempt never sent it. Close is passed on
// once the body has been read, or once it is the transport's: the run has
// returned the response of an attempt that handed the body down, and that
// transport may still be sending it (a full-duplex exchange, a server that
// answers before the upload ends). Until then an unread body is the
// resilience layer's, which closes it when the request ends without a
// response.
type onceBody struct {
	rc     io.ReadCloser
	read   atomic.Bool
	owned  atomic.Bool // the transport that sent the last attempt has it
	asked  atomic.Bool // Close was called on it unread since the last attempt began
	closed atomic.Bool
}

func (b *onceBody) Read(p []byte) (int, error) {
	b.read.Store(true)
	return b.rc.Read(p)
}

func (b *onceBody) Close() error {
	if b.read.Load() || b.owned.Load() {
		return b.close()
	}
	b.asked.Store(true)
	if b.owned.Load() { // own ran between the two loads: it may have missed asked
		return b.close()
	}
	return nil
}

// handDown notes that an attempt is about to hand the body to the next
// transport: a Close asked before it came from a layer that refused an
// earlier attempt, not from the transport that will have the body.
func (b *onceBody) handDown() { b.asked.Store(false) }

// own gives the body to the transport that sent the last attempt, whose
// response the caller gets: its Close is passed on from now, and one it
// asked for already is done now.
func (b *onceBody) own() {
	b.owned.Store(true)
	if b.asked.Load() {
		b.close()
	}
}

func (b *onceBody) close() error {
	if b.closed.CompareAndSwap(false, true) {
		return b.rc.Close()
	}
	return nil
}

// closeRequestBody closes a request's body, as a RoundTripper must when it
// returns an error without sending the request.
func closeRequestBody(req *http.Request) {
	if req.Body != nil {
		req.Body.Close()
	}
}
