package stream

import (
	"context"
	"strings"
	"testing"
)

// A partition entry is read as strictly as a job line (unknown fields
// refused), and partition i is the job "ID/i" of the request's circuit and
// the entry's witness.
func TestPartitionLines(t *testing.T) {
	var got []Line
	err := ReadEach(context.Background(), strings.NewReader(
		`{"id":"r1","circuit":"bits","partitions":[{"witness":"w0"},{"generate":{"seed":3}}]}`+"\n"+
			`{"id":"r2","partitions":[{"witnes":"w0"}]}`+"\n"+
			`{"id":"r3","partitions":[]}`+"\n"),
		func(l Line) bool { got = append(got, l); return true }, ReadOptions{})
	if err != nil || len(got) != 3 {
		t.Fatalf("%d lines, %v", len(got), err)
	}
	r := got[0].Request
	if got[0].Err != nil || !r.IsPartitioned() || len(r.Partitions) != 2 {
		t.Fatalf("r1: %+v %v", r, got[0].Err)
	}
	p0, p1 := r.Partition(0), r.Partition(1)
	if p0.ID != "r1/0" || p0.Circuit != "bits" || p0.Witness != "w0" || p0.IsPartitioned() {
		t.Errorf("partition 0: %+v", p0)
	}
	if p1.ID != "r1/1" || p1.Generate == nil || p1.Generate.Seed != 3 || p1.Witness != "" {
		t.Errorf("partition 1: %+v", p1)
	}
	if ValidID(p0.ID) {
		t.Errorf("a partition's id %q is a valid single id: the two could collide", p0.ID)
	}
	if got[1].Err == nil || !strings.Contains(got[1].Err.Error(), `unknown field "witnes"`) {
		t.Errorf("r2: %v", got[1].Err)
	}
	if got[2].Err != nil || !got[2].Request.IsPartitioned() {
		t.Errorf("r3 (no partitions) must reach the engine as a request, to be refused there: %+v %v", got[2].Request, got[2].Err)
	}
	if err := got[2].Request.CheckPartitions(DefaultMaxPartitions); err == nil || !strings.Contains(err.Error(), "none given") {
		t.Errorf("r3: %v", err)
	}
	single := Request{ID: "j1", Witness: "w"}
	if single.IsPartitioned() {
		t.Error("a single job is partitioned")
	}
}
