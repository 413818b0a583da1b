package gpu

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/zkpipe/zkpipe/mem"
	"github.com/zkpipe/zkpipe/proofdata"
)

// Device is one compute device as Multi drives it: every method of
// stages.Backend that Multi passes on to the device a job runs on, or sums
// over its devices (a CPU device answers the device-memory ones with zero).
type Device interface {
	Name() string
	Load(k *proofdata.Key) (proofdata.Resident, error)
	Transfer(ctx context.Context, r proofdata.Resident, v *proofdata.Vectors) (*proofdata.Staged, error)
	ClassifiesOnTransfer() bool
	StagesOnDevice() bool
	HostKey(k *proofdata.Key) proofdata.KeyParts
	HostKeyG2(k *proofdata.Key) proofdata.KeyParts
	TransferClassify(ctx context.Context, r proofdata.Resident, v *proofdata.Vectors, w []proofdata.Scalar, selA, selB, selK []uint32, hostB bool) (*proofdata.Staged, error)
	MSMH(ctx context.Context, s *proofdata.Staged) (proofdata.Point, error)
	BatchAddG1(ctx context.Context, s *proofdata.Staged) (proofdata.G1Sums, error)
	TailMSMG1(ctx context.Context, s *proofdata.Staged) (proofdata.G1Sums, error)
	TailMSMG1Batch(ctx context.Context, ss []*proofdata.Staged) ([]proofdata.G1Sums, []error)
	BatchAddG2(ctx context.Context, s *proofdata.Staged) (proofdata.Point, error)
	MSMG2(ctx context.Context, s *proofdata.Staged) (proofdata.Point, error)
	Free(s *proofdata.Staged)
	ResidentBytes(k *proofdata.Key) int64
	JobBytes(k *proofdata.Key, tail int) int64
	DeviceMemory() (free, total int64)
	PinnedBytes() int
	PinnedKeyBytes(k *proofdata.Key) int64
}

// ErrDeviceLost marks an error after which a device cannot be used again
// (a lost GPU, a sticky CUDA error): Multi takes the device out of rotation
// at once. Other errors take it out after maxStrikes in a row.
var ErrDeviceLost = errors.New("device lost")

// ErrNoDevice marks a job that no device in rotation can take: the fault is
// the host's, not the job's.
var ErrNoDevice = errors.New("no device in rotation")

// maxStrikes is how many calls in a row may fail on one device before Multi
// stops giving it jobs: one failure may be the job's (an allocation that did
// not fit), three in a row with no success between are the device's.
const maxStrikes = 3

// Multi spreads a stream over several devices of one host. Each job goes,
// at pin/transfer, to the device with the fewest jobs staged on it, and all
// its device stages run there (its vectors live there). Circuits are made
// resident on every device. A device that fails is taken out of rotation:
// its jobs in flight fail with its error, and the stream goes on on the
// others. Safe for concurrent use.
type Multi struct {
	devs []*member
}

type member struct {
	Device
	label   string
	staged  atomic.Int64 // jobs staged here and not yet freed: the load
	total   atomic.Int64 // jobs ever staged here: the device's share
	strikes atomic.Int64
	mu      sync.Mutex
	down    error // why it was taken out of rotation; nil while in
}

// NewMulti drives devs; labels name them in result lines and messages
// (len(labels) == len(devs), e.g. "cuda:0", "cuda:1").
func NewMulti(devs []Device, labels []string) (*Multi, error) {
	if len(devs) == 0 || len(labels) != len(devs) {
		return nil, fmt.Errorf("multi: %d devices, %d labels", len(devs), len(labels))
	}
	m := &Multi{}
	for i, d := range devs {
		m.devs = append(m.devs, &member{Device: d, label: labels[i]})
	}
	return m, nil
}

// Name is the devices' kind and count, e.g. "cuda×2".
func (m *Multi) Name() string { return fmt.Sprintf("%s×%d", m.devs[0].Name(), len(m.devs)) }

// Devices lists the devices' labels.
func (m *Multi) Devices() []string {
	out := make([]string, len(m.devs))
	for i, d := range m.devs {
		out[i] = d.label
	}
	return out
}

// Share is each device's count of jobs staged so far, and whether it is
// still in rotation, in the order of Devices.
func (m *Multi) Share() (jobs []int64, up []bool) {
	for _, d := range m.devs {
		jobs = append(jobs, d.total.Load())
		up = append(up, d.err() == nil)
	}
	return jobs, up
}

func (d *member) err() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.down
}

// outcome records a call's result on d, taking d out of rotation when the
// error is a lost device or the last of maxStrikes failures with no
// successful computation between.
func (d *member) outcome(err error) error {
	if err == nil {
		d.strikes.Store(0)
		return nil
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err // the job's, not the device's
	}
	if errors.Is(err, ErrDeviceLost) || d.strikes.Add(1) >= maxStrikes {
		d.mu.Lock()
		if d.down == nil {
			d.down = err
		}
		d.mu.Unlock()
	}
	return fmt.Errorf("%s: %w", d.label, err)
}

type multiResident struct {
	key *proofdata.Key
	per []proofdata.Resident // per device; nil where the key could not be loaded
}

func (r *multiResident) Key() *proofdata.Key { return r.key }

func (r *multiResident) Close() error {
	var errs []error
	for _, p := range r.per {
		if p != nil {
			errs = append(errs, p.Close())
		}
	}
	return errors.Join(errs...)
}

// Load makes k resident on every device in rotation. A device that cannot
// hold it serves the other circuits; a circuit no device can hold is an
// error naming each device's reason.
//
// A key file's bases left unread (proofdata.DeferredParts) are read once
// for all the devices: each CUDA device's load is begun (its buffers
// allocated), one stream of the file writes every chunk to each of them,
// and then each load is finished. Loading on each device in turn would
// read the file once a device.
func (m *Multi) Load(k *proofdata.Key) (proofdata.Resident, error) {
	r := &multiResident{key: k, per: make([]proofdata.Resident, len(m.devs))}
	errs := make([]error, len(m.devs)) // by device, to name them in order
	var loads []*cudaLoad              // by device; nil where none was begun
	for i, d := range m.devs {
		if err := d.err(); err != nil {
			errs[i] = fmt.Errorf("out of rotation (%v)", err)
			continue
		}
		if _, ok := d.Device.(streamLoader); ok {
			continue
		}
		// A device that loads on its own (a CPU) goes first: it reads the
		// deferred parts into the host copy, which the streaming ones then
		// upload from rather than read the file again.
		r.per[i], errs[i] = d.Load(k)
	}
	for i, d := range m.devs {
		sl, ok := d.Device.(streamLoader)
		if !ok || errs[i] != nil {
			continue
		}
		if loads == nil {
			loads = make([]*cudaLoad, len(m.devs))
		}
		loads[i], errs[i] = sl.beginLoad(k)
	}
	if loads != nil {
		fan := &fanSink{loads: loads, labels: m.Devices(), failed: make([]error, len(loads))}
		var parts proofdata.KeyParts
		for _, l := range loads {
			if l != nil {
				parts |= l.parts
			}
		}
		err := k.Stream(parts, fan)
		for i, l := range loads {
			if l == nil {
				continue
			}
			own := fan.failedOn(i) // the device's own write error before the stream's
			if own == nil {
				own = err
			}
			r.per[i], errs[i] = l.finish(own)
		}
	}
	var why []string
	unsupported := true // by every device: the key's curve, say (one gpu.CUDA has no kernels for)
	for i, d := range m.devs {
		if r.per[i] != nil {
			return r, nil
		}
		if errs[i] != nil {
			why = append(why, fmt.Sprintf("%s: %v", d.label, errs[i]))
			unsupported = unsupported && errors.Is(errs[i], errors.ErrUnsupported)
		}
	}
	if unsupported && len(why) > 0 {
		return nil, fmt.Errorf("no device can hold the %s key: %s: %w", k.Curve, strings.Join(why, "; "), errors.ErrUnsupported)
	}
	return nil, fmt.Errorf("no device can hold the key: %s", strings.Join(why, "; "))
}

// streamLoader is a device whose load Multi can split around one stream of
// a key file's deferred bases shared by all its devices (CUDA.beginLoad).
type streamLoader interface {
	beginLoad(k *proofdata.Key) (*cudaLoad, error)
}

// fanSink is one stream's sink for several devices' loads: each chunk goes
// to every load that streams its part, the devices in parallel (each
// through its own transfer lanes), and Write returns once all have it (the
// chunk's memory is reused then). A device whose write fails takes no more
// of the stream, and its load fails with that error; the stream goes on
// while any device takes it. A late write (the stream abandoned) reaches
// only closed device sinks, which refuse it.
type fanSink struct {
	loads  []*cudaLoad // by device; nil where none was begun
	labels []string
	mu     sync.Mutex
	failed []error // by device: its first write error
}

func (f *fanSink) failedOn(i int) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.failed[i]
}

func (f *fanSink) Write(part proofdata.KeyParts, at, count int, points []byte) error {
	errs := make([]error, len(f.loads))
	var wg sync.WaitGroup
	last := -1 // written on this goroutine, the others on their own
	for i, l := range f.loads {
		if l == nil || l.parts&part == 0 || f.failedOn(i) != nil {
			continue
		}
		if last >= 0 {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				errs[i] = f.loads[i].Write(part, at, count, points)
			}(last)
		}
		last = i
	}
	if last >= 0 {
		errs[last] = f.loads[last].Write(part, at, count, points)
	}
	wg.Wait()
	f.mu.Lock()
	defer f.mu.Unlock()
	live := false
	for i, l := range f.loads {
		if errs[i] != nil && f.failed[i] == nil {
			f.failed[i] = errs[i]
		}
		live = live || l != nil && f.failed[i] == nil
	}
	if live {
		return nil
	}
	var all []error // every device has failed: stop the stream
	for i, err := range f.failed {
		if err != nil {
			all = append(all, fmt.Errorf("%s: %w", f.labels[i], err))
		}
	}
	return errors.Join(all...)
}

// multiStaged is where a job's vectors live.
type multiStaged struct {
	dev   int
	inner *proofdata.Staged
}

// On names the device a staged job runs on ("" if s is not Multi's).
func (m *Multi) On(s *proofdata.Staged) string {
	if ms, ok := s.Device.(*multiStaged); ok {
		return m.devs[ms.dev].label
	}
	return ""
}

// Transfer stages v on the device in rotation, holding the circuit, with the
// fewest jobs staged. A device that cannot take it (out of memory, say)
// passes it to the next; a failed transfer is no strike against a device,
// which may well compute: only a lost device leaves rotation here.
func (m *Multi) Transfer(ctx context.Context, res proofdata.Resident, v *proofdata.Vectors) (*proofdata.Staged, error) {
	return m.transfer(ctx, res, func(d Device, r proofdata.Resident) (*proofdata.Staged, error) { return d.Transfer(ctx, r, v) })
}

// TransferClassify is Transfer for vectors whose queries are not
// classified yet (CUDA.TransferClassify). A device that cannot classify
// gets them classified on the host first.
func (m *Multi) TransferClassify(ctx context.Context, res proofdata.Resident, v *proofdata.Vectors, w []proofdata.Scalar, selA, selB, selK []uint32, hostB bool) (*proofdata.Staged, error) {
	return m.transfer(ctx, res, func(d Device, r proofdata.Resident) (*proofdata.Staged, error) {
		if d.ClassifiesOnTransfer() {
			return d.TransferClassify(ctx, r, v, w, selA, selB, selK, hostB)
		}
		qs := []struct {
			q   *proofdata.Query
			sel []uint32
		}{{&v.QA, selA}, {&v.QK, selK}}
		if !hostB {
			qs = append(qs, struct {
				q   *proofdata.Query
				sel []uint32
			}{&v.QB, selB})
		}
		one := proofdata.One(r.Key().Curve)
		for _, q := range qs {
			n := len(q.sel)
			proofdata.ClassifyWith(q.q, one, w, q.sel, make([]uint64, (n+63)/64), make([]uint32, n), make([]proofdata.Scalar, n), runtime.GOMAXPROCS(0))
		}
		return d.Transfer(ctx, r, v)
	})
}

// transfer places one job's vectors with put on the device holding the
// circuit with the fewest jobs staged (see Transfer).
func (m *Multi) transfer(ctx context.Context, res proofdata.Resident, put func(d Device, r proofdata.Resident) (*proofdata.Staged, error)) (*proofdata.Staged, error) {
	r, ok := res.(*multiResident)
	if !ok {
		return nil, fmt.Errorf("multi: a key not loaded by Multi")
	}
	tried := make([]bool, len(m.devs))
	var errs []string
	for {
		best := -1
		for i, d := range m.devs {
			if tried[i] || d.err() != nil || r.per[i] == nil {
				continue
			}
			// the least loaded; on a tie, the one that has had fewer jobs
			if b := m.devs[best0(best)]; best < 0 || d.staged.Load() < b.staged.Load() ||
				d.staged.Load() == b.staged.Load() && d.total.Load() < b.total.Load() {
				best = i
			}
		}
		if best < 0 {
			for _, d := range m.devs {
				if err := d.err(); err != nil {
					errs = append(errs, fmt.Sprintf("%s out of rotation: %v", d.label, err))
				}
			}
			return nil, fmt.Errorf("%w holds this circuit and takes the job (%s)", ErrNoDevice, strings.Join(errs, "; "))
		}
		tried[best] = true
		d := m.devs[best]
		d.staged.Add(1)
		s, err := put(d.Device, r.per[best])
		if err != nil {
			d.staged.Add(-1)
			if ctx.Err() != nil {
				return nil, err
			}
			if errors.Is(err, ErrDeviceLost) {
				d.outcome(err)
			}
			errs = append(errs, fmt.Sprintf("%s: %v", d.label, err))
			continue
		}
		d.total.Add(1)
		return &proofdata.Staged{Resident: r, Host: s.Host, Device: &multiStaged{dev: best, inner: s}}, nil
	}
}

func best0(i int) int { return max(i, 0) }

func (m *Multi) staged(s *proofdata.Staged) (*member, *proofdata.Staged, error) {
	ms, ok := s.Device.(*multiStaged)
	if !ok {
		return nil, nil, fmt.Errorf("multi: a job not staged by Multi")
	}
	d := m.devs[ms.dev]
	if err := d.err(); err != nil {
		return nil, nil, fmt.Errorf("%w: %s left it (%v)", ErrNoDevice, d.label, err)
	}
	return d, ms.inner, nil
}

// call runs f on the device s is staged on and records the outcome.
func call[T any](m *Multi, s *proofdata.Staged, f func(d Device, in *proofdata.Staged) (T, error)) (T, error) {
	var zero T
	d, in, err := m.staged(s)
	if err != nil {
		return zero, err
	}
	v, err := f(d.Device, in)
	if err = d.outcome(err); err != nil {
		return zero, err
	}
	return v, nil
}

func (m *Multi) MSMH(ctx context.Context, s *proofdata.Staged) (proofdata.Point, error) {
	return call(m, s, func(d Device, in *proofdata.Staged) (proofdata.Point, error) { return d.MSMH(ctx, in) })
}

func (m *Multi) BatchAddG1(ctx context.Context, s *proofdata.Staged) (proofdata.G1Sums, error) {
	return call(m, s, func(d Device, in *proofdata.Staged) (proofdata.G1Sums, error) { return d.BatchAddG1(ctx, in) })
}

func (m *Multi) TailMSMG1(ctx context.Context, s *proofdata.Staged) (proofdata.G1Sums, error) {
	return call(m, s, func(d Device, in *proofdata.Staged) (proofdata.G1Sums, error) { return d.TailMSMG1(ctx, in) })
}

// TailMSMG1Batch runs the jobs of each device as one batch there (in turn
// on a device that does not batch); out[i] and errs[i] are ss[i]'s. Each
// job's outcome counts on its device as a call of its own would.
func (m *Multi) TailMSMG1Batch(ctx context.Context, ss []*proofdata.Staged) ([]proofdata.G1Sums, []error) {
	out, errs := make([]proofdata.G1Sums, len(ss)), make([]error, len(ss))
	byDev := map[*member][]int{}
	var order []*member
	inner := make([]*proofdata.Staged, len(ss))
	for i, s := range ss {
		d, in, err := m.staged(s)
		if err != nil {
			errs[i] = err
			continue
		}
		if byDev[d] == nil {
			order = append(order, d)
		}
		byDev[d] = append(byDev[d], i)
		inner[i] = in
	}
	for _, d := range order {
		at := byDev[d]
		batch := make([]*proofdata.Staged, len(at))
		for j, i := range at {
			batch[j] = inner[i]
		}
		sums, es := d.TailMSMG1Batch(ctx, batch)
		for j, i := range at {
			if errs[i] = d.outcome(es[j]); errs[i] == nil {
				out[i] = sums[j]
			}
		}
	}
	return out, errs
}

func (m *Multi) BatchAddG2(ctx context.Context, s *proofdata.Staged) (proofdata.Point, error) {
	return call(m, s, func(d Device, in *proofdata.Staged) (proofdata.Point, error) { return d.BatchAddG2(ctx, in) })
}

func (m *Multi) MSMG2(ctx context.Context, s *proofdata.Staged) (proofdata.Point, error) {
	return call(m, s, func(d Device, in *proofdata.Staged) (proofdata.Point, error) { return d.MSMG2(ctx, in) })
}

// Free releases s on its device, in rotation or not.
func (m *Multi) Free(s *proofdata.Staged) {
	ms, ok := s.Device.(*multiStaged)
	if !ok {
		return
	}
	d := m.devs[ms.dev]
	d.Free(ms.inner)
	d.staged.Add(-1)
}

// PinnedBytes is the pinned host memory the devices hold together.
func (m *Multi) PinnedBytes() int {
	n := 0
	for _, d := range m.devs {
		n += d.PinnedBytes()
	}
	return n
}

// The device-memory budget of several devices is kept as one pool, the sum
// of theirs: keys are resident on each (ResidentBytes counts every copy),
// and a job holds its footprint on one. A job could so be admitted while
// the device it lands on is the fuller one; per-device budgets would be
// exact.

// DeviceMemory sums the devices' free and total memory (mem.DeviceMemory).
func (m *Multi) DeviceMemory() (free, total int64) {
	for _, d := range m.devs {
		if d.err() == nil {
			f, t := d.DeviceMemory()
			free, total = free+f, total+t
		}
	}
	return free, total
}

// ResidentBytes is what k takes on all the devices together.
func (m *Multi) ResidentBytes(k *proofdata.Key) int64 {
	var n int64
	for _, d := range m.devs {
		n += d.ResidentBytes(k)
	}
	return n
}

// PinnedKeyBytes is what k's streamed bases take in pinned host memory on
// all the devices together (each keeps its own copy).
func (m *Multi) PinnedKeyBytes(k *proofdata.Key) int64 {
	var n int64
	for _, d := range m.devs {
		n += d.PinnedKeyBytes(k)
	}
	return n
}

// JobBytes is the most one job of k holds on the device it runs on.
func (m *Multi) JobBytes(k *proofdata.Key, tail int) int64 {
	var n int64
	for _, d := range m.devs {
		n = max(n, d.JobBytes(k, tail))
	}
	return n
}

// ClassifiesOnTransfer is true: TransferClassify classifies on the device
// where it can, and on the host for a device that cannot.
func (m *Multi) ClassifiesOnTransfer() bool { return true }

// HostKey is what any of the devices reads of k's host copy: a job may
// land on any of them.
func (m *Multi) HostKey(k *proofdata.Key) proofdata.KeyParts {
	var p proofdata.KeyParts
	for _, d := range m.devs {
		p |= d.HostKey(k)
	}
	return p
}

// HostKeyG2 is what any device's B_G2 reads of k's host copy.
func (m *Multi) HostKeyG2(k *proofdata.Key) proofdata.KeyParts {
	var p proofdata.KeyParts
	for _, d := range m.devs {
		p |= d.HostKeyG2(k)
	}
	return p
}

// StagesOnDevice is true when every device stages a job's vectors on
// itself: a device that does not (a CPU) reads a, b, c on the host.
func (m *Multi) StagesOnDevice() bool {
	for _, d := range m.devs {
		if !d.StagesOnDevice() {
			return false
		}
	}
	return true
}

// PinnedSlots is 0, 0: each device stages through pinned buffers of its own.
func (m *Multi) PinnedSlots() (slot, slots int) { return 0, 0 }

// PinnedAlloc is unsupported: see PinnedSlots.
func (m *Multi) PinnedAlloc(int) ([]byte, func() error, error) {
	return nil, nil, fmt.Errorf("multi: lent pinned buffers: %w", errors.ErrUnsupported)
}

// UsePinned does nothing: see PinnedSlots.
func (m *Multi) UsePinned(*mem.PinnedPool) {}
