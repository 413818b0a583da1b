package fleet

import (
	"context"
	"errors"
	"fmt"
	"time"

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
}

func (c Config) withDefaults() Config {
	if c.AckWait <= 0 {
		c.AckWait = DefaultAckWait
	}
	if c.Duplicates <= 0 {
		c.Duplicates = DefaultDuplicates
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
	// consumers by priority, in Priorities' order
	consumers []jetstream.Consumer
	ackWait   time.Duration
}

// Setup opens the streams, consumers and buckets, creating those missing.
// Safe to run from many processes at once.
func Setup(ctx context.Context, c *Conn, cfg Config) (*Queue, error) {
	cfg = cfg.withDefaults()
	js := c.JS
	q := &Queue{Conn: c}
	var err error
	q.Jobs, err = openStream(ctx, js, jetstream.StreamConfig{
		Name:        JobsStream,
		Description: "zkpipe proof jobs, one subject per priority",
		Subjects:    []string{jobsSubject + "*"},
		Retention:   jetstream.WorkQueuePolicy,
		Storage:     jetstream.FileStorage,
		Duplicates:  cfg.Duplicates,
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
		if *b.store, err = openBucket(ctx, js, jetstream.ObjectStoreConfig{Bucket: b.name, Description: b.desc, Storage: jetstream.FileStorage}); err != nil {
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
	}); err != nil {
		return nil, err
	}
	return q, nil
}

// HandBackTTL is how long a job's hand-back count is kept after the last
// hand-back: a job still queued after that counts its later redeliveries
// from zero.
const HandBackTTL = 30 * 24 * time.Hour

// AckWait is the jobs' ack wait as the server has it.
func (q *Queue) AckWait() time.Duration { return q.ackWait }

func openStream(ctx context.Context, js jetstream.JetStream, cfg jetstream.StreamConfig) (jetstream.Stream, error) {
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
		return nil, fmt.Errorf("create stream %s: %w", cfg.Name, err)
	}
	return s, nil
}

func openConsumer(ctx context.Context, s jetstream.Stream, cfg jetstream.ConsumerConfig) (jetstream.Consumer, error) {
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
		return nil, fmt.Errorf("create object store %s: %w", cfg.Bucket, err)
	}
	return o, nil
}

func openKV(ctx context.Context, js jetstream.JetStream, cfg jetstream.KeyValueConfig) (jetstream.KeyValue, error) {
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
		return nil, fmt.Errorf("create key-value bucket %s: %w", cfg.Bucket, err)
	}
	return kv, nil
}
