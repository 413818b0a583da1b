package fleet

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"regexp"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Auth is how a client proves who it is to NATS, as the NATS tools take it:
// at most one of a credentials file (JWT and nkey seed, from nsc), an nkey
// seed file, user and password, or a token; and, for TLS, a CA bundle to
// trust and optionally a client certificate.
type Auth struct {
	Creds          string // --nats-creds: a .creds file
	NKey           string // --nats-nkey: a file holding an nkey seed
	User, Password string // --nats-user, --nats-password
	Token          string // --nats-token
	CA             string // --nats-ca: PEM CA bundle; implies TLS
	Cert, Key      string // --nats-cert, --nats-key: client certificate (mutual TLS)
}

// Configured reports whether Auth asks the server for any authentication.
func (a Auth) Configured() bool {
	return a.Creds != "" || a.NKey != "" || a.User != "" || a.Token != ""
}

func (a Auth) check() error {
	n := 0
	for _, set := range []bool{a.Creds != "", a.NKey != "", a.User != "", a.Token != ""} {
		if set {
			n++
		}
	}
	switch {
	case n > 1:
		return errors.New("NATS auth: give one of fleet.Auth.Creds, fleet.Auth.NKey, fleet.Auth.User/fleet.Auth.Password, fleet.Auth.Token")
	case a.User != "" && a.Password == "":
		return errors.New("NATS auth: fleet.Auth.User needs fleet.Auth.Password")
	case (a.Cert == "") != (a.Key == ""):
		return errors.New("NATS TLS: fleet.Auth.Cert and fleet.Auth.Key go together")
	}
	return nil
}

// options turns a into nats.go options.
func (a Auth) options() ([]nats.Option, error) {
	if err := a.check(); err != nil {
		return nil, err
	}
	var o []nats.Option
	switch {
	case a.Creds != "":
		o = append(o, nats.UserCredentials(a.Creds))
	case a.NKey != "":
		opt, err := nats.NkeyOptionFromSeed(a.NKey)
		if err != nil {
			return nil, fmt.Errorf("fleet.Auth.NKey: %w", err)
		}
		o = append(o, opt)
	case a.User != "":
		o = append(o, nats.UserInfo(a.User, a.Password))
	case a.Token != "":
		o = append(o, nats.Token(a.Token))
	}
	if a.CA != "" {
		o = append(o, nats.RootCAs(a.CA))
	}
	if a.Cert != "" {
		o = append(o, nats.ClientCert(a.Cert, a.Key))
	}
	return o, nil
}

// Conn is a connection to NATS with its JetStream context.
type Conn struct {
	NC *nats.Conn
	JS jetstream.JetStream
}

// Connect dials url (nats://host:4222, tls://…, or several, comma-separated)
// and keeps reconnecting for ever: a worker outlives a server restart.
func Connect(url string, auth Auth, name string, extra ...nats.Option) (*Conn, error) {
	opts, err := auth.options()
	if err != nil {
		return nil, err
	}
	host, _ := os.Hostname()
	opts = append(opts,
		nats.Name(fmt.Sprintf("zkpipe %s %s/%d", name, host, os.Getpid())),
		nats.MaxReconnects(-1),
		nats.ReconnectWait(500*time.Millisecond),
	)
	opts = append(opts, extra...)
	nc, err := nats.Connect(url, opts...)
	if err != nil {
		return nil, &redactedError{msg: fmt.Sprintf("connect to NATS at %s: %s", RedactURL(url), redact(err.Error(), url)), err: err}
	}
	js, err := jetstream.New(nc)
	if err != nil {
		nc.Close()
		return nil, err
	}
	return &Conn{NC: nc, JS: js}, nil
}

// Close drains the connection: published messages and acks are flushed.
func (c *Conn) Close() error {
	if err := c.NC.Drain(); err != nil {
		c.NC.Close()
		return err
	}
	for i := 0; i < 100 && !c.NC.IsClosed(); i++ {
		time.Sleep(20 * time.Millisecond)
	}
	return nil
}

// userinfo is the credential part of each URL in a --nats value: what
// comes before an @ after the scheme (or the start, or a comma).
var userinfo = regexp.MustCompile(`(^|,|://)([^/@,]*)@`)

// RedactURL is a --nats value (URLs, comma-separated) fit to print: a
// password becomes xxxxx, and so does a token (a user with no password),
// as nats.go's ConnectedUrlRedacted does.
func RedactURL(s string) string {
	return userinfo.ReplaceAllStringFunc(s, func(m string) string {
		sub := userinfo.FindStringSubmatch(m)
		user, _, hasPass := strings.Cut(sub[2], ":")
		if hasPass {
			return sub[1] + user + ":xxxxx@"
		}
		return sub[1] + "xxxxx@"
	})
}

// redact removes from msg every secret of the URLs in s, raw or
// percent-decoded: an error from the URL parser or the dialer may quote
// them anywhere.
func redact(msg, s string) string {
	for _, m := range userinfo.FindAllStringSubmatch(s, -1) {
		user, pass, hasPass := strings.Cut(m[2], ":")
		secret := pass
		if !hasPass {
			secret = user
		}
		if secret == "" {
			continue
		}
		msg = strings.ReplaceAll(msg, secret, "xxxxx")
		if d, err := url.PathUnescape(secret); err == nil && d != "" {
			msg = strings.ReplaceAll(msg, d, "xxxxx")
		}
	}
	return msg
}

// redactedError prints a redacted message but still wraps the error, so
// errors.Is works on it.
type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }
