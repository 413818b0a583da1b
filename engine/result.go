package engine

import (
	"time"

	"github.com/zkpipe/zkpipe/pipeline"
	"github.com/zkpipe/zkpipe/stages"
	"github.com/zkpipe/zkpipe/stream"
)

// resultLine turns a finished job into its result line, whole: times are
// measured from t0, the stream's start; the memory figures are those of
// the job's reservation.
func (p *Core) resultLine(r pipeline.Result[*stages.Job], t0 time.Time) stream.Result {
	j := r.Job
	out := stream.Result{ID: j.ID, Stages: make([]stream.StageTime, 0, len(r.Timings))}
	if j.Circuit != nil {
		out.Circuit = j.Circuit.Name
	}
	out.Device = j.Device
	if r.Err != nil {
		out.Error = r.Err.Error()
		out.FailedStage = r.Stage
		out.Retryable = p.cfg.HostFault != nil && p.cfg.HostFault(r.Err)
	} else {
		out.Proof, out.Public, out.PublicInputs, out.Calldata = j.Emitted.Proof, j.Emitted.Public, j.Emitted.PublicInputs, j.Emitted.Calldata
	}
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	for _, t := range r.Timings {
		out.Stages = append(out.Stages, stream.StageTime{
			Stage: t.Stage, Worker: t.Worker,
			QueueMS: ms(t.Wait()), RunMS: ms(t.Busy()), CPUMS: ms(j.CPU[t.Stage]),
			QueuedAtMS: ms(t.Queued.Sub(t0)), StartedAtMS: ms(t.Started.Sub(t0)), EndedAtMS: ms(t.Finished.Sub(t0)),
		})
	}
	if n := len(r.Timings); n > 0 {
		out.TotalMS = ms(r.Timings[n-1].Finished.Sub(r.Timings[0].Queued))
	}
	res := j.Reservation
	out.ReservedBytes = res.Reserved()
	out.RSSPeakBytes = res.PeakRSS()
	out.MinorFaults = res.MinorFaults()
	out.DeviceReservedBytes = j.DeviceReservation.Reserved()
	return out
}
