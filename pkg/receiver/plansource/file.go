package plansource

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/pdtopo/pdtopo/pkg/receiver"
	"github.com/pdtopo/pdtopo/pkg/transferplan"
)

// maxPlanFile caps a plan file: the plans of 1024 decode ranks with
// hundreds of buffers fit well under it.
const maxPlanFile = 256 << 20

// File is a plan set written by `pdtopo plan -o json`.
type File struct {
	Path       string
	EngineRank int
}

func (f File) Describe() string { return "plan file " + f.Path }

// Version is the hash of the file's bytes.
func (f File) Version(context.Context) (string, error) {
	raw, err := readCapped(f.Path)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:]), nil
}

func (f File) Load(context.Context) (receiver.PlanSnapshot, error) {
	raw, err := readCapped(f.Path)
	if err != nil {
		return receiver.PlanSnapshot{}, err
	}
	set, err := DecodePlanSet(raw)
	if err != nil {
		return receiver.PlanSnapshot{}, fmt.Errorf("%s: %w", f.Path, err)
	}
	snap, err := receiver.SnapshotFor(set, f.EngineRank)
	if err != nil {
		return receiver.PlanSnapshot{}, fmt.Errorf("%s: %w", f.Path, err)
	}
	return snap, nil
}

// DecodePlanSet reads a plan set strictly: unknown fields are refused, so a
// file in another format is not taken for an empty plan.
func DecodePlanSet(raw []byte) (*transferplan.PlanSet, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	var set transferplan.PlanSet
	if err := dec.Decode(&set); err != nil {
		return nil, fmt.Errorf("not a plan set (pdtopo plan -o json): %v", err)
	}
	if len(set.Plans) == 0 {
		return nil, fmt.Errorf("the plan set has no plans")
	}
	return &set, nil
}

func readCapped(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	raw, err := io.ReadAll(io.LimitReader(f, maxPlanFile+1))
	if err != nil {
		return nil, err
	}
	if len(raw) > maxPlanFile {
		return nil, fmt.Errorf("%s is longer than %d bytes", path, maxPlanFile)
	}
	return raw, nil
}
