package fleet

import (
	"context"
	"fmt"
)

// Backlog is how many jobs wait in the queue for a worker, by priority
// (Priorities): each priority's consumer's messages not yet delivered to
// any worker. Jobs in a worker's hand are not counted, nor jobs handed back
// until they are due again (JetStream counts those pending an ack). Each
// priority is one round trip to the server, under ctx.
func (q *Queue) Backlog(ctx context.Context) (map[string]int, error) {
	out := make(map[string]int, len(Priorities))
	for i, c := range q.consumers {
		info, err := c.Info(ctx)
		if err != nil {
			return nil, fmt.Errorf("the queue's %s-priority backlog: %w", Priorities[i], err)
		}
		out[Priorities[i]] = int(info.NumPending)
	}
	return out, nil
}
