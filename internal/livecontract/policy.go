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
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"
)

// AddressPolicy is an allowlist of the addresses a client may reach:
// address ranges (CIDRs) and Kubernetes Services. The manager restricts
// its bootstrap reads with one (--bootstrap-address-allowlist), so that
// whoever may create a PDPair can make it connect only where the cluster's
// operator chose. The zero value (and nil) allows every address.
type AddressPolicy struct {
	prefixes []netip.Prefix
	services []serviceName
}

// serviceName is NAMESPACE/NAME; NAME "*" is every Service of NAMESPACE.
type serviceName struct{ namespace, name string }

// ParseAddressPolicy reads the allowlist's entries: CIDRs ("10.0.0.0/8",
// "fd00::/8"), single IPs, and Services as NAMESPACE/NAME or NAMESPACE/*.
func ParseAddressPolicy(entries []string) (*AddressPolicy, error) {
	p := &AddressPolicy{}
	for _, e := range entries {
		e = strings.TrimSpace(e)
		if e == "" {
			continue
		}
		if pr, err := netip.ParsePrefix(e); err == nil {
			p.prefixes = append(p.prefixes, pr.Masked())
			continue
		}
		if ip, err := netip.ParseAddr(e); err == nil {
			p.prefixes = append(p.prefixes, netip.PrefixFrom(ip, ip.BitLen()))
			continue
		}
		ns, name, ok := strings.Cut(e, "/")
		if !ok || !isLabel(ns) || (name != "*" && !isLabel(name)) {
			return nil, fmt.Errorf("%q is neither a CIDR, an IP, NAMESPACE/SERVICE nor NAMESPACE/*", e)
		}
		p.services = append(p.services, serviceName{ns, name})
	}
	return p, nil
}

// isLabel: a DNS label as Kubernetes names namespaces and Services.
func isLabel(s string) bool {
	if s == "" || len(s) > 63 || s[0] == '-' || s[len(s)-1] == '-' {
		return false
	}
	for _, c := range s {
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '-' {
			return false
		}
	}
	return true
}

// Empty: the policy allows every address.
func (p *AddressPolicy) Empty() bool { return p == nil || len(p.prefixes)+len(p.services) == 0 }

// String lists the entries, as the flag takes them.
func (p *AddressPolicy) String() string {
	if p.Empty() {
		return ""
	}
	var out []string
	for _, pr := range p.prefixes {
		out = append(out, pr.String())
	}
	for _, s := range p.services {
		out = append(out, s.namespace+"/"+s.name)
	}
	return strings.Join(out, ",")
}

// AllowsIP: ip is in one of the ranges.
func (p *AddressPolicy) AllowsIP(ip netip.Addr) bool {
	if p.Empty() {
		return true
	}
	ip = ip.Unmap()
	for _, pr := range p.prefixes {
		if pr.Contains(ip) {
			return true
		}
	}
	return false
}

// AllowsService: host names an allowed Service, as cluster DNS spells it
// (NAME.NAMESPACE, NAME.NAMESPACE.svc, NAME.NAMESPACE.svc.CLUSTER-DOMAIN).
func (p *AddressPolicy) AllowsService(host string) bool {
	labels := strings.Split(strings.TrimSuffix(strings.ToLower(host), "."), ".")
	if len(labels) < 2 || (len(labels) > 2 && labels[2] != "svc") {
		return false
	}
	for _, s := range p.services {
		if labels[1] == s.namespace && (s.name == "*" || labels[0] == s.name) {
			return true
		}
	}
	return false
}

// Check says whether addr (HOST:PORT) may be reached without resolving
// it: an IP in a range, or an allowed Service. A DNS name that is neither
// is decided when it is dialed (its addresses must be in a range); Check
// refuses it at once when the policy has no range.
func (p *AddressPolicy) Check(addr string) error {
	if p.Empty() {
		return nil
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return err
	}
	if ip, err := netip.ParseAddr(host); err == nil {
		if p.AllowsIP(ip) {
			return nil
		}
		return fmt.Errorf("%w: %s is in none of the allowed ranges", errNotAllowed, host)
	}
	if p.AllowsService(host) || len(p.prefixes) > 0 {
		return nil
	}
	return fmt.Errorf("%w: %s is not an allowed Service", errNotAllowed, host)
}

// errNotAllowed marks a refusal of the policy.
var errNotAllowed = errors.New("not allowed by the address allowlist")

// dialer dials only what the policy allows: IPs in a range, allowed
// Services by name, and other names at an address in a range they resolve
// to (resolved here, so that the address checked is the one dialed).
func (p *AddressPolicy) dialer(d *net.Dialer) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		if err := p.Check(addr); err != nil {
			return nil, err
		}
		host, port, _ := net.SplitHostPort(addr)
		if _, err := netip.ParseAddr(host); err == nil || p.AllowsService(host) {
			return d.DialContext(ctx, network, addr)
		}
		ips, err := net.DefaultResolver.LookupNetIP(ctx, "ip", host)
		if err != nil {
			// Reported as a refusal, not as a failed lookup: the status
			// does not tell which names resolve.
			return nil, fmt.Errorf("%w: %s resolves to no allowed address", errNotAllowed, host)
		}
		for _, ip := range ips {
			if p.AllowsIP(ip) {
				return d.DialContext(ctx, network, net.JoinHostPort(ip.Unmap().String(), port))
			}
		}
		return nil, fmt.Errorf("%w: %s resolves to no allowed address", errNotAllowed, host)
	}
}
