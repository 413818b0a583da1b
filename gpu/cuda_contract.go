package gpu

import (
	"errors"
	"fmt"

	"github.com/zkpipe/zkpipe/mem"
	"github.com/zkpipe/zkpipe/proofdata"
)

// The parts of stages.Backend a single GPU answers with "not here": it is
// one device, and it stages through pinned buffers of its own (PinnedBytes)
// rather than ones the engine lends.

// ClassifiesOnTransfer is true: TransferClassify classifies into the
// pinned buffers the upload reads.
func (c *CUDA) ClassifiesOnTransfer() bool { return true }

// HostKey is none: Load uploads the bases and builds the domain's tables on
// the device, and nothing reads the host copy after.
func (c *CUDA) HostKey(*proofdata.Key) proofdata.KeyParts { return 0 }

// HostKeyG2 is none: B_G2 here reads B₂ on the device.
func (c *CUDA) HostKeyG2(*proofdata.Key) proofdata.KeyParts { return 0 }

// StagesOnDevice is true: TransferClassify uploads a, b, c and the queries
// before it returns (a, b, c may be reused then), and the G1 stages read
// them on the device.
func (c *CUDA) StagesOnDevice() bool { return true }

// On is the GPU's name ("cuda:0"): one CUDA backend is one device, and a
// job's result line says which ran its device stages whether the engine
// has one GPU (--cuda-device all over a host of one) or several (Multi's
// own labels then).
func (c *CUDA) On(*proofdata.Staged) string { return fmt.Sprintf("cuda:%d", c.index) }

// PinnedSlots is 0, 0: the bounce buffers are the backend's own.
func (c *CUDA) PinnedSlots() (slot, slots int) { return 0, 0 }

// PinnedAlloc is unsupported: see PinnedSlots.
func (c *CUDA) PinnedAlloc(int) ([]byte, func() error, error) {
	return nil, nil, fmt.Errorf("cuda: lent pinned buffers: %w", errors.ErrUnsupported)
}

// UsePinned does nothing: see PinnedSlots.
func (c *CUDA) UsePinned(*mem.PinnedPool) {}
