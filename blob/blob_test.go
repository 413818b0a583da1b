package blob

import (
	"bytes"
	"context"
	"errors"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/zkpipe/zkpipe/mem"
)

func TestMemoryKeepsCopiesInOrder(t *testing.T) {
	var m Memory
	data := []byte("proof")
	if p, err := m.Write("a.proof", data); err != nil || p != "a.proof" {
		t.Fatalf("Write: %q %v, want the name back", p, err)
	}
	data[0] = 'X' // the writer keeps no reference to the caller's bytes
	m.Write("a.public", []byte("pub"))
	m.Write("a.proof", []byte("proof2")) // replaced, keeps its place
	if got := m.Names(); !slices.Equal(got, []string{"a.proof", "a.public"}) {
		t.Errorf("names %v", got)
	}
	if b, ok := m.File("a.proof"); !ok || string(b) != "proof2" {
		t.Errorf("a.proof: %q %v", b, ok)
	}
	if _, ok := m.File("b.proof"); ok {
		t.Error("a file never written")
	}
}

func TestInputReleaseGivesBackItsHold(t *testing.T) {
	var back int64
	in := NewInput("w", []byte("witness"), mem.NewReservation(100, func(n int64) { back += n }))
	r, size, err := in.Open(context.Background())
	if err != nil || size != 7 {
		t.Fatalf("Open: %d %v", size, err)
	}
	in.Release()
	in.Release()
	if back != 100 {
		t.Errorf("released %d of the hold's 100 bytes", back)
	}
	if b, _ := io.ReadAll(r); !bytes.Equal(b, []byte("witness")) {
		t.Errorf("a reader opened before Release reads %q", b)
	}
	if _, _, err := in.Open(context.Background()); !errors.Is(err, ErrReleased) {
		t.Errorf("Open after Release: %v", err)
	}
	var none *Input
	none.Release() // a job without one
}

// A fetched input is got at its first Open, once; a failed fetch is tried
// again; released before its fetch ends, it gives the hold straight back.
func TestFetchedInput(t *testing.T) {
	calls := 0
	var back int64
	in := Fetched("w", func(context.Context) ([]byte, *mem.Reservation, error) {
		calls++
		if calls == 1 {
			return nil, nil, errors.New("store hiccup")
		}
		return []byte("abc"), mem.NewReservation(3, func(n int64) { back += n }), nil
	})
	if _, _, err := in.Open(context.Background()); err == nil {
		t.Fatal("a failed fetch opened")
	}
	for range 2 {
		r, size, err := in.Open(context.Background())
		if err != nil || size != 3 {
			t.Fatalf("Open: %d %v", size, err)
		}
		if b, _ := io.ReadAll(r); string(b) != "abc" {
			t.Errorf("read %q", b)
		}
	}
	if calls != 2 {
		t.Errorf("%d fetches, want 2 (one failed, one kept)", calls)
	}
	in.Release()
	if back != 3 {
		t.Errorf("hold: %d of 3 bytes given back", back)
	}

	var late *Input
	late = Fetched("late", func(context.Context) ([]byte, *mem.Reservation, error) {
		late.Release() // a worker letting the job go while parse fetches
		return []byte("x"), mem.NewReservation(5, func(n int64) { back += n }), nil
	})
	if _, _, err := late.Open(context.Background()); !errors.Is(err, ErrReleased) {
		t.Errorf("released during its fetch: %v", err)
	}
	if back != 8 {
		t.Errorf("the late fetch's hold was not given back (%d)", back-3)
	}
}

// A streamed input is opened anew at each Open, the reader before closed;
// Release closes the reader and the hold; opened after Release, or
// released while it opened, it gives everything back.
func TestStreamedInput(t *testing.T) {
	opens, closes := 0, 0
	var back int64
	open := func(context.Context) (io.ReadCloser, int64, *mem.Reservation, error) {
		opens++
		return closer{strings.NewReader("wit"), &closes}, 3, mem.NewReservation(3, func(n int64) { back += n }), nil
	}
	in := Streamed("w", open)
	for range 2 {
		r, size, err := in.Open(context.Background())
		if err != nil || size != 3 {
			t.Fatalf("Open: %d %v", size, err)
		}
		if b, _ := io.ReadAll(r); string(b) != "wit" {
			t.Errorf("read %q", b)
		}
	}
	if opens != 2 || closes != 1 || back != 3 {
		t.Errorf("%d opens, %d closes, %d bytes given back; want 2, 1, 3", opens, closes, back)
	}
	in.Release()
	if closes != 2 || back != 6 {
		t.Errorf("after Release: %d closes, %d bytes given back; want 2, 6", closes, back)
	}
	if _, _, err := in.Open(context.Background()); !errors.Is(err, ErrReleased) {
		t.Errorf("Open after Release: %v", err)
	}
	var late *Input
	late = Streamed("late", func(ctx context.Context) (io.ReadCloser, int64, *mem.Reservation, error) {
		r, n, h, err := open(ctx)
		late.Release()
		return r, n, h, err
	})
	if _, _, err := late.Open(context.Background()); !errors.Is(err, ErrReleased) || closes != 3 || back != 9 {
		t.Errorf("released during its open: %v, %d closes, %d back", err, closes, back)
	}
}

type closer struct {
	io.Reader
	n *int
}

func (c closer) Close() error { *c.n++; return nil }
