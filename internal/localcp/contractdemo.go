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

package localcp

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
	kvcontract "github.com/pdtopo/pdtopo/pkg/kvwire/contract"
	"github.com/pdtopo/pdtopo/pkg/receiver"
	"github.com/pdtopo/pdtopo/pkg/receiver/agentclient"
)

// rankEngine is what one demo engine rank registers and requests.
type rankEngine struct {
	info receiver.EngineInfo
	req  agentclient.Request
}

// specContract reads one role's contract from the pair's spec: inline, or
// the ConfigMap key it names.
func specContract(ctx context.Context, c client.Client, ns, role string, src *pdv1.CacheContractSource) ([]byte, error) {
	switch {
	case src == nil:
		return nil, fmt.Errorf("spec.cacheContracts.%s is not set: the demo plays both roles from the spec's contracts", role)
	case src.Inline != "":
		return []byte(src.Inline), nil
	case src.ConfigMapKeyRef != nil:
		var cm corev1.ConfigMap
		ref := src.ConfigMapKeyRef
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: ref.Name}, &cm); err != nil {
			return nil, fmt.Errorf("spec.cacheContracts.%s.configMapKeyRef: %w", role, err)
		}
		if v, ok := cm.Data[ref.Key]; ok {
			return []byte(v), nil
		}
		if v, ok := cm.BinaryData[ref.Key]; ok {
			return v, nil
		}
		return nil, fmt.Errorf("spec.cacheContracts.%s.configMapKeyRef: ConfigMap %s/%s has no key %q", role, ns, ref.Name, ref.Key)
	}
	return nil, fmt.Errorf("spec.cacheContracts.%s names no contract", role)
}

// demoManifest is a block manifest the decode contract accepts, as the
// engine would build for a prompt of one prefix granule: per group, the
// blocks its policy selects, from block id 1. It is checked as the agent
// will check it.
func demoManifest(decodeContract []byte) ([]byte, error) {
	layout, err := kvcontract.ManifestLayoutFromContract(decodeContract)
	if err != nil {
		return nil, fmt.Errorf("the decode contract: %w", err)
	}
	m := kvcontract.Manifest{PrefixLen: 0, PromptLen: layout.PrefixGranularity}
	for _, g := range layout.Groups {
		n := g.SlotCount(m.PrefixLen, m.PromptLen)
		if n >= g.PageCount {
			return nil, fmt.Errorf("group %q has %d pages, too few for a %d-token prompt", g.GroupID, g.PageCount, m.PromptLen)
		}
		mg := kvcontract.ManifestGroup{GroupID: g.GroupID}
		for id := int64(1); id <= n; id++ {
			mg.BlockIDs = append(mg.BlockIDs, id)
		}
		m.Groups = append(m.Groups, mg)
	}
	raw, err := m.WireBytes()
	if err != nil {
		return nil, err
	}
	if _, err := kvcontract.ValidateManifest(raw, &layout); err != nil {
		return nil, fmt.Errorf("the demo's manifest does not fit the decode contract: %w", err)
	}
	return raw, nil
}

// contractEngines are the demo's engine ranks of a contract pair: each
// registers a (never dereferenced) arena and the decode contract, and every
// room carries the demo manifest.
func contractEngines(decodeContract []byte, ranks []int) (map[int]rankEngine, error) {
	manifest, err := demoManifest(decodeContract)
	if err != nil {
		return nil, err
	}
	out := map[int]rankEngine{}
	for _, r := range ranks {
		out[r] = rankEngine{
			info: receiver.EngineInfo{SessionID: "127.0.0.1:" + strconv.Itoa(17000+r), ArenaPtr: uint64(0x7f0000000000) + uint64(r)<<32, Contract: decodeContract},
			req:  agentclient.Request{Manifest: manifest},
		}
	}
	return out, nil
}

// peerArgs are prefill-peer's arguments for the pair: the pair's manifest
// for a pair judged from its geometry, the world size and the prefill
// contract for one judged from its contracts (fromContracts).
func peerArgs(pair *pdv1.PDPair, fromContracts bool, manifest, contractFile string) ([]string, error) {
	if !fromContracts {
		return []string{"-f", manifest}, nil
	}
	if contractFile == "" {
		return nil, errors.New("no prefill contract")
	}
	dp := int32(1)
	if pair.Spec.Prefill.DataParallelSize != nil {
		dp = *pair.Spec.Prefill.DataParallelSize
	}
	return []string{"--tp", strconv.Itoa(int(pair.Spec.Prefill.TensorParallelSize)), "--dp", strconv.Itoa(int(dp)), "--contract", contractFile}, nil
}
