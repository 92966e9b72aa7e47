/*
Copyright 2026 The pdtopo Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package plansource

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/pdtopo/pdtopo/pkg/planstore"
	"github.com/pdtopo/pdtopo/pkg/transferplan"
)

// Dir is a directory where a PDPair's plan ConfigMaps (index and shards)
// are projected together, as the injected decode-pod sidecar mounts them.
type Dir struct {
	Path        string
	EngineRanks []int
	// SealDir, if set, is where the operator's seal Secret is mounted (a
	// volume of its own, which no ConfigMap can shadow): an index in Path
	// whose bytes are not the ones the seal names is refused, so a
	// ConfigMap projected under a plan name by someone other than the
	// operator is never loaded (see planstore.Seal).
	SealDir string
	// Signed, if set, is the operator's signature check: only an index
	// whose index.sig (projected beside it) the operator signed for this
	// pair and a generation no older than the one held is loaded.
	Signed *Signed
	// DecodeLayout, if set, is the decode layout the pod was admitted
	// under: only the plan sets made for it are loaded. Unset, the sets of
	// the current set's decode layout are.
	DecodeLayout *transferplan.Parallelism
}

func (d Dir) Describe() string {
	if d.Signed != nil {
		return "plan directory " + d.Path + " (signed for " + d.Signed.Namespace + "/" + d.Signed.PDPair + ")"
	}
	if d.SealDir != "" {
		return "plan directory " + d.Path + " (sealed by " + d.SealDir + ")"
	}
	return "plan directory " + d.Path
}

// Version changes when either directory's content may have changed.
func (d Dir) Version(context.Context) (string, error) {
	v, err := dirVersion(d.Path, planstore.IndexKey)
	if err != nil || d.SealDir == "" {
		return v, err
	}
	seal, err := dirVersion(d.SealDir, planstore.SealKey)
	if err != nil {
		return "", err
	}
	return v + " " + seal, nil
}

// dirVersion is the target of an atomic-writer directory's "..data" link,
// or for a plain directory the size and time of its file named key.
func dirVersion(dir, key string) (string, error) {
	target, err := os.Readlink(filepath.Join(dir, "..data"))
	if err == nil {
		return "data:" + target, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return "", err
	}
	st, err := os.Stat(filepath.Join(dir, key))
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("%s:%d:%d", key, st.Size(), st.ModTime().UnixNano()), nil
}

func (d Dir) Load(context.Context) (Plans, error) {
	if err := checkRanks(d.EngineRanks); err != nil {
		return Plans{}, err
	}
	opts := decodeOptions(d.DecodeLayout)
	var (
		got         planstore.EngineRankSets
		err         error
		setsRefused error // why plansets.json was not loaded beside the index
	)
	switch {
	case d.Signed != nil:
		got, setsRefused, err = d.loadSigned(opts)
	case d.SealDir == "":
		got, err = planstore.LoadEngineRankSetsFromDir(d.Path, d.EngineRanks, opts...)
	default:
		var seal planstore.Seal
		if seal, err = planstore.ReadSealDir(d.SealDir); err != nil {
			return Plans{}, err
		}
		got, err = oneSet(planstore.LoadSealedEngineRanksFromDir(d.Path, seal, d.EngineRanks, opts...))
	}
	if err != nil {
		return Plans{}, err
	}
	p := plansOfSets(got)
	p.SetsRefused = setsRefused
	return p, nil
}

// loadSigned loads every set the operator signed (plansets.sig), or, for a
// publication of one set or by an older operator, the index it signed.
// A plansets.json without plansets.sig beside it is not loaded, and that
// is said (refused): the operator signs every sets index it publishes.
func (d Dir) loadSigned(opts []planstore.LoadOption) (got planstore.EngineRankSets, setsRefused, err error) {
	st, err := d.Signed.sealOf(d.Path, planstore.ReadSetsSignatureDir)
	if planstore.ReasonOf(err) == planstore.ReasonMissingSignature {
		if st, err = d.Signed.sealOf(d.Path, planstore.ReadSignatureDir); err != nil {
			return planstore.EngineRankSets{}, nil, err
		}
		got, err := oneSet(planstore.LoadSealedEngineRanksFromDir(d.Path, st.Seal(), d.EngineRanks, opts...))
		if err != nil {
			return got, nil, err
		}
		d.Signed.loaded(st)
		if _, statErr := os.Stat(filepath.Join(d.Path, planstore.SetsKey)); statErr == nil {
			setsRefused = refused(planstore.ReasonMissingSignature, "%s is in %s without %s: the operator has not signed the plan sets", planstore.SetsKey, d.Path, planstore.SetsSignatureKey)
		}
		return got, setsRefused, nil
	}
	if err != nil {
		return planstore.EngineRankSets{}, nil, err
	}
	got, err = planstore.LoadSealedEngineRankSetsFromDir(d.Path, st.Seal(), d.EngineRanks, opts...)
	if err == nil {
		d.Signed.loaded(st)
	}
	return got, nil, err
}

// oneSet takes a publication's index alone as its one set (the loader
// has already held it to the pod's decode layout, planstore.ForDecodeLayout).
func oneSet(got planstore.EngineRanks, err error) (planstore.EngineRankSets, error) {
	if err != nil {
		return planstore.EngineRankSets{}, err
	}
	return planstore.EngineRankSets{PDPair: got.PDPair, Current: got.PlanHash, Sets: []planstore.EngineRanks{got}}, nil
}

func (d Dir) Notify(ctx context.Context, changed func()) error {
	if err := watchDir(ctx, d.Path, func(string) bool { return true }, changed); err != nil {
		return err
	}
	if d.SealDir == "" {
		return nil
	}
	return watchDir(ctx, d.SealDir, func(string) bool { return true }, changed)
}
