package engine

import (
	"runtime"

	"github.com/zkpipe/zkpipe/stages"
)

// autoShape picks workers and queue depths for the stages opts leave out,
// from the host's cores and where the stages run; a stage the user set
// keeps its setting. It returns the shapes and which stages it chose.
//
// On a GPU the device stages (transfer's copies aside) share one device and
// each fills it, so one worker each with a queue of two keeps it fed; the
// CPU side must keep up: synthesize is the heaviest host stage (≈ 430 ms a
// 2^20 mulchain proof on one core's worth of solver, notes/cuda.md), so it
// gets 3/8 of the cores (6 on 16, the best hand-tuned shape measured
// there), parse two (witness files, generation), transfer three (each upload
// copies on its own core), assemble two. On the CPU every stage draws on
// the same cores: two workers for each heavy stage (synthesize, msm-h,
// tail-msm, b-g2) measured 1.16× gnark on mulchain 2^20 against 1.08× for
// one (notes/bench.md, shapes A and B).
//
// serialSynth: every circuit's synthesize runs on one core a job (circom:
// the wasm witness calculator of an input job is nearly all of its CPU),
// so on a GPU synthesize gets 3/4 of the cores instead (12 on 16): a
// SHA-256 2^16 witness takes about 200 CPU ms, and 6 workers would cap the
// stream at 30 proofs/s while the device and the other stages, which use
// little CPU there, could go faster. The controller would find this too,
// but only after two windows of 2 s: a bench of 48 proofs is over by then.
func autoShape(set map[string]stages.Shape, cores int, onGPU, bg2OnGPU, serialSynth bool) (map[string]stages.Shape, map[string]bool) {
	if cores <= 0 {
		cores = runtime.NumCPU()
	}
	auto := map[string]stages.Shape{}
	for _, n := range stages.Names {
		auto[n] = stages.Shape{Workers: 1, Queue: 1}
	}
	if onGPU {
		auto[stages.Parse] = stages.Shape{Workers: 2, Queue: 2}
		auto[stages.Synthesize] = stages.Shape{Workers: max(1, cores*3/8), Queue: 1}
		if serialSynth {
			auto[stages.Synthesize] = stages.Shape{Workers: max(1, cores*3/4), Queue: 1}
		}
		auto[stages.Transfer] = stages.Shape{Workers: min(3, max(1, cores/4)), Queue: 1}
		for _, n := range []string{stages.MSMH, stages.BatchAdd, stages.TailMSM} {
			auto[n] = stages.Shape{Workers: 1, Queue: 2}
		}
		if !bg2OnGPU {
			auto[stages.BG2] = stages.Shape{Workers: min(2, cores), Queue: 1}
		}
		auto[stages.Assemble] = stages.Shape{Workers: 2, Queue: 1}
	} else if cores >= 4 {
		for _, n := range []string{stages.Synthesize, stages.MSMH, stages.TailMSM, stages.BG2} {
			auto[n] = stages.Shape{Workers: 2, Queue: 1}
		}
	}
	out := map[string]stages.Shape{}
	chosen := map[string]bool{}
	for _, n := range stages.Names {
		if s, ok := set[n]; ok {
			out[n] = s
			continue
		}
		out[n], chosen[n] = auto[n], true
	}
	return out, chosen
}

// serialSynthesis tells whether every circuit's synthesize runs on one
// core a job (stages.SerialSynthesizer); false without circuits.
func serialSynthesis(circuits []*stages.Circuit) bool {
	for _, c := range circuits {
		if !c.Source.SerialSynthesis() {
			return false
		}
	}
	return len(circuits) > 0
}

// perDevice multiplies the device stages' workers by the number of GPUs: a
// shape's device-stage counts (set or chosen) apply to each GPU, whose
// kernels queue on its own streams.
func perDevice(shapes map[string]stages.Shape, gpus int, bg2OnGPU bool) {
	device := []string{stages.Transfer, stages.MSMH, stages.BatchAdd, stages.TailMSM}
	if bg2OnGPU {
		device = append(device, stages.BG2)
	}
	for _, n := range device {
		s := shapes[n]
		s.Workers *= gpus
		shapes[n] = s
	}
}

// batchQueue deepens an automatic tail-msm queue to a whole batch: a
// batching worker takes only jobs already waiting there, so a queue of q
// caps its batches at q+1. A queue the user set stays as set.
func batchQueue(shapes map[string]stages.Shape, chosen map[string]bool, batch int) {
	if batch <= 1 || !chosen[stages.TailMSM] {
		return
	}
	s := shapes[stages.TailMSM]
	s.Queue = max(s.Queue, batch)
	shapes[stages.TailMSM] = s
}
