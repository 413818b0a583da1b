package mem

import (
	"context"
	"fmt"
	"time"
)

// DeviceMemory is what the governor reads from a compute device with memory
// of its own (gpu.CUDA): the bytes a new allocation can use now, and the
// device's total. The governor asks it at admission and at every sample.
type DeviceMemory interface {
	DeviceMemory() (free, total int64)
}

// The device budget sits beside the RSS and pinned budgets (Config.Device):
//
//	resident keys   ChargeDevice, for the run; refused, naming both sizes,
//	                when they do not fit the budget beside what is charged
//	jobs            AdmitDevice, from pin/transfer until the job leaves; a
//	                job waits, in arrival order, until both
//	                  promised: deviceCharged + deviceReserved + need ≤ deviceBudget
//	                  measured: need ≤ the device's free memory now
//	                hold (the measured test is waived when no job holds device
//	                memory: there is nothing to wait for), and one that can
//	                never fit fails at once with a *DeviceTooLargeError.
//
// So a backlog of jobs waits for device memory instead of failing on
// allocation.

// DeviceTooLargeError is a job or a circuit's resident keys that can never
// fit the device budget. It matches ErrTooLarge.
type DeviceTooLargeError struct {
	What     string // "job" or "resident keys"
	Need     int64
	Budget   int64 // the whole device budget
	Resident int64 // already held by resident keys
}

func (e *DeviceTooLargeError) Error() string {
	return fmt.Sprintf("%s need %s of GPU memory, but the %s device budget has %s left beside %s of resident keys (raise the device budget, or use a larger GPU)",
		e.What, FormatBytes(e.Need), FormatBytes(e.Budget), FormatBytes(max(e.Budget-e.Resident, 0)), FormatBytes(e.Resident))
}

func (e *DeviceTooLargeError) Is(target error) bool { return target == ErrTooLarge }

// deviceState is the governor's device accounting (under Governor.mu).
type deviceState struct {
	dev      DeviceMemory // nil: no device budget
	budget   int64
	charged  int64 // resident keys
	reserved int64 // admitted jobs
	admitted int
	queue    []*waiter
	free     int64 // the latest reading
	total    int64
}

// initDevice sets up the device budget from cfg (at NewGovernor).
func (g *Governor) initDevice(cfg Config) {
	d := &g.dev
	d.dev = cfg.Device
	if d.dev == nil {
		return
	}
	d.free, d.total = d.dev.DeviceMemory()
	d.budget = cfg.DeviceBudget
	if d.budget <= 0 {
		d.budget = d.free // what the device has free when the run starts
	}
}

// HasDevice tells whether the governor keeps a device budget.
func (g *Governor) HasDevice() bool { return g.dev.dev != nil }

// ChargeDevice counts device memory that stays in use for the run, such as a
// circuit's resident keys, against the device budget. It fails with a
// *DeviceTooLargeError when bytes do not fit beside what is charged already,
// and also when the device does not have them free now. Close the returned
// hold once the memory is freed. Without a device budget it holds nothing.
func (g *Governor) ChargeDevice(bytes int64) (*Reservation, error) {
	bytes = max(bytes, 0)
	g.mu.Lock()
	defer g.mu.Unlock()
	d := &g.dev
	if d.dev == nil {
		return nil, nil
	}
	d.free, d.total = d.dev.DeviceMemory()
	if d.charged+bytes > d.budget || bytes > d.free {
		return nil, &DeviceTooLargeError{What: "resident keys", Need: bytes, Budget: min(d.budget, d.charged+d.free), Resident: d.charged}
	}
	d.charged += bytes
	return NewReservation(bytes, func(n int64) {
		g.mu.Lock()
		defer g.mu.Unlock()
		g.dev.charged -= n
		g.grantDeviceLocked()
	}), nil
}

// AdmitDevice blocks until need bytes of device memory fit (see the device
// budget above), in arrival order, and returns the job's hold on them; the
// caller must Close it when the job's device buffers are freed. It fails at
// once with a *DeviceTooLargeError when need can never fit, and returns
// ctx.Err() if ctx ends first. Without a device budget it returns a nil
// hold at once.
func (g *Governor) AdmitDevice(ctx context.Context, job string, need int64) (*Reservation, error) {
	need = max(need, 0)
	g.mu.Lock()
	d := &g.dev
	if d.dev == nil {
		g.mu.Unlock()
		return nil, nil
	}
	if need > d.budget-d.charged {
		g.stats.DeviceRejected++
		g.mu.Unlock()
		return nil, &DeviceTooLargeError{What: "job " + job, Need: need, Budget: d.budget, Resident: d.charged}
	}
	w := &waiter{need: need, ready: make(chan struct{})}
	d.queue = append(d.queue, w)
	g.grantDeviceLocked()
	if w.res != nil || w.err != nil {
		g.mu.Unlock()
		return w.res, w.err
	}
	g.stats.DeviceWaits++
	if !g.sampling { // free device memory changes without telling anyone
		g.sampling = true
		go g.sampler()
	}
	g.mu.Unlock()
	return g.await(ctx, w, &d.queue, &g.stats.DeviceWaitTime, g.grantDeviceLocked)
}

// grantDeviceLocked admits device waiters from the head of the queue while
// they fit, reading the device's free memory once.
func (g *Governor) grantDeviceLocked() {
	d := &g.dev
	if d.dev == nil || len(d.queue) == 0 {
		return
	}
	d.free, d.total = d.dev.DeviceMemory()
	free := d.free
	for len(d.queue) > 0 {
		w := d.queue[0]
		if w.need > d.budget-d.charged {
			d.queue[0] = nil
			d.queue = d.queue[1:]
			g.stats.DeviceRejected++
			w.err = &DeviceTooLargeError{What: "job", Need: w.need, Budget: d.budget, Resident: d.charged}
			close(w.ready)
			continue
		}
		if d.charged+d.reserved+w.need > d.budget || (w.need > free && d.admitted > 0) {
			return
		}
		d.queue[0] = nil
		d.queue = d.queue[1:]
		free -= w.need
		d.reserved += w.need
		d.admitted++
		g.stats.DeviceGranted++
		g.stats.DevicePeakReserved = max(g.stats.DevicePeakReserved, d.reserved)
		var r *Reservation
		r = NewReservation(w.need, func(n int64) {
			g.mu.Lock()
			defer g.mu.Unlock()
			g.dev.reserved -= n
			g.grantDeviceLocked()
		})
		r.onClose = func(rest int64) {
			g.mu.Lock()
			defer g.mu.Unlock()
			g.dev.reserved -= rest
			g.dev.admitted--
			g.grantDeviceLocked()
		}
		w.res = r
		close(w.ready)
	}
}

// deviceStatsLocked fills s's device fields.
func (g *Governor) deviceStatsLocked(s *Stats) {
	d := &g.dev
	if d.dev == nil {
		return
	}
	s.DeviceBudget, s.DeviceTotal, s.DeviceFree = d.budget, d.total, d.free
	s.DeviceCharged, s.DeviceReserved = d.charged, d.reserved
	s.DeviceAdmitted, s.DeviceWaiting = d.admitted, len(d.queue)
}

// FormatDevice is the device part of a status line: what resident keys and
// jobs hold of the device budget, jobs waiting for device memory, and the
// device's free memory; "" without a device budget.
func FormatDevice(s Stats) string {
	if s.DeviceBudget == 0 && s.DeviceTotal == 0 {
		return ""
	}
	out := fmt.Sprintf("gpu %s/%s (keys %s, %d jobs %s",
		FormatBytes(s.DeviceCharged+s.DeviceReserved), FormatBytes(s.DeviceBudget),
		FormatBytes(s.DeviceCharged), s.DeviceAdmitted, FormatBytes(s.DeviceReserved))
	if s.DeviceWaiting > 0 {
		out += fmt.Sprintf(", %d waiting", s.DeviceWaiting)
	}
	if s.DeviceWaits > 0 {
		out += fmt.Sprintf(", %d waited %s", s.DeviceWaits, s.DeviceWaitTime.Round(time.Millisecond))
	}
	return out + fmt.Sprintf("), free %s of %s", FormatBytes(s.DeviceFree), FormatBytes(s.DeviceTotal))
}
