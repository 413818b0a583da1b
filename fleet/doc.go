// Package fleet is zkpipe's queue side: proof jobs carried by NATS JetStream
// to any number of workers, each feeding its own staged pipeline.
//
// Layout on the NATS server (Setup makes it; every command calls Setup, which
// only creates what is missing):
//
//	stream ZKPIPE_JOBS      work queue, subjects zkpipe.jobs.{high,normal,low};
//	                        one durable pull consumer per priority, shared by
//	                        all workers; Nats-Msg-Id = job id deduplicates
//	                        submits within the duplicate window
//	stream ZKPIPE_RESULTS   result lines (stream.Result JSON) on
//	                        zkpipe.results.ID, the last one per id kept
//	object zkpipe-circuits  NAME/circuit.{r1cs,pk,vk,json}  (gnark directory)
//	                        NAME/circuit.zkey, NAME/circuit.wasm  (circom)
//	object zkpipe-witness   ID@NONCE.witness, ID@NONCE.wtns: uploaded by
//	                        submit, deleted once the job is answered (before
//	                        its ack)
//	kv zkpipe-handbacks     stream sequence of a job message → how often
//	                        workers handed it back (handback.go)
//	kv zkpipe-requests      REQUEST=TAG → a request of partitions' answers
//	                        so far (requests.go); each partition is a job
//	                        message REQUEST/INDEX with Zkpipe-Request headers
//	object zkpipe-proofs    ID: the job's outputs in one object (Outputs:
//	                        its result line and its files, as the engine
//	                        wrote them: ID.proof, ID.public, ID.proof.json,
//	                        ID.calldata with --calldata); its presence means the
//	                        job is done. One object, not one per file: each
//	                        object costs the collector a consumer of its own
//
// Every stream and bucket has Config.Replicas replicas (3 in a cluster of
// three or more servers): the queue survives the loss of a server, and
// each write of the fleet's is idempotent and tried again while the
// cluster elects new leaders (retry.go).
//
// A worker's duties, in order, for each job it pulls (Worker.Run):
//
//  1. pull only what the prover can start soon: while the jobs sent to it
//     that have not gone through its first stages leave one of their
//     places free (Prover.Intake), and fewer than its Capacity() (or
//     WorkerOptions.MaxInHand) jobs are in hand; so the pipeline's
//     backpressure (and the memory governor's) reaches the queue, and a job
//     this worker could not start for a while waits there for any worker;
//     high before normal before low;
//  2. answer a job whose outputs are stored from them, without proving, once
//     their proof passes the job's circuit's verifying key (verify.go: the
//     store is writable by anyone with access to the queue); outputs that
//     fail are proven again and replaced;
//  3. send msg.InProgress for every job in hand each third of the ack wait,
//     but none past WorkerOptions.JobTimeout in the prover: such a job is
//     terminated with its error (or, if it shared the prover, handed back
//     to run alone) and the stuck prover is given up (ErrProverStuck);
//  4. on a proof: store its outputs (the engine writes them to the job's
//     own writer, in memory; the witness came from the store a chunk at a
//     time as parse read it, reserved with the prover's memory budget:
//     nothing of a job touches the worker's disk), publish the result line
//     (a partition: record its answer with its request's, publishing the
//     request's line if that completes it), remove the witness, and only
//     then ack; a killed worker's jobs are redelivered to another after the
//     ack wait;
//  5. on a failed job (bad witness, unknown circuit, unsatisfied): publish the
//     error result, remove the witness and terminate the message (msg.Term):
//     never redelivered;
//  6. on a fault of its own (its disk, its GPU, NATS): count the hand-back,
//     then Nak (see handBacks); a fault of its disk also stops the intake;
//  7. run a job alone once a delivery of it ended with no answer (its
//     worker died, or stopped with it in the prover), and count only such
//     runs alone towards MaxDeliveries.
package fleet
