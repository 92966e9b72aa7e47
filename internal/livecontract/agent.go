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

package livecontract

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
	plancontract "github.com/pdtopo/pdtopo/pkg/transferplan/contract"
)

// MaxAgentInfoBytes caps an agent's /v1/agent answer (a few hundred bytes,
// a few KiB with 64 ranks' contracts listed).
const MaxAgentInfoBytes = 64 << 10

// MaxAgentContractBytes caps /v1/agent/contract: the engine's contract limit.
const MaxAgentContractBytes = plancontract.MaxBytes

// RankContract identifies the contract one engine rank registered with
// its agent, as /v1/agent's engineContracts lists it.
type RankContract struct {
	Rank   int    `json:"rank"`
	SHA256 string `json:"sha256"`
	Bytes  int    `json:"bytes"`
}

// Agent is the part of an agent's /v1/agent answer about contracts
// (pkg/receiver/localapi.AgentInfo writes the whole shape; decoded here
// so that readers stay free of the agent's cgo dependencies).
type Agent struct {
	URL       string         `json:"-"`
	Ranks     []int          `json:"ranks"`
	Contracts []RankContract `json:"engineContracts"`
}

// AgentURL is the /v1/agent URL of the agent whose probe address is addr.
func AgentURL(addr string) string { return "http://" + addr + pdv1.AgentInfoPath }

// AgentContractURL is the URL of rank's contract at the probe address addr.
func AgentContractURL(addr string, rank int) string {
	return "http://" + addr + pdv1.AgentContractPath + "?rank=" + strconv.Itoa(rank)
}

// Agent reads which contracts the engines of the agent at addr (its probe
// address, HOST:PORT) registered.
func (c *Client) Agent(ctx context.Context, addr string) (Agent, error) {
	url := AgentURL(addr)
	if err := CheckAddress(addr); err != nil {
		detail := "the probe address " + err.Error()
		return Agent{}, &Error{Reason: ReasonBadAddress, URL: url, Detail: detail, Public: detail}
	}
	body, err := c.get(ctx, url, MaxAgentInfoBytes)
	if err != nil {
		return Agent{}, err
	}
	return decodeAgent(url, body)
}

// decodeAgent decodes an agent's /v1/agent answer read from url.
func decodeAgent(url string, body []byte) (Agent, error) {
	a := Agent{URL: url}
	if err := decodeInfo(url, body, &a); err != nil {
		return Agent{}, err
	}
	for _, rc := range a.Contracts {
		if err := rc.Check(); err != nil {
			return Agent{}, &Error{Reason: ReasonMalformed, URL: url, Detail: err.Error(), Public: err.Error()}
		}
	}
	return a, nil
}

// AgentInfo decodes the /v1/agent answer of the agent at addr (its probe
// address) into info, a struct of the fields the caller reads. The answer
// is read through the size cap and decoded before anything of it is kept.
func (c *Client) AgentInfo(ctx context.Context, addr string, info any) error {
	url := AgentURL(addr)
	body, err := c.get(ctx, url, MaxAgentInfoBytes)
	if err != nil {
		return err
	}
	return decodeInfo(url, body, info)
}

func decodeInfo(url string, body []byte, info any) error {
	if err := json.Unmarshal(body, info); err != nil {
		return &Error{Reason: ReasonMalformed, URL: url, Detail: fmt.Sprintf("not the agent's answer: %v (it starts %s)", err, Excerpt(body)),
			Public: fmt.Sprintf("the answer (%d bytes) is not an agent's", len(body))}
	}
	return nil
}

// Check refuses what no agent reports: a SHA-256 that is not 64 hex
// digits, a size outside 1..MaxAgentContractBytes, a negative rank. Its
// error quotes nothing the agent sent but numbers.
func (rc RankContract) Check() error {
	if b, err := hex.DecodeString(rc.SHA256); err != nil || len(b) != sha256.Size {
		return fmt.Errorf("engineContracts: rank %d's sha256 (%d bytes) is not 64 hex digits", rc.Rank, len(rc.SHA256))
	}
	if rc.Bytes < 1 || rc.Bytes > MaxAgentContractBytes || rc.Rank < 0 {
		return fmt.Errorf("engineContracts: rank %d, %d bytes: a contract is 1..%d bytes of a rank ≥ 0", rc.Rank, rc.Bytes, MaxAgentContractBytes)
	}
	return nil
}

// AgentContract reads the contract rank's engine registered with the agent
// at addr. When want is not empty it is the SHA-256 /v1/agent reported; the
// bytes must have it (ReasonChanged otherwise: the engine registered again
// between the two reads).
func (c *Client) AgentContract(ctx context.Context, addr string, rank int, want string) ([]byte, error) {
	url := AgentContractURL(addr, rank)
	if err := CheckAddress(addr); err != nil {
		detail := "the probe address " + err.Error()
		return nil, &Error{Reason: ReasonBadAddress, URL: url, Detail: detail, Public: detail}
	}
	body, err := c.get(ctx, url, MaxAgentContractBytes)
	if ReasonOf(err) == ReasonHTTPStatus && isNoEngineContract(body) {
		return nil, &Error{Reason: ReasonNoContract, URL: url, Detail: fmt.Sprintf("the engine of rank %d registered no contract: %s", rank, Excerpt(body)),
			Public: fmt.Sprintf("the engine of rank %d registered no contract", rank)}
	}
	if err != nil {
		return nil, err
	}
	if len(body) == 0 {
		return nil, &Error{Reason: ReasonMalformed, URL: url, Detail: "an empty answer", Public: "an empty answer"}
	}
	sum := sha256.Sum256(body)
	if got := hex.EncodeToString(sum[:]); want != "" && got != want {
		// want passed Check: 64 hex digits, not free text.
		detail := fmt.Sprintf("the %d bytes have SHA-256 %s, /v1/agent reported %s", len(body), got[:12], short(want))
		return nil, &Error{Reason: ReasonChanged, URL: url, Detail: detail, Public: detail}
	}
	return body, nil
}

func isNoEngineContract(body []byte) bool {
	var e struct {
		Error struct{ Code string } `json:"error"`
	}
	return json.Unmarshal(body, &e) == nil && e.Error.Code == "NoEngineContract"
}

func short(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}
