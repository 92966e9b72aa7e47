package plansource

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/pdtopo/pdtopo/pkg/planstore"
	"github.com/pdtopo/pdtopo/pkg/receiver"
)

// Dir is a directory where a PDPair's plan ConfigMaps (index and shards)
// are projected together.
type Dir struct {
	Path       string
	EngineRank int
}

func (d Dir) Describe() string { return "plan directory " + d.Path }

// Version follows the kubelet's atomic writer: the visible files are
// symlinks into "..data", a symlink swapped to a new timestamped directory
// on every update, so its target names the content. A plain directory
// (no "..data") is versioned by its index file's size and time.
func (d Dir) Version(context.Context) (string, error) {
	target, err := os.Readlink(filepath.Join(d.Path, "..data"))
	if err == nil {
		return "data:" + target, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return "", err
	}
	st, err := os.Stat(filepath.Join(d.Path, planstore.IndexKey))
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("index:%d:%d", st.Size(), st.ModTime().UnixNano()), nil
}

func (d Dir) Load(context.Context) (receiver.PlanSnapshot, error) {
	plan, layout, hash, err := planstore.LoadEngineRankFromDir(d.Path, d.EngineRank)
	if err != nil {
		return receiver.PlanSnapshot{}, err
	}
	return receiver.PlanSnapshot{Layout: layout, Plan: plan, Hash: hash}, nil
}
