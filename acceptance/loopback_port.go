package acceptance

import (
	"errors"
	"fmt"
	"net"
)

// portAttempts is how many free ports startOnFreePort tries.
const portAttempts = 5

// freeLoopbackPort is a TCP port on 127.0.0.1 that was free a moment ago:
// the kernel's pick for a listener on port 0, closed again.
func freeLoopbackPort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("finding a free loopback port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// startOnFreePort calls start with a free loopback port until start does
// not fail with errPortTaken, at most portAttempts times: for servers that
// cannot listen on port 0 and say which port they got, another process may
// take the port between the probe and their bind.
func startOnFreePort(start func(port int) (*childProcess, error)) (*childProcess, error) {
	var err error
	for range portAttempts {
		var port int
		if port, err = freeLoopbackPort(); err != nil {
			return nil, err
		}
		var p *childProcess
		if p, err = start(port); !errors.Is(err, errPortTaken) {
			return p, err
		}
	}
	return nil, fmt.Errorf("%d free ports were all taken before the server could bind them; last: %w", portAttempts, err)
}
