package fleet

import (
	"context"
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
	// full, JetStream started again, a cluster's quorum awaited); nil
	// discards them.
	Notify io.Writer

	// A JetStream cluster: this server's name (unique in the cluster), the
	// cluster's name, the address its routes listen on (host:port) and the
	// route URLs of the cluster's servers (nats://host:port; this one's
	// own may be among them). Each overrides the config file's server_name
	// and cluster {} block when set; either way, a clustered server's
	// Start returns before its cluster has a quorum (AwaitQuorum).
	ServerName, ClusterName, ClusterListen string
	Routes                                 []string
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

	clustered   bool
	clusterName string
	peers       int // the other servers its routes name
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
	s := &Server{Server: srv, storeDir: o.StoreDir, unlock: unlock, stop: make(chan struct{}),
		clustered: opts.Cluster.Port != 0, clusterName: opts.Cluster.Name, peers: otherRoutes(opts)}
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
	if err := clusterOptions(opts, o); err != nil {
		return nil, err
	}
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

// clusterOptions applies o's cluster fields over the config file's.
func clusterOptions(opts *server.Options, o ServerOptions) error {
	if o.ServerName != "" {
		opts.ServerName = o.ServerName
	}
	if o.ClusterName != "" {
		opts.Cluster.Name = o.ClusterName
	}
	if o.ClusterListen != "" {
		host, portStr, err := net.SplitHostPort(o.ClusterListen)
		port, perr := strconv.Atoi(portStr)
		if err != nil || perr != nil || port < 0 || port > 65535 {
			return fmt.Errorf("fleet.ServerOptions.ClusterListen %q: want HOST:PORT", o.ClusterListen)
		}
		if port == 0 {
			port = server.RANDOM_PORT
		}
		opts.Cluster.Host, opts.Cluster.Port = host, port
	}
	if len(o.Routes) > 0 {
		opts.Routes = nil
		for _, r := range o.Routes {
			u := server.RoutesFromStr(r)
			if len(u) == 0 || u[0].Host == "" {
				return fmt.Errorf("fleet.ServerOptions.Routes %q: want nats://HOST:PORT (a cluster listener of another server)", r)
			}
			opts.Routes = append(opts.Routes, u...)
		}
	}
	clustered := opts.Cluster.Port != 0 || len(opts.Routes) > 0
	switch {
	case clustered && opts.Cluster.Port == 0:
		return errors.New("fleet.ServerOptions.Routes without fleet.ServerOptions.ClusterListen: a server of a cluster listens for its routes too")
	case clustered && opts.ServerName == "":
		return errors.New("fleet.ServerOptions.ServerName: a JetStream cluster's servers need names of their own (server_name)")
	case clustered && opts.Cluster.Name == "":
		return errors.New("fleet.ServerOptions.ClusterName: a JetStream cluster needs a name (cluster { name })")
	}
	return nil
}

// ClusterName is the name of the server's cluster ("" for none).
func (s *Server) ClusterName() string { return s.clusterName }

// Clustered tells whether the server is one of a JetStream cluster.
func (s *Server) Clustered() bool { return s.clustered }

// AwaitQuorum waits until the server's JetStream cluster has a meta
// leader (a quorum of its servers in touch), saying on notify every
// interval what it waits for, for as long as it takes or until ctx ends.
// A server of no cluster returns at once.
func (s *Server) AwaitQuorum(ctx context.Context, notify io.Writer, interval time.Duration) error {
	if !s.clustered {
		return nil
	}
	if notify == nil {
		notify = io.Discard
	}
	t0 := time.Now()
	next := t0
	for {
		meta := s.meta()
		if meta.Leader != "" && s.JetStreamIsCurrent() {
			if time.Since(t0) > interval {
				fmt.Fprintf(notify, "zkpipe: serve: JetStream cluster %s has a quorum after %s: leader %s, %d servers known\n",
					meta.Name, time.Since(t0).Round(time.Millisecond), meta.Leader, meta.Size)
			}
			return nil
		}
		if now := time.Now(); !now.Before(next) {
			fmt.Fprintf(notify, "zkpipe: serve: waiting for JetStream cluster %s's quorum (%s so far): in touch with %d of its other servers, %d known, no leader yet; start the others\n",
				s.clusterName, now.Sub(t0).Round(time.Second), s.peersInTouch(), max(meta.Size-1, 0))
			next = now.Add(interval)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("JetStream cluster %s: no quorum after %s: %w", s.clusterName, time.Since(t0).Round(time.Second), ctx.Err())
		case <-s.stop:
			return errors.New("the NATS server stopped")
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// ClusterSize is how many servers the server's JetStream cluster has, as
// far as it knows: its meta group's size, or this server and the others
// its routes name, whichever is more (early on, the meta group knows only
// those in touch); 1 for a server of no cluster.
func (s *Server) ClusterSize() int {
	if !s.clustered {
		return 1
	}
	return max(s.meta().Size, s.peers+1)
}

// otherRoutes counts the distinct routes of opts that are not the server's
// own cluster listener (a cluster's servers often share one routes list).
func otherRoutes(opts *server.Options) int {
	own := net.JoinHostPort(opts.Cluster.Host, strconv.Itoa(opts.Cluster.Port))
	seen := map[string]bool{}
	for _, u := range opts.Routes {
		host, port, err := net.SplitHostPort(u.Host)
		if err != nil {
			continue
		}
		if loopback(host) || host == "" {
			host = "127.0.0.1"
		}
		hp := net.JoinHostPort(host, port)
		ownHost, ownPort, _ := net.SplitHostPort(own)
		if loopback(ownHost) || ownHost == "" || ownHost == "0.0.0.0" {
			ownHost = "127.0.0.1"
		}
		if hp == net.JoinHostPort(ownHost, ownPort) {
			continue
		}
		seen[hp] = true
	}
	return len(seen)
}

// peersInTouch is how many other servers of the cluster have a route to
// this one.
func (s *Server) peersInTouch() int {
	r, err := s.Routez(&server.RoutezOptions{})
	if err != nil || r == nil {
		return 0
	}
	names := map[string]bool{}
	for _, ri := range r.Routes {
		names[ri.RemoteName] = true
	}
	return len(names)
}

func (s *Server) meta() server.MetaClusterInfo {
	if j, err := s.Jsz(&server.JSzOptions{}); err == nil && j != nil && j.Meta != nil {
		return *j.Meta
	}
	return server.MetaClusterInfo{}
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
