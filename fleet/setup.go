package fleet

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Config shapes the streams and consumers when Setup creates them; once they
// exist, they keep the settings they were made with (change them with the
// nats CLI, or delete them).
type Config struct {
	// AckWait is how long a job may go without an ack or a heartbeat before
	// the server hands it to another worker: the delay before a killed
	// worker's jobs move on. Workers send heartbeats each third of it.
	AckWait time.Duration
	// Duplicates is the window in which a second submit of an id is dropped
	// by the server (Nats-Msg-Id).
	Duplicates time.Duration
	// Replicas is how many servers of a JetStream cluster hold each stream
	// and bucket: 0 chooses, 3 in a cluster of three or more servers (a
	// quorum survives the loss of any one), 1 otherwise. Given, it is
	// checked against the streams and buckets that exist, which are scaled
	// to it; chosen, those that exist keep theirs (Log says when they have
	// fewer than it would choose).
	Replicas int
	// ClusterSize is the JetStream cluster's size where the caller knows it
	// (serve: its server's); 0: as far as the client knows, the servers it
	// was given and those the cluster told it of. Replicas chosen follow it.
	ClusterSize int
	// Log gets Setup's notes (nil: none).
	Log io.Writer
	// Wait bounds how long Setup waits for JetStream while it does not
	// answer, or cannot place a stream yet (a cluster electing its
	// leaders, a server restarting): 0 means a minute.
	Wait time.Duration
}

func (c Config) withDefaults() Config {
	if c.AckWait <= 0 {
		c.AckWait = DefaultAckWait
	}
	if c.Duplicates <= 0 {
		c.Duplicates = DefaultDuplicates
	}
	if c.Wait <= 0 {
		c.Wait = time.Minute
	}
	return c
}

// Queue is the NATS side of zkpipe, opened by Setup.
type Queue struct {
	Conn     *Conn
	Jobs     jetstream.Stream
	Results  jetstream.Stream
	Circuits jetstream.ObjectStore
	Witness  jetstream.ObjectStore
	Proofs   jetstream.ObjectStore
	// HandBacks counts the hand-backs of each job message (see handBacks).
	HandBacks jetstream.KeyValue
	// Requests holds each request of partitions' answers so far (requests.go).
	Requests jetstream.KeyValue
	// consumers by priority, in Priorities' order
	consumers []jetstream.Consumer
	ackWait   time.Duration
	replicas  int
}

// Setup opens the streams, consumers and buckets, creating those missing.
// Safe to run from many processes at once. While JetStream does not answer
// (a cluster without a leader yet, a server restarting) it tries again, for
// up to cfg.Wait, saying so on cfg.Log.
func Setup(ctx context.Context, c *Conn, cfg Config) (*Queue, error) {
	cfg = cfg.withDefaults()
	end := time.Now().Add(cfg.Wait)
	for try := 0; ; try++ {
		q, err := setup(ctx, c, cfg)
		if err == nil || !unavailable(err) || ctx.Err() != nil || time.Now().After(end) {
			return q, err
		}
		if try == 0 && cfg.Log != nil {
			fmt.Fprintf(cfg.Log, "zkpipe: waiting for JetStream (up to %s): %v\n", cfg.Wait, err)
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(min(time.Duration(try+1)*200*time.Millisecond, 2*time.Second)):
		}
	}
}

// setupAttempt bounds each of Setup's calls: one sent to a leader that has
// just died would otherwise wait the client's 5 s before Setup tries again,
// though a new leader may answer sooner.
const setupAttempt = 2 * attemptTimeout

// unavailable tells a JetStream that does not answer now (no leader, a
// server restarting, the connection reconnecting) from one that refuses.
// A stream that cannot be placed counts: its servers may be starting.
func unavailable(err error) bool {
	var api *jetstream.APIError
	if errors.As(err, &api) {
		return api.Code == 503 && api.ErrorCode != jsInsufficientResources || api.ErrorCode == jsClusterNoPeers
	}
	return errors.Is(err, nats.ErrTimeout) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, nats.ErrNoResponders) ||
		errors.Is(err, jetstream.ErrNoStreamResponse) || errors.Is(err, nats.ErrConnectionReconnecting) || errors.Is(err, nats.ErrDisconnected) ||
		errors.Is(err, jetstream.ErrAsyncPublishTimeout) || errors.Is(err, os.ErrDeadlineExceeded)
}

func setup(ctx context.Context, c *Conn, cfg Config) (*Queue, error) {
	js := c.JS
	q := &Queue{Conn: c}
	if cfg.Replicas < 0 {
		return nil, fmt.Errorf("fleet.Config.Replicas %d: want 0 (chosen) or more", cfg.Replicas)
	}
	chosen := cfg.Replicas == 0
	if chosen {
		cfg.Replicas = autoReplicas(c, cfg.ClusterSize)
	}
	q.replicas = cfg.Replicas
	var err error
	q.Jobs, err = openStream(ctx, js, jetstream.StreamConfig{
		Name:        JobsStream,
		Description: "zkpipe proof jobs, one subject per priority",
		Subjects:    []string{jobsSubject + "*"},
		Retention:   jetstream.WorkQueuePolicy,
		Storage:     jetstream.FileStorage,
		Duplicates:  cfg.Duplicates,
		Replicas:    cfg.Replicas,
	})
	if err != nil {
		return nil, err
	}
	q.Results, err = openStream(ctx, js, jetstream.StreamConfig{
		Name:        ResultsStream,
		Description: "zkpipe result lines, the last per job id",
		Subjects:    []string{resultsSubject + ">"},
		Retention:   jetstream.LimitsPolicy,
		Storage:     jetstream.FileStorage,
		Duplicates:  cfg.Duplicates,
		// One line per id: a result published again (a job redelivered
		// after its worker died between publishing and acking) replaces it.
		MaxMsgsPerSubject: 1,
		Replicas:          cfg.Replicas,
	})
	if err != nil {
		return nil, err
	}
	for _, p := range Priorities {
		cons, err := openConsumer(ctx, q.Jobs, jetstream.ConsumerConfig{
			Durable:       p,
			Description:   "zkpipe workers take " + p + "-priority jobs here",
			FilterSubject: jobSubject(p),
			AckPolicy:     jetstream.AckExplicitPolicy,
			AckWait:       cfg.AckWait,
			MaxDeliver:    -1, // workers answer a job delivered too often themselves
			MaxAckPending: -1, // each worker bounds its own
		})
		if err != nil {
			return nil, err
		}
		q.consumers = append(q.consumers, cons)
	}
	// The ack wait the consumers really have (they may predate cfg).
	q.ackWait = q.consumers[0].CachedInfo().Config.AckWait
	for _, b := range []struct {
		store *jetstream.ObjectStore
		name  string
		desc  string
	}{
		{&q.Circuits, CircuitBucket, "zkpipe circuits: NAME/circuit.*"},
		{&q.Witness, WitnessBucket, "zkpipe witnesses of queued jobs: ID@NONCE.witness, ID@NONCE.wtns"},
		{&q.Proofs, ProofBucket, "zkpipe proofs: ID/ID.proof, ID/ID.public, ID/result.json"},
	} {
		if *b.store, err = openBucket(ctx, js, jetstream.ObjectStoreConfig{Bucket: b.name, Description: b.desc, Storage: jetstream.FileStorage, Replicas: cfg.Replicas}); err != nil {
			return nil, err
		}
	}
	if q.HandBacks, err = openKV(ctx, js, jetstream.KeyValueConfig{
		Bucket:      HandBackBucket,
		Description: "zkpipe: how often each job message was handed back to the queue, by its stream sequence",
		History:     1,
		// a count is deleted when its job is answered; the TTL clears the
		// delete markers (and the count of a job purged from the queue)
		TTL:          HandBackTTL,
		MaxValueSize: 256,
		Storage:      jetstream.FileStorage,
		Replicas:     cfg.Replicas,
	}); err != nil {
		return nil, err
	}
	if q.Requests, err = openKV(ctx, js, jetstream.KeyValueConfig{
		Bucket:      RequestBucket,
		Description: "zkpipe: the answers of each request of partitions' partitions so far, by request id and submission",
		History:     1,
		// deleted when the request is answered; the TTL clears what a
		// partition answered again after that leaves
		TTL:          HandBackTTL,
		MaxValueSize: maxRequestRecord,
		Storage:      jetstream.FileStorage,
		Replicas:     cfg.Replicas,
	}); err != nil {
		return nil, err
	}
	if err := q.checkReplicas(ctx, cfg.Replicas, chosen, cfg.Log); err != nil {
		return nil, err
	}
	return q, nil
}

// backingStreams are the streams behind the queue's streams and buckets.
var backingStreams = []string{JobsStream, ResultsStream,
	"OBJ_" + CircuitBucket, "OBJ_" + WitnessBucket, "OBJ_" + ProofBucket, "KV_" + HandBackBucket, "KV_" + RequestBucket}

// checkReplicas compares each stream's replicas with want: given
// (!chosen), a stream that has others is scaled to want; chosen, one that
// has fewer is noted on log.
func (q *Queue) checkReplicas(ctx context.Context, want int, chosen bool, log io.Writer) error {
	ctx, cancel := context.WithTimeout(ctx, setupAttempt*time.Duration(len(backingStreams)))
	defer cancel()
	for _, name := range backingStreams {
		s, err := q.Conn.JS.Stream(ctx, name)
		if err != nil {
			return fmt.Errorf("stream %s: %w", name, err)
		}
		info, err := s.Info(ctx)
		if err != nil {
			return fmt.Errorf("stream %s: %w", name, err)
		}
		have := max(info.Config.Replicas, 1)
		switch {
		case have == want:
		case chosen:
			if have < want && log != nil {
				fmt.Fprintf(log, "zkpipe: stream %s has %d replica(s), in a cluster that could hold %d: give --replicas %d to scale it\n", name, have, want, want)
			}
		default:
			cfg := info.Config
			cfg.Replicas = want
			if _, err := q.Conn.JS.UpdateStream(ctx, cfg); err != nil {
				return placeErr(fmt.Sprintf("stream %s (%d replicas) scaled to", name, have), want, err)
			}
			if log != nil {
				fmt.Fprintf(log, "zkpipe: stream %s scaled from %d to %d replicas\n", name, have, want)
			}
		}
	}
	return nil
}

// Replicas is how many servers hold each of the queue's streams and
// buckets (as Setup made or found them).
func (q *Queue) Replicas() int { return q.replicas }

// autoReplicas is Config.Replicas chosen: 3 when c's server is one of a
// cluster of three or more (size, or the servers the client knows of:
// those it was given and those the cluster told it of), 1 otherwise.
func autoReplicas(c *Conn, size int) int {
	if size <= 0 {
		if c.NC.ConnectedClusterName() == "" {
			return 1
		}
		size = len(knownServers(c.NC))
	}
	if size >= 3 {
		return 3
	}
	return 1
}

// knownServers are the distinct host:port of the servers nc knows.
func knownServers(nc *nats.Conn) map[string]bool {
	out := map[string]bool{}
	for _, s := range nc.Servers() {
		if u, err := url.Parse(s); err == nil && u.Host != "" {
			host, port, err := net.SplitHostPort(u.Host)
			if err != nil {
				continue
			}
			if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() || strings.EqualFold(host, "localhost") {
				host = "127.0.0.1"
			}
			out[net.JoinHostPort(host, port)] = true
		}
	}
	return out
}

// placeErr says that the cluster could not place what with n replicas.
func placeErr(what string, n int, err error) error {
	var api *jetstream.APIError
	if n > 1 && errors.As(err, &api) && (api.ErrorCode == jsClusterNoPeers || api.ErrorCode == jsReplicasNotSupported || api.ErrorCode == jsInsufficientResources) {
		return fmt.Errorf("%s %d replicas: the cluster cannot place them (%s): a stream of N replicas needs N servers with JetStream up and room in their stores; start them, or give fewer (--replicas; 1 on a server of no cluster): %w",
			what, n, api.Description, err)
	}
	return fmt.Errorf("%s %d replicas: %w", what, n, err)
}

// JetStream's error codes for a stream it cannot place.
const (
	jsClusterNoPeers       = 10005
	jsReplicasNotSupported = 10074
)

// HandBackTTL is how long a job's hand-back count is kept after the last
// hand-back: a job still queued after that counts its later redeliveries
// from zero.
const HandBackTTL = 30 * 24 * time.Hour

// AckWait is the jobs' ack wait as the server has it.
func (q *Queue) AckWait() time.Duration { return q.ackWait }

func openStream(ctx context.Context, js jetstream.JetStream, cfg jetstream.StreamConfig) (jetstream.Stream, error) {
	ctx, cancel := context.WithTimeout(ctx, setupAttempt)
	defer cancel()
	s, err := js.Stream(ctx, cfg.Name)
	if err == nil {
		return s, nil
	}
	if !errors.Is(err, jetstream.ErrStreamNotFound) {
		return nil, fmt.Errorf("stream %s: %w", cfg.Name, err)
	}
	s, err = js.CreateStream(ctx, cfg)
	if errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) {
		s, err = js.Stream(ctx, cfg.Name) // another process made it first
	}
	if err != nil {
		return nil, placeErr("create stream "+cfg.Name+" with", max(cfg.Replicas, 1), err)
	}
	return s, nil
}

func openConsumer(ctx context.Context, s jetstream.Stream, cfg jetstream.ConsumerConfig) (jetstream.Consumer, error) {
	ctx, cancel := context.WithTimeout(ctx, setupAttempt)
	defer cancel()
	c, err := s.Consumer(ctx, cfg.Durable)
	if err == nil {
		return c, nil
	}
	if !errors.Is(err, jetstream.ErrConsumerNotFound) {
		return nil, fmt.Errorf("consumer %s: %w", cfg.Durable, err)
	}
	c, err = s.CreateConsumer(ctx, cfg)
	if errors.Is(err, jetstream.ErrConsumerExists) {
		c, err = s.Consumer(ctx, cfg.Durable)
	}
	if err != nil {
		return nil, fmt.Errorf("create consumer %s: %w", cfg.Durable, err)
	}
	return c, nil
}

func openBucket(ctx context.Context, js jetstream.JetStream, cfg jetstream.ObjectStoreConfig) (jetstream.ObjectStore, error) {
	ctx, cancel := context.WithTimeout(ctx, setupAttempt)
	defer cancel()
	o, err := js.ObjectStore(ctx, cfg.Bucket)
	if err == nil {
		return o, nil
	}
	if !errors.Is(err, jetstream.ErrBucketNotFound) && !errors.Is(err, jetstream.ErrStreamNotFound) {
		return nil, fmt.Errorf("object store %s: %w", cfg.Bucket, err)
	}
	o, err = js.CreateObjectStore(ctx, cfg)
	if errors.Is(err, jetstream.ErrBucketExists) || errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) {
		o, err = js.ObjectStore(ctx, cfg.Bucket)
	}
	if err != nil {
		return nil, placeErr("create object store "+cfg.Bucket+" with", max(cfg.Replicas, 1), err)
	}
	return o, nil
}

func openKV(ctx context.Context, js jetstream.JetStream, cfg jetstream.KeyValueConfig) (jetstream.KeyValue, error) {
	ctx, cancel := context.WithTimeout(ctx, setupAttempt)
	defer cancel()
	kv, err := js.KeyValue(ctx, cfg.Bucket)
	if err == nil {
		return kv, nil
	}
	if !errors.Is(err, jetstream.ErrBucketNotFound) && !errors.Is(err, jetstream.ErrStreamNotFound) {
		return nil, fmt.Errorf("key-value bucket %s: %w", cfg.Bucket, err)
	}
	kv, err = js.CreateKeyValue(ctx, cfg)
	if errors.Is(err, jetstream.ErrBucketExists) || errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) {
		kv, err = js.KeyValue(ctx, cfg.Bucket)
	}
	if err != nil {
		return nil, placeErr("create key-value bucket "+cfg.Bucket+" with", max(cfg.Replicas, 1), err)
	}
	return kv, nil
}
