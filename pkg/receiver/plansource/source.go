package plansource

import (
	"context"
	"log/slog"
	"time"

	"github.com/pdtopo/pdtopo/pkg/receiver"
)

// Source loads this engine rank's plan. Version is cheap and changes when
// the content may have changed; Load does the work.
type Source interface {
	// Describe names the source in logs and errors.
	Describe() string
	Version(ctx context.Context) (string, error)
	Load(ctx context.Context) (receiver.PlanSnapshot, error)
}

// Loaded is a plan and the source version it was read at.
type Loaded struct {
	Snapshot receiver.PlanSnapshot
	Version  string
}

// Load reads the version, then the plan. Reading the version first means
// an update racing with the load is seen as a newer version by Watch.
func Load(ctx context.Context, src Source) (Loaded, error) {
	v, err := src.Version(ctx)
	if err != nil {
		return Loaded{}, err
	}
	snap, err := src.Load(ctx)
	if err != nil {
		return Loaded{}, err
	}
	return Loaded{Snapshot: snap, Version: v}, nil
}

// Watch polls src every interval. When its version differs from last's
// (a zero last means nothing is loaded yet) it loads the plan and, if its
// hash differs, calls apply. A source that cannot be read, or a plan that
// does not load or is refused, keeps the plan in use and is retried on the
// next tick (a refused plan only once its content changes). It returns when ctx ends.
func Watch(ctx context.Context, src Source, interval time.Duration, last Loaded, apply func(receiver.PlanSnapshot) error, log *slog.Logger) {
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		if v, err := src.Version(ctx); err != nil || v == last.Version {
			if err != nil {
				log.Warn("plan source unreadable; keeping the plan in use", "source", src.Describe(), "error", err)
			}
			continue
		}
		next, err := Load(ctx, src)
		if err != nil {
			log.Warn("plans do not load; keeping the plan in use", "source", src.Describe(), "error", err)
			continue
		}
		if next.Snapshot.Hash != last.Snapshot.Hash || last.Version == "" {
			if err := apply(next.Snapshot); err != nil {
				log.Error("new plan refused; keeping the plan in use", "source", src.Describe(), "hash", next.Snapshot.Hash, "error", err)
				last.Version = next.Version // the same content would be refused again
				continue
			}
			log.Info("route plan loaded", "source", src.Describe(), "hash", next.Snapshot.Hash)
		}
		last = next
	}
}
