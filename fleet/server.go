package fleet

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// ServerOptions configure the NATS server that zkpipe serve embeds.
type ServerOptions struct {
	// Listen is the client address, host:port; port 0 picks a free one.
	Listen string
	// StoreDir holds JetStream's file store: jobs, results and objects
	// survive a restart.
	StoreDir string
	// User and Password, or Token, are the one credential clients must give.
	User, Password, Token string
	// ConfigFile is a nats-server configuration file, for what the fields
	// above cannot say (accounts, nkeys, JWT operators, TLS); it is read
	// first and the fields above override it.
	ConfigFile string
	// Log writes the server's notices and errors; off when false.
	Log bool
}

// ErrOpenListener refuses a server reachable from other hosts with no auth.
var ErrOpenListener = errors.New("a NATS listener on a non-loopback address needs auth")

// StartServer runs an embedded nats-server with JetStream and returns it
// ready for connections. It refuses to listen beyond this host without auth
// configured: anyone who can reach the port could submit jobs and read proofs.
func StartServer(o ServerOptions) (*server.Server, error) {
	opts := &server.Options{}
	if o.ConfigFile != "" {
		var err error
		if opts, err = server.ProcessConfigFile(o.ConfigFile); err != nil {
			return nil, fmt.Errorf("--nats-config: %w", err)
		}
	}
	host, portStr, err := net.SplitHostPort(o.Listen)
	if err != nil {
		return nil, fmt.Errorf("--nats-listen %q: want HOST:PORT: %w", o.Listen, err)
	}
	port, err := strconv.Atoi(portStr)
	if err != nil || port < 0 || port > 65535 {
		return nil, fmt.Errorf("--nats-listen %q: bad port", o.Listen)
	}
	if port == 0 {
		port = server.RANDOM_PORT
	}
	opts.Host, opts.Port = host, port
	opts.JetStream = true
	opts.StoreDir = o.StoreDir
	opts.NoSigs = true
	opts.NoLog = !o.Log
	if o.User != "" || o.Password != "" {
		if o.User == "" || o.Password == "" {
			return nil, errors.New("--nats-user and --nats-password go together")
		}
		opts.Username, opts.Password = o.User, o.Password
	}
	if o.Token != "" {
		opts.Authorization = o.Token
	}
	if !loopback(host) && !authConfigured(opts) {
		return nil, fmt.Errorf("--nats-listen %s: %w: set --nats-user and --nats-password, --nats-token, "+
			"or a --nats-config with users, nkeys, an operator or verified client certificates; or listen on 127.0.0.1", o.Listen, ErrOpenListener)
	}
	srv, err := server.NewServer(opts)
	if err != nil {
		return nil, fmt.Errorf("NATS server: %w", err)
	}
	if o.Log {
		srv.ConfigureLogger()
	}
	srv.Start()
	if !srv.ReadyForConnections(30 * time.Second) {
		srv.Shutdown()
		return nil, fmt.Errorf("NATS server on %s: not ready after 30s", o.Listen)
	}
	return srv, nil
}

// loopback reports whether host names this machine only.
func loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func authConfigured(o *server.Options) bool {
	return o.Username != "" || o.Authorization != "" || len(o.Users) > 0 || len(o.Nkeys) > 0 ||
		len(o.TrustedOperators) > 0 || o.AuthCallout != nil || o.TLSVerify
}
