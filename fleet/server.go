package fleet

import (
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/zkpipe/zkpipe/engine"
)

// ServerOptions configure the NATS server that zkpipe serve embeds.
type ServerOptions struct {
	// Listen is the client address, host:port; port 0 picks a free one.
	Listen string
	// StoreDir holds JetStream's file store: jobs, results and objects
	// survive a restart. The server holds it alone (a lock in it).
	StoreDir string
	// User and Password, or Token, are the one credential clients must give.
	User, Password, Token string
	// ConfigFile is a nats-server configuration file, for what the fields
	// above cannot say (accounts, nkeys, JWT operators, TLS); it is read
	// first and the fields above override it.
	ConfigFile string
	// OpenMonitoring allows the config's monitoring (http, https) or
	// profiling port on a non-loopback address: nats-server has no auth
	// for them, so they are refused there otherwise.
	OpenMonitoring bool
	// Log writes the server's notices and errors; off when false.
	Log bool
	// Notify gets zkpipe's own notices about the server (the store's disk
	// full, JetStream started again); nil discards them.
	Notify io.Writer
}

// ErrOpenListener refuses a server reachable from other hosts with no auth.
var ErrOpenListener = errors.New("a NATS listener on a non-loopback address needs auth")

// ErrStoreInUse refuses a store another process (a running serve) holds:
// two servers on one file store corrupt it and lose acknowledged jobs.
var ErrStoreInUse = errors.New("the store is in use by another zkpipe serve")

// Server is the embedded nats-server, holding its store's lock until
// Shutdown.
type Server struct {
	*server.Server
	storeDir   string
	unlock     func() error
	once       sync.Once
	unlockOnce sync.Once
	stop       chan struct{}
	problem    atomic.Value // string: StoreProblem
}

// Shutdown stops the server, waits until it has stopped and then releases
// the store.
func (s *Server) Shutdown() {
	s.once.Do(func() { close(s.stop) })
	s.Server.Shutdown()
	s.Server.WaitForShutdown()
	s.unlockOnce.Do(func() { s.unlock() })
}

// StartServer runs an embedded nats-server with JetStream and returns it
// ready for connections. It refuses a store another process holds, and any
// listener reachable beyond this host without auth configured for it:
// anyone who can reach the port could submit jobs and read proofs.
func StartServer(o ServerOptions) (*Server, error) {
	opts, err := serverOptions(o)
	if err != nil {
		return nil, err
	}
	// The lock before the server opens a file of the store.
	if err := os.MkdirAll(o.StoreDir, 0o755); err != nil {
		return nil, fmt.Errorf("fleet.ServerOptions.StoreDir %s: %w", o.StoreDir, err)
	}
	unlock, err := engine.LockDir(o.StoreDir)
	if errors.Is(err, engine.ErrDirInUse) {
		return nil, fmt.Errorf("fleet.ServerOptions.StoreDir %s: %w (%v): stop it, or give this one a store of its own", o.StoreDir, ErrStoreInUse, err)
	}
	if err != nil {
		return nil, fmt.Errorf("fleet.ServerOptions.StoreDir %s: %w", o.StoreDir, err)
	}
	srv, err := newServer(opts, o.OpenMonitoring)
	if err != nil {
		unlock()
		if errors.Is(err, ErrOpenListener) {
			return nil, err
		}
		return nil, fmt.Errorf("NATS server: %w", err)
	}
	if o.Log {
		srv.ConfigureLogger()
	}
	s := &Server{Server: srv, storeDir: o.StoreDir, unlock: unlock, stop: make(chan struct{})}
	srv.Start()
	if !srv.ReadyForConnections(30 * time.Second) {
		s.Shutdown()
		return nil, fmt.Errorf("NATS server on %s: not ready after 30s", o.Listen)
	}
	if !srv.JetStreamEnabled() {
		s.Shutdown()
		return nil, fmt.Errorf("NATS server on %s: JetStream did not start (store %s)", o.Listen, o.StoreDir)
	}
	// How JetStream is started again (watchStore): as the options said,
	// the store's own directory (the server's config names it with
	// /jetstream added, which EnableJetStream adds again) and the limits
	// given, or those nats-server derives from the machine when none are.
	cfg := server.JetStreamConfig{StoreDir: o.StoreDir, MaxMemory: opts.JetStreamMaxMemory, MaxStore: opts.JetStreamMaxStore,
		Domain: opts.JetStreamDomain, UniqueTag: opts.JetStreamUniqueTag, Strict: !opts.NoJetStreamStrict}
	notify := o.Notify
	if notify == nil {
		notify = io.Discard
	}
	go s.watchStore(notify, cfg)
	return s, nil
}

// serverOptions reads the config file and applies o over it, refusing an
// open client listener.
func serverOptions(o ServerOptions) (*server.Options, error) {
	opts := &server.Options{}
	if o.ConfigFile != "" {
		var err error
		if opts, err = server.ProcessConfigFile(o.ConfigFile); err != nil {
			return nil, fmt.Errorf("fleet.ServerOptions.ConfigFile: %w", err)
		}
	}
	host, portStr, err := net.SplitHostPort(o.Listen)
	if err != nil {
		return nil, fmt.Errorf("fleet.ServerOptions.Listen %q: want HOST:PORT: %w", o.Listen, err)
	}
	port, err := strconv.Atoi(portStr)
	if err != nil || port < 0 || port > 65535 {
		return nil, fmt.Errorf("fleet.ServerOptions.Listen %q: bad port", o.Listen)
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
			return nil, errors.New("fleet.ServerOptions.User and fleet.ServerOptions.Password go together")
		}
		opts.Username, opts.Password = o.User, o.Password
	}
	if o.Token != "" {
		opts.Authorization = o.Token
	}
	if !loopback(host) && !authConfigured(opts) {
		return nil, fmt.Errorf("fleet.ServerOptions.Listen %s: %w: set fleet.ServerOptions.User and fleet.ServerOptions.Password, fleet.ServerOptions.Token, "+
			"or a fleet.ServerOptions.ConfigFile with users, nkeys, an operator or verified client certificates; or listen on 127.0.0.1", o.Listen, ErrOpenListener)
	}
	return opts, nil
}

// CheckListeners runs the checks StartServer runs on o's listeners without
// starting a server (nor taking the store): a clustered JetStream server,
// say, is not ready until its peers are.
func CheckListeners(o ServerOptions) error {
	opts, err := serverOptions(o)
	if err == nil {
		_, err = newServer(opts, o.OpenMonitoring)
	}
	return err
}

// newServer makes the server, which listens on nothing until Start, and
// checks the listeners as NewServer filled them in (a leafnode port with no
// host listens on 0.0.0.0).
func newServer(opts *server.Options, openMonitoring bool) (*server.Server, error) {
	srv, err := server.NewServer(opts)
	if err != nil {
		return nil, err
	}
	if err := checkListeners(opts, openMonitoring); err != nil {
		return nil, err
	}
	return srv, nil
}

// checkListeners applies the client port's rule to every listener of the
// (defaulted) options: on a non-loopback address it needs auth that
// applies to it. Websocket, MQTT and leafnode connections are checked
// against their own users, or the server's when they have none (as
// nats-server does); routes (cluster) and gateways only against their own
// user or verified certificates; monitoring and profiling have no auth in
// nats-server, so they stay on loopback unless allowed explicitly.
func checkListeners(o *server.Options, openMonitoring bool) error {
	global := authConfigured(o)
	type listener struct {
		what, host string
		port       int
		authed     bool
		fix        string
	}
	ls := []listener{
		{"websocket", o.Websocket.Host, o.Websocket.Port,
			o.Websocket.NoAuthUser == "" && (o.Websocket.Username != "" || o.Websocket.Token != "" || verifies(o.Websocket.TLSConfig) || global),
			"users or a token in its authorization block, or the server's"},
		{"mqtt", o.MQTT.Host, o.MQTT.Port,
			o.MQTT.NoAuthUser == "" && (o.MQTT.Username != "" || o.MQTT.Token != "" || verifies(o.MQTT.TLSConfig) || global),
			"users or a token in its authorization block, or the server's"},
		{"leafnodes", o.LeafNode.Host, o.LeafNode.Port,
			o.LeafNode.Username != "" || o.LeafNode.Nkey != "" || len(o.LeafNode.Users) > 0 || verifies(o.LeafNode.TLSConfig) || global,
			"an authorization block, verified certificates, or the server's users"},
		{"cluster", o.Cluster.Host, o.Cluster.Port,
			o.Cluster.Username != "" || verifies(o.Cluster.TLSConfig),
			"an authorization block (user, password) or TLS with verified certificates"},
		{"gateway", o.Gateway.Host, o.Gateway.Port,
			o.Gateway.Username != "" || verifies(o.Gateway.TLSConfig),
			"an authorization block (user, password) or TLS with verified certificates"},
	}
	for _, l := range ls {
		if l.port != 0 && !loopback(l.host) && !l.authed {
			return fmt.Errorf("fleet.ServerOptions.ConfigFile: the %s listener on %s: %w: give it %s, or listen on 127.0.0.1",
				l.what, net.JoinHostPort(l.host, strconv.Itoa(max(l.port, 0))), ErrOpenListener, l.fix)
		}
	}
	if openMonitoring {
		return nil
	}
	for _, l := range []listener{
		{what: "monitoring (http)", host: o.HTTPHost, port: o.HTTPPort},
		{what: "monitoring (https)", host: o.HTTPHost, port: o.HTTPSPort},
		{what: "profiling", host: o.Host, port: o.ProfPort},
	} {
		if l.port != 0 && !loopback(l.host) {
			return fmt.Errorf("fleet.ServerOptions.ConfigFile: the %s listener on %s: %w, and nats-server has none for it: "+
				"listen on 127.0.0.1 (http: 127.0.0.1:8222), or allow it with fleet.ServerOptions.OpenMonitoring",
				l.what, net.JoinHostPort(l.host, strconv.Itoa(max(l.port, 0))), ErrOpenListener)
		}
	}
	return nil
}

// verifies reports whether a listener's TLS demands and verifies client
// certificates: then only holders of a certificate from its CA connect.
func verifies(c *tls.Config) bool {
	return c != nil && c.ClientAuth == tls.RequireAndVerifyClientCert
}

// loopback reports whether host names this machine only.
func loopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// authConfigured reports whether the server's own (client) auth is on. A
// no_auth_user admits anyone who gives no credential, so it is none.
func authConfigured(o *server.Options) bool {
	if o.NoAuthUser != "" {
		return false
	}
	return o.Username != "" || o.Authorization != "" || len(o.Users) > 0 || len(o.Nkeys) > 0 ||
		len(o.TrustedOperators) > 0 || o.AuthCallout != nil || o.TLSVerify
}
