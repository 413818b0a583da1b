package proofdata

// Resident is a Key loaded onto a device. It is shared by every job of its
// circuit and safe for concurrent use; Close frees the device copy.
type Resident interface {
	Key() *Key
	Close() error
}

// Staged is one proof's Vectors as a device holds them, from Transfer until
// Free. Host keeps the host copy (CPU paths such as a CPU B_G2 read it);
// Device is the backend's own state.
type Staged struct {
	Resident Resident
	Host     *Vectors
	Device   any
}
