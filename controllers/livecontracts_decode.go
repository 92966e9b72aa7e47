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

package controllers

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
	"github.com/pdtopo/pdtopo/internal/livecontract"
)

// maxPodsInMessage bounds how many pods a decode source's message names.
const maxPodsInMessage = 3

// readDecode is the decode's live source: the contracts the pair's decode
// engines registered with their agents. Every reachable agent is asked
// (the fleet prober's bounds: 16 at a time, 5 s in all); they must agree on
// one contract, whose bytes are then read from the first pod and rank
// reporting it and checked against the SHA-256 it reported.
func (r *PDPairReconciler) readDecode(pair *pdv1.PDPair) liveReader {
	// The read runs after the reconcile returned: it keeps the pair's name
	// only, never the object the reconcile goes on writing.
	pair = &pdv1.PDPair{ObjectMeta: metav1.ObjectMeta{Namespace: pair.Namespace, Name: pair.Name}}
	return func(ctx context.Context) (*fetchedContract, error) {
		pods, reachable, err := r.decodePods(ctx, pair)
		if err != nil {
			return nil, err
		}
		if len(pods) == 0 {
			return nil, fmt.Errorf("no decode pod is bound to the pair (labels %s=%s, %s=%s in namespace %s): their engines register the decode contract with their agents",
				pdv1.LabelPDPair, pair.Name, pdv1.LabelRole, pdv1.RoleDecode, pair.Namespace)
		}
		probes := r.prober.probeAll(ctx, reachable)
		found := agreeOnContract(pods, reachable, probes)
		if found.err != nil {
			return nil, found.err
		}
		addr := agentProbeAddr(found.pod)
		raw, err := r.live.client.AgentContract(ctx, addr, found.rank.Rank, found.rank.SHA256)
		if err != nil {
			return nil, fmt.Errorf("pod %s: %s", found.pod.Name, livecontract.StatusOf(err))
		}
		return &fetchedContract{raw: raw, from: fmt.Sprintf("pod %s rank %d (%s)", found.pod.Name, found.rank.Rank, livecontract.AgentContractURL(addr, found.rank.Rank))}, nil
	}
}

// decodeContractFound is the contract the agents agree on: the first pod
// and rank reporting it, or why there is none.
type decodeContractFound struct {
	pod  *corev1.Pod
	rank livecontract.RankContract
	err  error
}

// agreeOnContract reads the agents' answers: the contracts they report,
// grouped by SHA-256.
func agreeOnContract(pods, reachable []*corev1.Pod, probes map[string]probeResult) decodeContractFound {
	type holder struct {
		pod   *corev1.Pod
		ranks []int
	}
	bySHA := map[string][]holder{}
	var order []string // SHA-256s in the order first seen
	var first = map[string]decodeContractFound{}
	var silent []string
	answered := 0
	for _, pod := range reachable {
		p := probes[pod.Name]
		if p.err == nil {
			p.err = checkRankContracts(p.info.EngineContracts)
		}
		if p.err != nil {
			silent = append(silent, fmt.Sprintf("%s (%v)", pod.Name, p.err))
			continue
		}
		answered++
		for _, c := range p.info.EngineContracts {
			if _, ok := bySHA[c.SHA256]; !ok {
				order = append(order, c.SHA256)
				first[c.SHA256] = decodeContractFound{pod: pod, rank: c}
			}
			hs := bySHA[c.SHA256]
			if len(hs) == 0 || hs[len(hs)-1].pod != pod {
				hs = append(hs, holder{pod: pod})
			}
			hs[len(hs)-1].ranks = append(hs[len(hs)-1].ranks, c.Rank)
			bySHA[c.SHA256] = hs
		}
	}
	switch {
	case len(order) == 1:
		return first[order[0]]
	case len(order) > 1:
		var parts []string
		for _, sha := range order {
			hs := bySHA[sha]
			var who []string
			for _, h := range hs[:min(len(hs), maxPodsInMessage)] {
				who = append(who, fmt.Sprintf("pod %s ranks %v", h.pod.Name, h.ranks))
			}
			if len(hs) > maxPodsInMessage {
				who = append(who, fmt.Sprintf("%d more pods", len(hs)-maxPodsInMessage))
			}
			parts = append(parts, fmt.Sprintf("%s… (%s, %d bytes)", sha[:12], strings.Join(who, ", "), first[sha].rank.Bytes))
		}
		return decodeContractFound{err: fmt.Errorf("the decode engines registered %d different contracts: %s; one plan set serves one decode contract: they must agree (a rollout in progress ends so)",
			len(order), strings.Join(parts, "; "))}
	}
	msg := fmt.Sprintf("none of the %d decode pods' agents reports an engine contract", len(pods))
	if answered > 0 {
		msg += fmt.Sprintf(": %d answered, their engines registered none yet (engines on the cache-contract wire register it at start; on the v1 wire they register none)", answered)
	}
	if n := len(pods) - len(reachable); n > 0 {
		msg += fmt.Sprintf("; %d have no IP or no %s container yet", n, pdv1.AgentContainerName)
	}
	if len(silent) > 0 {
		msg += fmt.Sprintf("; %d did not answer: %s", len(silent), strings.Join(silent[:min(len(silent), maxPodsInMessage)], "; "))
	}
	return decodeContractFound{err: errors.New(msg)}
}

// checkRankContracts refuses an agent's answer listing a contract no
// agent would (a malformed SHA-256, a size past 256 KiB) or one rank twice.
func checkRankContracts(cs []livecontract.RankContract) error {
	var ranks []int
	for _, c := range cs {
		if err := c.Check(); err != nil {
			return err
		}
		if slices.Contains(ranks, c.Rank) {
			return fmt.Errorf("engineContracts lists rank %d twice", c.Rank)
		}
		ranks = append(ranks, c.Rank)
	}
	return nil
}
