package acceptance

import (
	"context"
	"crypto/rand"
	"fmt"
	"math/big"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Nginx is nginx's limit_req (Debian's nginx 1.22) in front of a location
// that answers 200 "ok": limit_req_zone keyed by the client's address with
// rate l.Units/l.Window, limit_req with burst=l.Burst and nodelay (l.NoDelay),
// delay=l.Delay, or neither (every excess request delayed), and
// limit_req_status 429. It publishes nothing: no quota headers, no
// Retry-After; a refusal is nginx's stock 429 page.
//
// The algorithm, from ngx_http_limit_req_module.c: each client has an
// excess, in thousandths of a request, and the time of its last accepted
// request. A request computes excess' = max(0, excess − rate·ms/1000 + 1000)
// with rate in thousandths of a request a second and ms the milliseconds
// since the last accepted request; if excess' exceeds burst·1000 the request
// is refused with 429 and the state is left as it was, so a refusal costs
// the client nothing. Otherwise excess' is stored and the request accepted:
// at once when excess' ≤ delay·1000 (nodelay: any excess; delay=D: the
// first D; neither: none, only a request at excess 0), else held back
// (excess' − delay·1000)/rate seconds, the time the excess takes to drain
// to delay, holding its connection meanwhile. The first request of a
// client starts it at excess 0. The rate is nginx's integer: N r/s is
// N·1000, N r/m is ⌊N·1000/60⌋.
//
// Allowance(d) counts the requests answered 200 within d, as the harness
// counts them, for a client that begins with nginx fresh:
//
//	min(delay, burst) + 1 + rate·d   (nodelay: delay = burst; neither: delay = 0)
//
// The first request and the first min(delay, burst) excess ones are
// answered at once; after that the k-th accepted request (counting from 0)
// cannot be answered before (k − delay)/rate, whether it waited in the
// burst or arrived late. With nodelay that is burst + 1 + rate·d; with
// delay=D or none, up to burst − D more are accepted by d but answered
// after it, so an ideal client holding burst − D requests in flight still
// has only D + 1 + rate·d answered by d.
//
// Start fails, and Allowance is 0, when nginx cannot express the limit: its
// rate must be a whole number of requests a second or a minute, burst and
// delay non-negative, and NoDelay and Delay are exclusive.
func Nginx(l Limit) ServerSpec {
	return ServerSpec{
		Name:    "nginx limit_req " + nginxMode(l),
		Kind:    LeakyBucket,
		Limit:   l,
		Headers: PublishNone,
		Start: func(ctx context.Context) (*Server, error) {
			p, err := startNginx(ctx, l)
			if err != nil {
				return nil, err
			}
			return p.server(), nil
		},
		Allowance: func(d time.Duration) float64 { return nginxAllowance(l, d) },
	}
}

// nginxMode is limit_req's parameters for l, as in its configuration, or
// "(delayed)" when there are none.
func nginxMode(l Limit) string {
	if p := nginxParams(l); p != "" {
		return strings.TrimPrefix(p, " ")
	}
	return "(delayed)"
}

// nginxParams is what follows limit_req's zone= for l: " burst=2 nodelay".
func nginxParams(l Limit) string {
	var p string
	if l.Burst > 0 {
		p += fmt.Sprintf(" burst=%d", l.Burst)
	}
	switch {
	case l.NoDelay:
		p += " nodelay"
	case l.Delay > 0:
		p += fmt.Sprintf(" delay=%d", l.Delay)
	}
	return p
}

// nginxAllowance is Nginx's Allowance: min(delay, burst) + 1 + rate·d, 0
// when nginx cannot express l.
func nginxAllowance(l Limit, d time.Duration) float64 {
	_, milli, err := nginxRate(l)
	if err != nil || nginxCheck(l) != nil {
		return 0
	}
	atOnce := 0 // neither nodelay nor delay=: every excess request waits
	switch {
	case l.NoDelay:
		atOnce = l.Burst
	case l.Delay > 0:
		atOnce = min(l.Delay, l.Burst)
	}
	return float64(atOnce) + 1 + float64(milli)/1000*max(d, 0).Seconds()
}

// nginxRate is l's rate as limit_req_zone's rate= ("5r/s", or "30r/m" when
// it is no whole number a second) and as nginx holds it: thousandths of a
// request a second, after nginx's integer division for r/m.
func nginxRate(l Limit) (string, int64, error) {
	if l.Units <= 0 || l.Window <= 0 {
		return "", 0, fmt.Errorf("nginx limit_req needs a positive rate, got %d per %s", l.Units, l.Window)
	}
	units := new(big.Int).SetInt64(int64(l.Units))
	window := new(big.Int).SetInt64(int64(l.Window))
	// nginx reads the number with ngx_atoi into a signed integer and then
	// multiplies it by 1000: keep it well inside that.
	const most = 1 << 40
	for _, per := range []struct {
		suffix string
		span   time.Duration
		scale  int64
	}{{"r/s", time.Second, 1}, {"r/m", time.Minute, 60}} {
		n := new(big.Rat).SetFrac(new(big.Int).Mul(units, big.NewInt(int64(per.span))), window)
		if !n.IsInt() {
			continue
		}
		if !n.Num().IsInt64() || n.Num().Int64() > most {
			return "", 0, fmt.Errorf("nginx limit_req cannot take a rate of %d per %s: over %d%s", l.Units, l.Window, int64(most), per.suffix)
		}
		count := n.Num().Int64()
		return strconv.FormatInt(count, 10) + per.suffix, count * 1000 / per.scale, nil
	}
	return "", 0, fmt.Errorf("nginx limit_req takes a whole number of requests a second or a minute; %d per %s is %.4g a minute", l.Units, l.Window, float64(l.Units)*time.Minute.Seconds()/l.Window.Seconds())
}

// nginxCheck reports what in l's burst and delay nginx cannot take.
func nginxCheck(l Limit) error {
	switch {
	case l.Burst < 0:
		return fmt.Errorf("nginx limit_req's burst must be 0 or more, got %d", l.Burst)
	case l.Delay < 0:
		return fmt.Errorf("nginx limit_req's delay must be 0 or more, got %d", l.Delay)
	case l.NoDelay && l.Delay > 0:
		return fmt.Errorf("nginx limit_req takes nodelay or delay=%d, not both: set NoDelay or Delay", l.Delay)
	}
	return nil
}

// nginxConfig is the whole configuration of one nginx in dir, listening on
// 127.0.0.1:port. userLine is the user directive ("" for none). The ready
// location answers token and is not limited, so polling it costs the
// client nothing.
func nginxConfig(dir string, port int, l Limit, token, userLine string) (string, error) {
	rate, _, err := nginxRate(l)
	if err != nil {
		return "", err
	}
	if err := nginxCheck(l); err != nil {
		return "", err
	}
	if strings.ContainsAny(dir, "\"\\$;{} \t\n") {
		return "", fmt.Errorf("nginx's directory %q has a character its configuration would need to escape; set TMPDIR to a plain path", dir)
	}
	limitReq := "limit_req zone=z" + nginxParams(l)
	return fmt.Sprintf(`# Generated by headroom's acceptance suite for one run; removed when it stops.
daemon off;
master_process on;
worker_processes 1;
%s
pid %[2]s/nginx.pid;
error_log %[2]s/error.log warn;
# Bounds a graceful stop that waits on delayed requests.
worker_shutdown_timeout 1s;

events {
    worker_connections 1024;
}

http {
    access_log off;
    client_body_temp_path %[2]s/client_body;
    proxy_temp_path %[2]s/proxy;
    fastcgi_temp_path %[2]s/fastcgi;
    uwsgi_temp_path %[2]s/uwsgi;
    scgi_temp_path %[2]s/scgi;
    default_type text/plain;

    limit_req_zone $binary_remote_addr zone=z:1m rate=%[3]s;
    limit_req_status 429;
    # A refusal per line at the default level would fill the error log.
    limit_req_log_level info;

    server {
        listen 127.0.0.1:%[4]d;

        location = /-/ready {
            return 200 "%[5]s\n";
        }

        # Not return: it answers in the rewrite phase, before limit_req's
        # preaccess phase would run. A file is served in the content phase.
        location / {
            %[6]s;
            root %[2]s/www;
            try_files /ok.txt =404;
        }
    }
}
`, userLine, dir, rate, port, token, limitReq), nil
}

// nginxUser is the user directive for an nginx started as root: its
// workers would otherwise run as nobody, who cannot read the 0700
// directory it serves from. nginx ignores the directive, with a warning,
// when it is not root, so then there is none.
func nginxUser() string {
	if os.Geteuid() != 0 {
		return ""
	}
	name, group := "root", "root"
	if u, err := user.LookupId(strconv.Itoa(os.Geteuid())); err == nil {
		name = u.Username
	}
	if g, err := user.LookupGroupId(strconv.Itoa(os.Getegid())); err == nil {
		group = g.Name
	}
	return fmt.Sprintf("user %s %s;", name, group)
}

// startNginx starts nginx with l on a free loopback port and waits until it
// answers. It returns a *SkipError when nginx is not installed.
func startNginx(ctx context.Context, l Limit) (*childProcess, error) {
	if _, _, err := nginxRate(l); err != nil {
		return nil, err
	}
	if err := nginxCheck(l); err != nil {
		return nil, err
	}
	path, err := findProgram("nginx", "apt-get install -y nginx")
	if err != nil {
		return nil, err
	}
	return startOnFreePort(func(port int) (*childProcess, error) { return startNginxOn(ctx, path, port, l) })
}

// startNginxOn starts the nginx at path with l on 127.0.0.1:port and waits
// until it answers; an error wraps errPortTaken when the port was taken.
func startNginxOn(ctx context.Context, path string, port int, l Limit) (*childProcess, error) {
	dir, err := os.MkdirTemp("", "headroom-nginx-")
	if err != nil {
		return nil, fmt.Errorf("making nginx's directory: %w", err)
	}
	token := rand.Text()
	conf, err := nginxConfig(dir, port, l, token, nginxUser())
	if err == nil {
		err = os.Mkdir(filepath.Join(dir, "www"), 0o700)
	}
	if err == nil {
		err = os.WriteFile(filepath.Join(dir, "www", "ok.txt"), []byte("ok\n"), 0o600)
	}
	if err == nil {
		err = os.WriteFile(filepath.Join(dir, "nginx.conf"), []byte(conf), 0o600)
	}
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("writing nginx's configuration: %w", err)
	}
	errorLog := filepath.Join(dir, "error.log")
	p, err := startChild(childCommand{
		name: "nginx",
		path: path,
		// -e: the compiled-in error log (/var/log/nginx) is opened before
		// the configuration is read; -p: relative paths stay in dir.
		args:       []string{"-e", errorLog, "-p", dir + "/", "-c", filepath.Join(dir, "nginx.conf")},
		dir:        dir,
		stopSignal: syscall.SIGQUIT,
		logs:       []string{errorLog},
	})
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	p.url = fmt.Sprintf("http://127.0.0.1:%d", port)
	if err := p.waitHTTP(ctx, "/-/ready", token); err != nil {
		return nil, err
	}
	return p, nil
}
